// Every 500 logs its cause exactly once on the "api" logger: a failing engine
// (decorating a real in-memory one) forces the 500s, a ring-buffer sink counts
// the lines.
#include "api_test_util.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "forwarding_engine.h"
#include "storage/engine.h"

namespace tablestone::api::testing {
namespace {

// Forwards to `inner`, except that entity reads and writes fail with an I/O error.
class FailingEngine : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  using storage::Engine::GetEntity;
  StatusOr<model::Entity> GetEntity(const storage::TableInfo&, std::string_view, std::string_view,
                                    ReadWait) override {
    return Status::IoError("injected read failure");
  }
  using storage::Engine::Write;
  storage::WriteResult Write(const storage::TableInfo&, std::span<const model::WriteOp> ops, ReadWait) override {
    storage::WriteResult result;
    result.status = Status::IoError("injected write failure");
    result.failed_index = ops.size() - 1;
    return result;
  }
};

class ErrorLogTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    CreateTable("logged");
    failing_ = std::make_unique<FailingEngine>(*engine_);
    ApiOptions options;
    options.accounts = {{kAccount, {kKey}}};
    options.allow_anonymous = true;
    handler_ = MakeApiHandler(*failing_, *executor_, options);

    previous_ = spdlog::get("api");
    spdlog::drop("api");
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    auto logger = std::make_shared<spdlog::logger>("api", sink_);
    spdlog::register_logger(logger);
  }
  void TearDown() override {
    spdlog::drop("api");
    if (previous_) spdlog::register_logger(previous_);
    handler_.reset();
  }
  std::vector<std::string> Lines() { return sink_->last_formatted(); }

  std::unique_ptr<FailingEngine> failing_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(ErrorLogTest, A500IsLoggedOnceWithOperationTableAndCause) {
  auto r = Send("GET", "/logged(PartitionKey='p',RowKey='r')");
  ASSERT_EQ(r.result_int(), 500) << r.body();
  EXPECT_EQ(ErrorCode(r), "InternalError");
  // The client sees the generic text, never the engine's.
  EXPECT_EQ(r.body().find("injected"), std::string::npos) << r.body();
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("GetEntity"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("logged"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("IoError: injected read failure"), std::string::npos) << lines[0];
}

TEST_F(ErrorLogTest, AFailedOperationOfABatchIsLoggedOnce) {
  const std::string boundary = "batch_1";
  const std::string changeset = "changeset_1";
  std::string body = "--" + boundary + "\r\nContent-Type: multipart/mixed; boundary=" + changeset + "\r\n\r\n";
  for (int i = 0; i < 2; ++i) {
    body += "--" + changeset +
            "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
            "POST http://127.0.0.1:10002/" + std::string(kAccount) +
            "/logged HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\n\r\n"
            "{\"PartitionKey\":\"p\",\"RowKey\":\"r" + std::to_string(i) + "\"}\r\n";
  }
  body += "--" + changeset + "--\r\n--" + boundary + "--\r\n";
  auto r = Send("POST", "/$batch", body, {{"Content-Type", "multipart/mixed; boundary=" + boundary}});
  ASSERT_EQ(r.result_int(), 202) << r.body();
  EXPECT_NE(r.body().find("1:The server encountered an internal error"), std::string::npos) << r.body();
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("injected write failure"), std::string::npos) << lines[0];
}

TEST_F(ErrorLogTest, ClientErrorsAreNotLogged) {
  auto r = Send("GET", "/missing(PartitionKey='p',RowKey='r')");
  EXPECT_EQ(r.result_int(), 404);
  EXPECT_TRUE(Lines().empty());
}

}  // namespace
}  // namespace tablestone::api::testing
