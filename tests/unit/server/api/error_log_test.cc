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

#include "storage/engine.h"

namespace tablestone::api::testing {
namespace {

// Forwards to `inner`, except that entity reads and writes fail with an I/O error.
class FailingEngine : public storage::Engine {
 public:
  explicit FailingEngine(storage::Engine& inner) : inner_(inner) {}
  Status Close() override { return inner_.Close(); }
  StatusOr<storage::TableInfo> CreateTable(std::string_view account, std::string_view name) override {
    return inner_.CreateTable(account, name);
  }
  Status DeleteTable(std::string_view account, std::string_view name) override {
    return inner_.DeleteTable(account, name);
  }
  StatusOr<storage::TableInfo> GetTable(std::string_view account, std::string_view name) override {
    return inner_.GetTable(account, name);
  }
  StatusOr<storage::TableListResult> ListTables(std::string_view account,
                                                const storage::TableListSpec& spec) override {
    return inner_.ListTables(account, spec);
  }
  StatusOr<model::Entity> GetEntity(const storage::TableInfo&, std::string_view, std::string_view) override {
    return Status::IoError("injected read failure");
  }
  storage::WriteResult Write(const storage::TableInfo&, std::span<const model::WriteOp> ops) override {
    storage::WriteResult result;
    result.status = Status::IoError("injected write failure");
    result.failed_index = ops.size() - 1;
    return result;
  }
  StatusOr<model::ScanResult> Scan(const storage::TableInfo& table, const model::ScanSpec& spec) override {
    return inner_.Scan(table, spec);
  }
  Status PutAccountMeta(std::string_view account, std::string_view key, std::string_view value) override {
    return inner_.PutAccountMeta(account, key, value);
  }
  StatusOr<std::optional<std::string>> GetAccountMeta(std::string_view account, std::string_view key) override {
    return inner_.GetAccountMeta(account, key);
  }
  Status PutTableAcl(const storage::TableInfo& table, std::string_view value) override {
    return inner_.PutTableAcl(table, value);
  }
  StatusOr<std::string> GetTableAcl(const storage::TableInfo& table) override { return inner_.GetTableAcl(table); }
  Status Submit(storage::WorkLane lane, storage::WorkExecutor::Task task) override {
    return inner_.Submit(lane, std::move(task));
  }
  bool CanWriteWithoutWaiting() override { return inner_.CanWriteWithoutWaiting(); }
  void AwaitDurable(std::function<void(Status)> done) override { inner_.AwaitDurable(std::move(done)); }
  uint64_t VisibleMark() override { return inner_.VisibleMark(); }
  uint64_t DurableMark() override { return inner_.DurableMark(); }
  Status SyncWal() override { return inner_.SyncWal(); }
  Stats GetStats() override { return inner_.GetStats(); }

 private:
  storage::Engine& inner_;
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
    handler_ = MakeApiHandler(*failing_, options);

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
