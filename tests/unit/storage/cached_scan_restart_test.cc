// The scan cache across a close and an open, and the builder's priority
// against the queries that meet its builds: the partitions cached at a clean
// close are built again after the next open, and a query waits only for a
// build at its own priority (docs/architecture.md, "Threads and priorities").
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "storage/engine.h"
#include "storage/sync_point.h"
#include "storage/thread_priority.h"
#include "tests/unit/storage/cached_scan_test_util.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using namespace cached_scan_test;  // NOLINT(build/namespaces): the fixture's names

class CachedScanRestartTest : public CachedScanTest {
 protected:
  // Partition "p" (200 rows) cached, then the engine closed and opened again
  // with its builder held where the restore of "p" starts (the caller keeps a
  // ReleaseAtExit). *want: p's rows; *around: ReadAround's count before.
  void ReopenWithTheRestoreOfPHeld(std::vector<Page>* want, uint64_t* around) {
    ASSERT_TRUE(InsertRows(200));
    *want = Drain(1, p_only_);
    ASSERT_TRUE(DrainUntilCached(p_only_, *want));
    const uint64_t started = sync_points_->Count("ScanCacheBuilder::BuildStarted");
    *around = sync_points_->Count("ScanCacheBuilder::ReadAround");
    sync_points_->Hold("ScanCacheBuilder::BuildStarted");
    ASSERT_NO_FATAL_FAILURE(ReopenCached());
    ASSERT_TRUE(sync_points_->WaitFor("ScanCacheBuilder::BuildStarted", started + 1));
  }

