// A $batch that wraps a query is placed by what it holds (placement.h,
// Placement::kByBatchContent): it runs on the long lane, so while query
// batches run back to back, one loop per core, writes to another table are
// still acknowledged at once: an insert (answered on the I/O thread, then
// held for the log write) and a change set (run on the short lane). With the
// query batches on the short lane, each change set waited for a whole scan,
// and so did each insert while the log write was queued on that lane
// (issue 32).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "server/api/api_handler.h"
#include "storage/engine.h"
#include "tests/unit/protocol/cpu_time.h"
#include "tests/unit/server/api/api_test_util.h"
#include "tests/unit/server/api/forwarding_engine.h"

namespace tablestone::api {
namespace {

using namespace std::chrono_literals;

constexpr const char* kAccount = "devstoreaccount1";
// How long a scan of the "big" table holds its thread: a full page of a large
// table. Far above the bound the writes are held to.
constexpr auto kScanHold = 200ms;

// Scans of table "big" take kScanHold (a sleeping thread holds its lane as a
// scanning one does, without taking a core from the writes measured).
class SlowScanEngine final : public testing::ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  StatusOr<model::ScanResult> Scan(const storage::TableInfo& table, const model::ScanSpec& spec) override {
    if (table.name == "big") {
      scans_started.fetch_add(1);
      std::this_thread::sleep_for(kScanHold);
    }
    return inner_.Scan(table, spec);
  }
  std::atomic<int> scans_started{0};
};

class BatchPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tablestone-unit-batch-placement-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    storage::EngineOptions eo;
    eo.path = dir_.string();  // on disk: a write's acknowledgement waits for the log write
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    inner_ = std::move(engine).value();
    slow_ = std::make_unique<SlowScanEngine>(*inner_);
    ApiOptions options;
    options.allow_anonymous = true;
    options.accounts = {
        {kAccount, {"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}}};
    handler_ = MakeApiHandler(*slow_, *executor_, options);
    for (const char* table : {"big", "small"}) {
      http::Response created = Run(Request("POST", "/Tables", std::string(R"({"TableName":")") + table + "\"}"));
      ASSERT_EQ(created.result_int(), 201) << created.body();
    }
    http::Response row = Run(Request("POST", "/big", R"({"PartitionKey":"p","RowKey":"r","Num":1})"));
    ASSERT_EQ(row.result_int(), 201) << row.body();
  }
  void TearDown() override {
    executor_->Shutdown();
    handler_.reset();
    slow_.reset();
    inner_.reset();
    std::filesystem::remove_all(dir_);
  }

  static http::Request Request(std::string_view method, std::string_view target, std::string body = {},
                               std::string content_type = "application/json") {
    return testing::NoMetadataRequest(method, target, std::move(body), content_type);
  }
  http::Response Run(const http::Request& req) { return http::HandleAndWait(*handler_, req, http::RequestContext{}); }

  static http::Request QueryBatch() {
    return Request("POST", "/$batch",
                   "--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
                   "GET http://127.0.0.1:10002/devstoreaccount1/big()?$filter=Num%20eq%20-5 HTTP/1.1\r\n"
                   "Accept: application/json;odata=nometadata\r\n\r\n--batch_q--\r\n",
                   "multipart/mixed; boundary=batch_q");
  }
  static http::Request ChangeSet(int i) {
    const std::string e = "\r\n";
    std::string body = "--batch_w" + e + "Content-Type: multipart/mixed; boundary=changeset_w" + e + e +
                       "--changeset_w" + e + "Content-Type: application/http" + e +
                       "Content-Transfer-Encoding: binary" + e + e +
                       "POST http://127.0.0.1:10002/devstoreaccount1/small HTTP/1.1" + e +
                       "Accept: application/json;odata=nometadata" + e + "Content-Type: application/json" + e + e +
                       R"({"PartitionKey":"cs","RowKey":")" + std::to_string(i) + R"("})" + e +
                       "--changeset_w--" + e + "--batch_w--" + e;
    return Request("POST", "/$batch", std::move(body), "multipart/mixed; boundary=batch_w");
  }
  // The 99th percentile of `samples` (the value 99% of them do not exceed).
  static std::chrono::nanoseconds P99(std::vector<std::chrono::nanoseconds> samples) {
    std::sort(samples.begin(), samples.end());
    return samples[(samples.size() * 99 + 99) / 100 - 1];
  }

  std::filesystem::path dir_;
  std::unique_ptr<storage::Engine> inner_;
  std::unique_ptr<SlowScanEngine> slow_;
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<exec::WorkExecutor> executor_ = testing::TestLanes(10000);
};

TEST_F(BatchPlacementTest, WritesToAnotherTableAreAcknowledgedWhileQueryBatchesRun) {
  const unsigned loops = std::max(2u, std::thread::hardware_concurrency());
  std::atomic<bool> stop{false};
  std::atomic<int> batch_failures{0};
  std::vector<std::thread> batchers;
  for (unsigned i = 0; i < loops; ++i) {
    batchers.emplace_back([&] {
      const http::Request batch = QueryBatch();
      while (!stop.load()) {
        if (Run(batch).result_int() != 202) batch_failures.fetch_add(1);
      }
    });
  }
  // The query batches hold their lane before the first write.
  while (slow_->scans_started.load() == 0) std::this_thread::sleep_for(1ms);

  // At least 300 inserts and 100 change sets, and for as long as three scans
  // take to start: the writes span several query batches.
  const int scans_before = slow_->scans_started.load();
  // Bounded in time: with the writes held up behind the scans (the bug),
  // each takes a scan's time, and a few dozen show it.
  const auto give_up = std::chrono::steady_clock::now() + 15s;
  std::vector<std::chrono::nanoseconds> inserts;
  std::vector<std::chrono::nanoseconds> change_sets;
  for (int i = 0; inserts.size() < 300 || change_sets.size() < 100 || slow_->scans_started.load() < scans_before + 3;
       ++i) {
    ASSERT_LT(i, 100000) << "the query batches stopped starting scans";
    if (std::chrono::steady_clock::now() > give_up && inserts.size() >= 20 && change_sets.size() >= 10) break;
    const bool change_set = i % 4 == 3;  // every fourth write a change set, the rest inserts
    const http::Request write =
        change_set ? ChangeSet(i)
                   : Request("POST", "/small", R"({"PartitionKey":"p","RowKey":")" + std::to_string(i) + R"("})");
    const auto begin = std::chrono::steady_clock::now();
    const http::Response answer = Run(write);
    const auto took = std::chrono::steady_clock::now() - begin;
    ASSERT_EQ(answer.result_int(), change_set ? 202 : 201) << answer.body();
    (change_set ? change_sets : inserts).push_back(took);
  }
  stop.store(true);
  for (std::thread& t : batchers) t.join();
  EXPECT_EQ(batch_failures.load(), 0);

  // Generous for a shared 2-core machine, and still far below one scan.
  const auto bound = std::chrono::duration_cast<std::chrono::nanoseconds>(10ms * test_timing::kSanitizerSlowdown);
  ASSERT_LT(bound, kScanHold);
  EXPECT_LT(P99(inserts), bound) << "p99 of " << inserts.size() << " inserts: " << P99(inserts).count() / 1000
                                 << " us";
  EXPECT_LT(P99(change_sets), bound) << "p99 of " << change_sets.size()
                                     << " change sets: " << P99(change_sets).count() / 1000 << " us";
}

}  // namespace
}  // namespace tablestone::api
