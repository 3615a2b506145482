// The request trace's pieces (server/api/trace.h): redaction, JSON escaping,
// the line format, and the writer's queue (order, drops, switching files).
#include "server/api/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "protocol/error_body.h"

namespace tablestone::api {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class TempFile {
 public:
  TempFile() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("tablestone-trace-test-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

TEST(TraceJsonTest, EscapesControlsAndReplacesInvalidUtf8) {
  std::string out;
  protocol::AppendJsonString(out, std::string("a\"b\\c\n\x01") + "\xC3\xA9" + "\xFF" + "\xE2\x82",
                             protocol::InvalidUtf8::kReplace);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\xC3\xA9\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), "a\"b\\c\n\x01\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

http::Request MakeRequest(std::string body) {
  http::Request request(boost::beast::http::verb::post, "/devstoreaccount1/t?sv=1&sig=SECRETSIG", 11);
  request.set("Authorization", "SharedKey devstoreaccount1:SECRETSIGNATURE=");
  request.set("x-ms-version", "2019-02-02");
  request.set("Referer", "http://x/?sig=SECRETREF");
  request.body() = std::move(body);
  return request;
}

TEST(TraceLineTest, CarriesEveryFieldWithNullsWhereUnknown) {
  http::Request request = MakeRequest("{}");
  http::Response response(boost::beast::http::status::not_found, 11);
  response.set("x-ms-error-code", "ResourceNotFound");
  const auto start = std::chrono::steady_clock::now();
  RequestTrace trace;
  trace.received = start + std::chrono::microseconds(5);
  trace.auth = std::chrono::microseconds(7);
  trace.handler = std::chrono::microseconds(30);
  trace.storage = std::chrono::microseconds(20);
  trace.client = "127.0.0.1";
  trace.account = "devstoreaccount1";
  trace.operation = "GetEntity";
  trace.table = "t";
  trace.partition_key = "p\"k";
  const auto line = nlohmann::json::parse(
      FormatTraceLine(&trace, request, response, "id-1", start, start + std::chrono::microseconds(100), false));
  EXPECT_EQ(line["requestId"], "id-1");
  EXPECT_EQ(line["client"], "127.0.0.1");
  EXPECT_EQ(line["method"], "POST");
  EXPECT_EQ(line["url"], "/devstoreaccount1/t?sv=1&sig=REDACTED");
  EXPECT_EQ(line["account"], "devstoreaccount1");
  EXPECT_EQ(line["operation"], "GetEntity");
  EXPECT_EQ(line["table"], "t");
  EXPECT_EQ(line["partitionKey"], "p\"k");
  EXPECT_TRUE(line["rowKey"].is_null());
  EXPECT_EQ(line["status"], 404);
  EXPECT_EQ(line["errorCode"], "ResourceNotFound");
  EXPECT_EQ(line["totalUs"], 100);
  EXPECT_EQ(line["parseUs"], 5);
  EXPECT_EQ(line["authUs"], 7);
  EXPECT_EQ(line["storageUs"], 20);
  EXPECT_EQ(line["serialiseUs"], 10);
  EXPECT_EQ(line["waitUs"], 100 - 5 - 7 - 30);
  EXPECT_TRUE(line["rowsScanned"].is_null());
  EXPECT_TRUE(line["rowsReturned"].is_null());
  EXPECT_FALSE(line.contains("requestHeaders"));
  EXPECT_TRUE(std::string(line["time"]).ends_with("Z"));
  EXPECT_EQ(std::string(line["time"]).size(), std::string("2026-01-01T00:00:00.000Z").size());

  // Refused before the dispatcher knew anything: nulls, zero latencies.
  const auto bare = nlohmann::json::parse(FormatTraceLine(nullptr, request, response, "id-2", start, start, false));
  EXPECT_TRUE(bare["client"].is_null());
  EXPECT_TRUE(bare["account"].is_null());
  EXPECT_TRUE(bare["operation"].is_null());
  EXPECT_EQ(bare["parseUs"], 0);
}

TEST(TraceLineTest, BodiesAreCappedAndSecretsRedacted) {
  std::string body(kMaxTracedBody + 10, 'x');
  http::Request request = MakeRequest(body);
  http::Response response(boost::beast::http::status::ok, 11);
  response.set("x-ms-request-id", "id-3");
  response.body() = "{\"ok\":true}";
  const auto start = std::chrono::steady_clock::now();
  const std::string text = FormatTraceLine(nullptr, request, response, "id-3", start, start, true);
  EXPECT_EQ(text.find("SECRET"), std::string::npos) << text.substr(0, 400);
  const auto line = nlohmann::json::parse(text);
  EXPECT_EQ(line["requestHeaders"]["Authorization"], "REDACTED");
  EXPECT_EQ(line["requestHeaders"]["Referer"], "http://x/?sig=REDACTED");
  EXPECT_EQ(line["requestHeaders"]["x-ms-version"], "2019-02-02");
  EXPECT_EQ(std::string(line["requestBody"]).size(), kMaxTracedBody);
  EXPECT_EQ(line["requestBodyTruncated"], true);
  EXPECT_EQ(line["responseHeaders"]["x-ms-request-id"], "id-3");
  EXPECT_EQ(line["responseBody"], "{\"ok\":true}");
  EXPECT_EQ(line["responseBodyTruncated"], false);
}

// Issue 30 item 6: each encoding of a secret the security run found in the trace.
TEST(TraceLineTest, SecretsInEveryEncodingAreRedacted) {
  http::Request request{boost::beast::http::verb::post, "/devstoreaccount1/$batch?sv=1&%73ig=SECRETA&si%67=SECRETB", 11};
  request.set("Cookie", "SECRETC");
  request.set("Proxy-Authorization", "SECRETD");
  request.set("x-ms-copy-source-authorization", "Bearer SECRETE");
  request.body() =
      "--batch_1\r\nPOST http://h/devstoreaccount1/t?sig=SECRETF HTTP/1.1\r\nAuthorization: SharedKey a:SECRETG\r\n"
      "\r\n<link href=\"t()?sv=1&amp;sig=SECRETH&amp;se=1\"/>\r\n";
  http::Response response(boost::beast::http::status::forbidden, 11);
  response.body() = "The MAC signature found in the HTTP request 'SECRETI' is not the same as any computed signature.";
  const auto start = std::chrono::steady_clock::now();
  const std::string text = FormatTraceLine(nullptr, request, response, "id-4", start, start, true);
  EXPECT_EQ(text.find("SECRET"), std::string::npos) << text;
  EXPECT_NE(text.find(" HTTP/1.1"), std::string::npos) << text;  // the rest of the line stays
}

TEST(TraceWriterTest, WritesLinesInOrderAndSwitchesFiles) {
  TempFile tmp;
  TraceWriter writer;
  EXPECT_FALSE(writer.enabled());
  writer.Submit("dropped while off");  // neither written nor counted
  std::string error;
  ASSERT_TRUE(writer.Start(tmp.Path("one.jsonl"), true, &error)) << error;
  EXPECT_TRUE(writer.enabled());
  EXPECT_TRUE(writer.bodies());
  EXPECT_EQ(writer.path(), tmp.Path("one.jsonl"));
  for (int i = 0; i < 1000; ++i) writer.Submit("{\"n\":" + std::to_string(i) + "}");
  ASSERT_TRUE(writer.Start(tmp.Path("two.jsonl"), false, &error)) << error;  // drains the first
  writer.Submit("{\"n\":\"second\"}");
  writer.Stop();
  EXPECT_FALSE(writer.enabled());
  EXPECT_EQ(writer.path(), "");
  const auto one = ReadLines(tmp.Path("one.jsonl"));
  ASSERT_EQ(one.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(one[i], "{\"n\":" + std::to_string(i) + "}");
  EXPECT_EQ(ReadLines(tmp.Path("two.jsonl")), std::vector<std::string>{"{\"n\":\"second\"}"});
  EXPECT_EQ(writer.written(), 1001u);
  EXPECT_EQ(writer.dropped(), 0u);

  EXPECT_FALSE(writer.Start(tmp.Path("no/such/dir/x.jsonl"), false, &error));
  EXPECT_NE(error.find("cannot open trace file"), std::string::npos);
  EXPECT_FALSE(writer.enabled());
}

TEST(TraceWriterTest, AFullQueueDropsAndCountsInsteadOfWaiting) {
  TempFile tmp;
  std::string error;
  {
    TraceWriter none(0);  // every line finds the queue full
    ASSERT_TRUE(none.Start(tmp.Path("none.jsonl"), false, &error)) << error;
    for (int i = 0; i < 10; ++i) none.Submit("x");
    none.Stop();
    EXPECT_EQ(none.dropped(), 10u);
    EXPECT_EQ(none.written(), 0u);
    EXPECT_TRUE(ReadLines(tmp.Path("none.jsonl")).empty());
  }
  // Four threads against a queue of 8: every line is either written or counted.
  TraceWriter small(8);
  ASSERT_TRUE(small.Start(tmp.Path("small.jsonl"), false, &error)) << error;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&small] {
      for (int i = 0; i < 5000; ++i) small.Submit(std::string(100, 'y'));
    });
  }
  for (auto& th : threads) th.join();
  small.Stop();
  EXPECT_EQ(small.written() + small.dropped(), 20000u);
  EXPECT_EQ(ReadLines(tmp.Path("small.jsonl")).size(), small.written());
}

}  // namespace
}  // namespace tablestone::api
