// The fixture of the scan cache's engine tests (cached_scan_test.cc,
// cached_scan_restart_test.cc): an engine with the scan cache (engines_[0],
// with test hooks) beside one without it (engines_[1]), written alike, and
// drains of both to compare page by page.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "storage/engine.h"
#include "storage/sync_point.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage::cached_scan_test {

using model::EdmValue;
using model::Entity;
using model::EntityKey;
using model::KeyBound;
using model::KeyRange;
using model::ScanSpec;
using model::WriteKind;
using test_util::MakeEntity;
using test_util::Op;
using test_util::RowKey;

struct Page {
  std::vector<Entity> entities;
  std::optional<EntityKey> next;
  size_t rows_examined = 0;
  friend bool operator==(const Page&, const Page&) = default;
};

// Releases every held sync point when the test ends, before the fixture
// closes the engine (whose close joins a builder held at a point).
struct ReleaseAtExit {
  SyncPoints* points;
  ~ReleaseAtExit() { points->ReleaseAll(); }
};

class CachedScanTest : public ::testing::TestWithParam<bool> {
 protected:
  EngineOptions OptionsOf(int i) const {
    EngineOptions o;
    o.path = dir_.path() + (i == 0 ? "/cached" : "/plain");
    o.in_memory = GetParam();
    o.block_cache_bytes = 8u << 20;
    o.write_buffer_bytes = 8u << 20;
    o.scan_cache_bytes = i == 0 ? scan_cache_bytes_ : 0;
    o.warm_after_write = warm_after_write_;
    o.scan_build_nice = scan_build_nice_;
    if (i == 0) o.sync_points = sync_points_;
    return o;
  }

  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      auto e = Engine::Open(OptionsOf(i));
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      engines_[i] = std::move(e).value();
      auto t = engines_[i]->CreateTable("devstoreaccount1", "t");
      ASSERT_TRUE(t.ok());
      tables_[i] = *t;
    }
  }

  // Applies the same batch to both engines; returns whether it succeeded.
  bool WriteBoth(const std::vector<model::WriteOp>& ops) {
    WriteResult a = engines_[0]->Write(tables_[0], ops);
    WriteResult b = engines_[1]->Write(tables_[1], ops);
    EXPECT_EQ(a.status.code(), b.status.code());
    return a.status.ok();
  }

  // Every page of `spec` from engine i (timestamps zeroed: the engines commit
  // at different times; the "v" property is unique per write instead).
  // Rows 0..n-1 of partition "p", each with n = its number, in both engines.
  bool InsertRows(int n) {
    std::vector<model::WriteOp> ops;
    for (int r = 0; r < n; ++r) {
      ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", RowKey(r), {{"n", EdmValue::Int32(r)}})));
    }
    return WriteBoth(ops);
  }

  // Closes and reopens the cached engine (the builder then restores the
  // partitions cached at the close, at the asked builds' priority:
  // EngineOptions::scan_build_nice).
  void ReopenCached() {
    ASSERT_TRUE(engines_[0]->Close().ok());
    engines_[0].reset();
    auto e = Engine::Open(OptionsOf(0));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engines_[0] = std::move(e).value();
    auto t = engines_[0]->GetTable("devstoreaccount1", "t");
    ASSERT_TRUE(t.ok());
    tables_[0] = *t;
  }

  // Drains the cached engine until a drain is served from the cache (the
  // builds run in the background), each drain checked against `want`; false
  // if none was within ~5 s.
  bool DrainUntilCached(const ScanSpec& spec, const std::vector<Page>& want) {
    for (int i = 0; i < 500; ++i) {
      EXPECT_EQ(Drain(0, spec), want);
      if (engines_[0]->GetStats().scan_cache_hits > 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::vector<Page> Drain(int i, ScanSpec spec) {
    std::vector<Page> pages;
    for (int guard = 0; guard < 10000; ++guard) {
      auto r = engines_[i]->Scan(tables_[i], spec);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) break;
      pages.push_back(PageOf(*r));
      if (!r->next) break;
      spec.resume_from = *r->next;
    }
    return pages;
  }
  // A scan's page, timestamps zeroed (see Drain).
  static Page PageOf(model::ScanResult& r) {
    Page p{std::move(r.entities), r.next, r.rows_examined};
    for (Entity& e : p.entities) e.timestamp = 0;
    return p;
  }

  // Drain(i, spec) with every page first tried with a zero CPU budget and
  // suspended (ScanSpec::resumable), then continued without one; counts the
  // suspensions in *suspended.
  std::vector<Page> DrainSuspending(int i, ScanSpec spec, size_t* suspended) {
    std::vector<Page> pages;
    for (int guard = 0; guard < 10000; ++guard) {
      ScanSpec first = spec;
      first.resumable = true;
      model::ScanRun zero;
      zero.cpu_budget = std::chrono::nanoseconds(0);  // suspended at the first clock check
      auto r = engines_[i]->Scan(tables_[i], first, zero);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) break;
      std::shared_ptr<model::SuspendedScan> held = r->suspended;
      if (held != nullptr) {
        ++*suspended;
        EXPECT_TRUE(r->entities.empty());
        ScanSpec rest = spec;
        rest.resume_scan = held.get();
        r = engines_[i]->Scan(tables_[i], rest);
        EXPECT_TRUE(r.ok()) << r.status().ToString();
        if (!r.ok()) break;
        EXPECT_EQ(r->suspended, nullptr);
      }
      pages.push_back(PageOf(*r));
      if (!r->next) break;
      spec.resume_from = *r->next;
    }
    return pages;
  }

  std::chrono::milliseconds warm_after_write_{0};  // set before SetUp (WarmedScanTest)
  size_t scan_cache_bytes_ = 64u << 20;             // set before SetUp
  int scan_build_nice_ = 0;                         // set before an open (ReopenCached)
  test_util::TempDir dir_;
  // The cached engine's test hooks (storage/sync_point.h), kept across its reopen.
  std::shared_ptr<SyncPoints> sync_points_ = std::make_shared<SyncPoints>();
  std::unique_ptr<Engine> engines_[2];
  TableInfo tables_[2];
};

}  // namespace tablestone::storage::cached_scan_test