  // Drains "p" on a thread of its own (lowered to `nice` if set) while the
  // restore is held, releases the restore 100 ms later and returns the
  // drain's pages; *waited: the drain had not ended by the release.
  std::vector<Page> DrainBesideTheHeldRestore(std::optional<int> nice, bool* waited) {
    std::atomic<bool> done{false};
    std::vector<Page> got;
    std::thread scanner([&] {
      if (nice) EXPECT_TRUE(SetThreadNice(CurrentThreadId(), *nice));  // lowering is always allowed
      got = Drain(0, p_only_);
      done.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    *waited = !done.load();
    sync_points_->Release("ScanCacheBuilder::BuildStarted");
    scanner.join();
    return got;
  }

  const ScanSpec p_only_ = [] {
    ScanSpec spec;
    spec.ranges = {KeyRange{KeyBound{"p", std::nullopt, true}, KeyBound{"p", std::nullopt, true}}};
    return spec;
  }();
};

// The partitions cached at a clean close are built again after the next open,
// before any query reads them; a partition that was not cached is not.
TEST_P(CachedScanRestartTest, PartitionsCachedAtACleanCloseAreRebuiltAfterTheOpen) {
  if (GetParam()) GTEST_SKIP() << "an in-memory engine's data ends with its close";
  ASSERT_TRUE(InsertRows(200));
  ScanSpec p_only;
  p_only.ranges = {KeyRange{KeyBound{"p", std::nullopt, true}, KeyBound{"p", std::nullopt, true}}};
  const std::vector<Page> want = Drain(1, p_only);
  ASSERT_TRUE(DrainUntilCached(p_only, want));  // "p" cached
  for (int r = 0; r < 100; ++r) {  // "q": written, never read, so never cached
    ASSERT_TRUE(WriteBoth({Op(WriteKind::kInsert, MakeEntity("q", RowKey(r), {{"n", EdmValue::Int32(r)}}))}));
  }
  const uint64_t restores_before = sync_points_->Count("ScanCacheBuilder::RestoresDone");
  ASSERT_NO_FATAL_FAILURE(ReopenCached());
  // Every partition of the saved list has been built (or refused) once the
  // builder reports its restores done (bounded at 30 s: a busy machine).
  ASSERT_TRUE(sync_points_->WaitFor("ScanCacheBuilder::RestoresDone", restores_before + 1));
  EXPECT_EQ(engines_[0]->GetStats().scan_cache_entries, 1u);   // "p" only
  ASSERT_EQ(Drain(0, p_only), want);                          // the first read since the open: a hit
  EXPECT_EQ(engines_[0]->GetStats().scan_cache_hits, 1u);
  ScanSpec all;
  EXPECT_EQ(Drain(0, all), Drain(1, all));
}

// A restore is a build, and a build passes the engine's gate like a scan: the
// builder starts its restores only once the open has let the gate open, so
// one that got to run first is not refused and the partition lost from the
// cache. The open is held just before its gate opens, long enough for a
// builder started early to have run its restore.
TEST_P(CachedScanRestartTest, RestoresWaitForTheOpenToFinish) {
  if (GetParam()) GTEST_SKIP() << "an in-memory engine's data ends with its close";
  ASSERT_TRUE(InsertRows(200));
  ScanSpec p_only;
  p_only.ranges = {KeyRange{KeyBound{"p", std::nullopt, true}, KeyBound{"p", std::nullopt, true}}};
  ASSERT_TRUE(DrainUntilCached(p_only, Drain(1, p_only)));
  ASSERT_TRUE(engines_[0]->Close().ok());
  engines_[0].reset();
  const uint64_t restores_before = sync_points_->Count("ScanCacheBuilder::RestoresDone");
  const uint64_t opens_before = sync_points_->Count("RocksEngine::Open:GateOpening");
  sync_points_->Hold("RocksEngine::Open:GateOpening");
  auto opening = std::async(std::launch::async, [&] { return Engine::Open(OptionsOf(0)); });
  ASSERT_TRUE(sync_points_->WaitFor("RocksEngine::Open:GateOpening", opens_before + 1));
  // Bounded: a builder started before the gate opened finishes its refused
  // restore within this; one started after it cannot report yet.
  sync_points_->WaitFor("ScanCacheBuilder::RestoresDone", restores_before + 1, std::chrono::seconds(1));
  sync_points_->Release("RocksEngine::Open:GateOpening");
  auto e = opening.get();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  engines_[0] = std::move(e).value();
  ASSERT_TRUE(sync_points_->WaitFor("ScanCacheBuilder::RestoresDone", restores_before + 1));
  EXPECT_EQ(engines_[0]->GetStats().scan_cache_entries, 1u);
}

// No request waits on work that runs below its own priority
// (docs/architecture.md, "Threads and priorities"): a scan that meets the
// build of its partition running below it (here a restore by a builder set
// to nice 19) reads the partition from RocksDB instead of waiting for the
// build (it waited up to a second before, and on a busy machine a nice-19
// build got ~1.5% of a core). Checked to fail before the change (the drain
// took the one-second cap, no ReadAround).
TEST_P(CachedScanRestartTest, AScanDoesNotWaitForARestoreRunningBelowIt) {
  if (GetParam()) GTEST_SKIP() << "an in-memory engine's data ends with its close";
  if (ThreadNice(CurrentThreadId()) >= 19) GTEST_SKIP() << "the test already runs at nice 19";
  std::vector<Page> want;
  uint64_t around = 0;
  const ReleaseAtExit release{sync_points_.get()};
  scan_build_nice_ = 19;  // the reopened engine's builder runs its restores at 19
  ASSERT_NO_FATAL_FAILURE(ReopenWithTheRestoreOfPHeld(&want, &around));
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Page> got = Drain(0, p_only_);  // the restore of "p" is running, held
  const auto took = std::chrono::steady_clock::now() - t0;
  sync_points_->Release("ScanCacheBuilder::BuildStarted");
  EXPECT_EQ(got, want);
  EXPECT_EQ(sync_points_->Count("ScanCacheBuilder::ReadAround"), around + 1);
  EXPECT_EQ(engines_[0]->GetStats().scan_cache_hits, 0u);  // read from RocksDB
  EXPECT_LT(took, std::chrono::milliseconds(900)) << "the scan waited for the build";
}

// The restores after an open run at the priority of the builds queries ask
// for (EngineOptions::scan_build_nice, the long lane's), not at nice 19: the
// queries of the last run asked for them. So the first query after a restart
// that meets the restore of its partition waits for it and is served from
// the cache, and the builds it asks for do not queue behind a build that a
// busy machine leaves ~1.5% of a core (docs/benchmarks.md, "A busy
// machine"). Checked to fail before the change (restores at nice 19: the
// scan read around the restore, no cache hit).
TEST_P(CachedScanRestartTest, AScanAtTheDefaultPriorityWaitsForTheRestoreOfItsPartition) {
  if (GetParam()) GTEST_SKIP() << "an in-memory engine's data ends with its close";
  if (ThreadNice(CurrentThreadId()) >= 19) GTEST_SKIP() << "the test already runs at nice 19";
  std::vector<Page> want;
  uint64_t around = 0;
  const ReleaseAtExit release{sync_points_.get()};
  ASSERT_NO_FATAL_FAILURE(ReopenWithTheRestoreOfPHeld(&want, &around));
  bool waited = false;
  // At the test's own priority (the builder was started from this thread).
  const std::vector<Page> got = DrainBesideTheHeldRestore(std::nullopt, &waited);
  EXPECT_TRUE(waited) << "the scan read around the restore";
  EXPECT_EQ(got, want);
  EXPECT_EQ(sync_points_->Count("ScanCacheBuilder::ReadAround"), around);
  EXPECT_EQ(engines_[0]->GetStats().scan_cache_hits, 1u);  // served by the restore it waited for
}

// A scan that runs below the build's priority (here a thread at nice 19)
// waits for the build and is served from the cache: waiting costs less than
// reading the partition a second time.
TEST_P(CachedScanRestartTest, AScanAtTheBuildsPriorityWaitsForIt) {
  if (GetParam()) GTEST_SKIP() << "an in-memory engine's data ends with its close";
  std::vector<Page> want;
  uint64_t around = 0;
  const ReleaseAtExit release{sync_points_.get()};
  ASSERT_NO_FATAL_FAILURE(ReopenWithTheRestoreOfPHeld(&want, &around));
  bool waited = false;
  const std::vector<Page> got = DrainBesideTheHeldRestore(19, &waited);
  EXPECT_TRUE(waited) << "the scan did not wait for the build";
  EXPECT_EQ(got, want);
  EXPECT_EQ(sync_points_->Count("ScanCacheBuilder::ReadAround"), around);
  EXPECT_EQ(engines_[0]->GetStats().scan_cache_hits, 1u);  // served by the build it waited for
}

INSTANTIATE_TEST_SUITE_P(Modes, CachedScanRestartTest, ::testing::Bool(), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
