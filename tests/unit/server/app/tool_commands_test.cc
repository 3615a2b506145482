// `tablestone reset` and `snapshot --from` (server/app/admin_tool_commands.cc)
// against a stub server that answers 200 with no body. tablestone's own admin
// routes always answer JSON; a server that does not must still get the
// command's own summary line, naming the endpoint.
#include "server/app/tool_commands.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tools/connection_string.h"

namespace tablestone::app {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Answers every request on a loopback port with "200 OK" and no body, then
// closes the connection.
class EmptyAnswerServer {
 public:
  EmptyAnswerServer() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~EmptyAnswerServer() {
    stop_ = true;
    asio::io_context io;  // wake the blocking accept
    tcp::socket wake(io);
    boost::system::error_code ec;
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  unsigned short Port() const { return acceptor_.local_endpoint().port(); }
  int Requests() const { return requests_.load(); }

 private:
  void Serve() {
    while (!stop_) {
      tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec || stop_) return;
      asio::streambuf request;
      asio::read_until(socket, request, "\r\n\r\n", ec);  // the admin commands here send no body
      if (ec) continue;
      ++requests_;
      asio::write(socket,
                  asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")), ec);
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

struct Output {
  int code = -1;
  std::string out, err;
};

Output RunTool(const std::vector<std::string>& args) {
  Output o;
  char* out_text = nullptr;
  char* err_text = nullptr;
  size_t out_size = 0, err_size = 0;
  std::FILE* out = open_memstream(&out_text, &out_size);
  std::FILE* err = open_memstream(&err_text, &err_size);
  o.code = RunToolCommand(args, out, err);
  std::fclose(out);
  std::fclose(err);
  o.out.assign(out_text, out_size);
  o.err.assign(err_text, err_size);
  std::free(out_text);
  std::free(err_text);
  return o;
}

std::string ConnectionString(unsigned short port) {
  return "AccountName=devstoreaccount1;AccountKey=" + std::string(tools::kDevKey) +
         ";TableEndpoint=http://127.0.0.1:" + std::to_string(port) + "/devstoreaccount1";
}

TEST(ToolCommandsAgainstAnEmptyAnswer, ResetSaysWhatItDeletedOnTheEndpoint) {
  EmptyAnswerServer server;
  const Output o = RunTool({"reset", "--from", ConnectionString(server.Port()), "--yes", "--json"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(server.Requests(), 1);
  // Before: "tablestone: snapshot of  written to  in N ms".
  const std::regex line("tablestone: reset deleted 0 tables of no account on http://127\\.0\\.0\\.1:" +
                        std::to_string(server.Port()) + "/devstoreaccount1 in [0-9]+\\.[0-9] ms\n");
  EXPECT_TRUE(std::regex_match(o.err, line)) << o.err;
  EXPECT_EQ(o.out, "");  // --json: no answer to print
}

TEST(ToolCommandsAgainstAnEmptyAnswer, SnapshotNamesTheEndpointAndTheNameAsked) {
  EmptyAnswerServer server;
  const Output o = RunTool({"snapshot", "--from", ConnectionString(server.Port()), "--to", "snap1", "--json"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(server.Requests(), 1);
  // Before: "tablestone: snapshot of  written to snap1 in N ms".
  const std::regex line("tablestone: snapshot of http://127\\.0\\.0\\.1:" + std::to_string(server.Port()) +
                        "/devstoreaccount1 written to snap1 in [0-9]+\\.[0-9] ms\n");
  EXPECT_TRUE(std::regex_match(o.err, line)) << o.err;
  EXPECT_EQ(o.out, "");
}

}  // namespace
}  // namespace tablestone::app
