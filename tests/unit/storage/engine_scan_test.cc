// Engine::Scan: ordering (Learn: query-entities), key ranges, resume tokens and page
// limits (Learn: query-timeout-and-pagination), snapshot consistency.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include <future>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/options_util.h>

#include "storage/model/filter_eval.h"
#include "storage/model/filter_expr.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using model::EdmValue;
using model::Entity;
using model::EntityKey;
using model::KeyBound;
using model::KeyRange;
using model::ScanSpec;
using model::WriteKind;
using test_util::MakeEntity;
using test_util::Op;

using Keys = std::vector<std::pair<std::string, std::string>>;

class EngineScanTest : public test_util::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    table_ = Create("scan");
    // Insert in an order unrelated to the expected result order.
    for (const char* pk : {"ab", "a", "b", "a0"}) {
      for (const char* rk : {"9", "10", "1", "09", "2"}) {
        Insert(pk, rk, {{"n", EdmValue::Int32(std::atoi(rk))}});
      }
    }
    // A neighbouring table whose rows must never leak into scans of table_.
    TableInfo other = Create("neighbour");
    ASSERT_TRUE(test_util::WriteOne(*engine_, other, Op(WriteKind::kInsert, MakeEntity("a", "1"))).status.ok());
  }

  void Insert(const std::string& pk, const std::string& rk, std::vector<model::Property> props = {}) {
    ASSERT_TRUE(test_util::WriteOne(*engine_, table_, Op(WriteKind::kInsert, MakeEntity(pk, rk, std::move(props))))
                    .status.ok());
  }

  // 1,000 rows "0000".."0999" in partition "big".
  void InsertBigPartition() {
    for (int i = 0; i < 1000; ++i) {
      char rk[8];
      std::snprintf(rk, sizeof rk, "%04d", i);
      Insert("big", rk);
    }
  }

  model::ScanResult Run(const ScanSpec& spec, const model::ScanRun& run = {}) {
    auto r = engine_->Scan(table_, spec, run);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : model::ScanResult{};
  }

  static Keys KeysOf(const std::vector<Entity>& es) {
    Keys out;
    for (const Entity& e : es) out.emplace_back(e.partition_key, e.row_key);
    return out;
  }

  static Keys Rows(const std::string& pk) {
    Keys out;
    for (const char* rk : {"09", "1", "10", "2", "9"}) out.emplace_back(pk, rk);
    return out;
  }

  static Keys Concat(std::initializer_list<Keys> parts) {
    Keys out;
    for (const Keys& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  }

  // Follows continuations until the scan completes; returns all keys.
  Keys Drain(ScanSpec spec, size_t* pages = nullptr) {
    Keys all;
    size_t n = 0;
    while (true) {
      model::ScanResult r = Run(spec);
      ++n;
      Keys k = KeysOf(r.entities);
      all.insert(all.end(), k.begin(), k.end());
      if (!r.next) break;
      spec.resume_from = *r.next;
      if (n > 10000) break;
    }
    if (pages) *pages = n;
    return all;
  }

  static KeyBound Point(std::string pk, std::string rk, bool inclusive) { return {std::move(pk), std::move(rk), inclusive}; }
  static KeyBound Partition(std::string pk, bool inclusive) { return {std::move(pk), std::nullopt, inclusive}; }

  TableInfo table_;
};

TEST_P(EngineScanTest, FullScanIsInServiceOrder) {
  model::ScanResult r = Run({});
  EXPECT_EQ(KeysOf(r.entities), Concat({Rows("a"), Rows("a0"), Rows("ab"), Rows("b")}));
  EXPECT_FALSE(r.next.has_value());
  EXPECT_EQ(r.rows_examined, 20u);
  EXPECT_EQ(r.entities[0].properties[0].value, EdmValue::Int32(9));  // "09"
}

TEST_P(EngineScanTest, PartitionRanges) {
  ScanSpec spec;
  spec.ranges = {KeyRange{Partition("a0", true), Partition("a0", true)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Rows("a0"));
  // (a, ab]: after all of "a" up to the end of "ab".
  spec.ranges = {KeyRange{Partition("a", false), Partition("ab", true)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Concat({Rows("a0"), Rows("ab")}));
  // [a, ab): "a" and "a0" only.
  spec.ranges = {KeyRange{Partition("a", true), Partition("ab", false)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Concat({Rows("a"), Rows("a0")}));
  // Unbounded sides.
  spec.ranges = {KeyRange{std::nullopt, Partition("a0", false)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Rows("a"));
  spec.ranges = {KeyRange{Partition("ab", false), std::nullopt}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Rows("b"));
  // A partition bound between existing partitions.
  spec.ranges = {KeyRange{Partition("a1", true), Partition("az", true)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Rows("ab"));
}

TEST_P(EngineScanTest, RowRangesAndPoints) {
  ScanSpec spec;
  spec.ranges = {KeyRange{Point("a", "1", true), Point("a", "1", true)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), (Keys{{"a", "1"}}));
  // RowKey > "1" and <= "9" within "a0".
  spec.ranges = {KeyRange{Point("a0", "1", false), Point("a0", "9", true)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), (Keys{{"a0", "10"}, {"a0", "2"}, {"a0", "9"}}));
  // RowKey >= "10" and < "9".
  spec.ranges = {KeyRange{Point("a0", "10", true), Point("a0", "9", false)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), (Keys{{"a0", "10"}, {"a0", "2"}}));
  // A row range spanning partitions: (a, 9) .. (a0, 1].
  spec.ranges = {KeyRange{Point("a", "2", false), Point("a0", "1", true)}};
  EXPECT_EQ(KeysOf(Run(spec).entities), (Keys{{"a", "9"}, {"a0", "09"}, {"a0", "1"}}));
  // Several disjoint ranges in order.
  spec.ranges = {KeyRange{Point("a", "9", true), Point("a", "9", true)},
                 KeyRange{Partition("ab", true), Partition("ab", true)},
                 KeyRange{Point("b", "2", true), std::nullopt}};
  EXPECT_EQ(KeysOf(Run(spec).entities), Concat({Keys{{"a", "9"}}, Rows("ab"), Keys{{"b", "2"}, {"b", "9"}}}));
  // Empty ranges yield nothing.
  spec.ranges = {KeyRange{Point("a", "5", true), Point("a", "5", true)}};
  EXPECT_TRUE(Run(spec).entities.empty());
}

TEST_P(EngineScanTest, MatchNothingReadsNothing) {
  ScanSpec spec;
  spec.match_nothing = true;
  model::ScanResult r = Run(spec);
  EXPECT_TRUE(r.entities.empty());
  EXPECT_EQ(r.rows_examined, 0u);
  EXPECT_FALSE(r.next.has_value());
}

TEST_P(EngineScanTest, PredicateFiltersButRowsAreCounted) {
  ScanSpec spec;
  spec.predicate = test_util::Where([](const Entity& e) { return e.row_key == "2" || e.Find("n")->value.int_value == 10; });
  model::ScanResult r = Run(spec);
  EXPECT_EQ(KeysOf(r.entities), (Keys{{"a", "10"}, {"a", "2"}, {"a0", "10"}, {"a0", "2"}, {"ab", "10"}, {"ab", "2"},
                                      {"b", "10"}, {"b", "2"}}));
  EXPECT_EQ(r.rows_examined, 20u);
}

// `RowKey eq <rk> or n eq <n>` as a $filter expression (columnar()), so rows
// read from RocksDB take the encoded-filter path, which decodes a row's
// RowKey only when the filter names it or the row is kept or ends the page.
class RowKeyOrN final : public model::RowPredicate {
 public:
  RowKeyOrN(std::string rk, int32_t n) {
    expr_.nodes.resize(3);
    expr_.nodes[0].kind = model::FilterNodeKind::kOr;
    expr_.nodes[0].children = {1, 2};
    expr_.nodes[1].kind = model::FilterNodeKind::kCompare;
    expr_.nodes[1].property.system = model::SystemProperty::kRowKey;
    expr_.nodes[1].literal = EdmValue::String(std::move(rk));
    expr_.nodes[2].kind = model::FilterNodeKind::kCompare;
    expr_.nodes[2].property.name = "n";
    expr_.nodes[2].literal = EdmValue::Int32(n);
  }
  bool Matches(const Entity& e) const override { return model::EvaluateEntity(expr_, e); }
  const model::FilterExpr* columnar() const override { return &expr_; }
  bool MatchesRest(const Entity&) const override { return true; }

 private:
  model::FilterExpr expr_;
};

TEST_P(EngineScanTest, EncodedFilterRowsKeepTheirKeysAcrossPagesAndEscapes) {
  // Partitions and rows whose encoded keys hold escapes (NUL) and surrogate
  // pairs, between the fixture's partitions.
  const std::string odd_pk = std::string("a\0\xF0\x9F\x98\x80", 6);
  const std::vector<std::string> odd_rks = {std::string("\0", 1), "1", "2", std::string("2\0", 2), "\xF0\x9F\x98\x80"};
  for (size_t i = 0; i < odd_rks.size(); ++i) Insert(odd_pk, odd_rks[i], {{"n", EdmValue::Int32(i == 4 ? 10 : 0)}});
  ScanSpec spec;
  spec.predicate = std::make_shared<RowKeyOrN>("2", 10);
  const Keys want = {{"a", "10"}, {"a", "2"}, {odd_pk, "2"}, {odd_pk, "\xF0\x9F\x98\x80"}, {"a0", "10"}, {"a0", "2"},
                     {"ab", "10"}, {"ab", "2"}, {"b", "10"}, {"b", "2"}};
  model::ScanResult all = Run(spec);
  EXPECT_EQ(KeysOf(all.entities), want);
  EXPECT_EQ(all.rows_examined, 25u);
  for (const Entity& e : all.entities) EXPECT_NE(e.Find("n"), nullptr) << e.partition_key << "/" << e.row_key;
  // Every page size: the continuation is the row after the last one kept,
  // inside a partition whose earlier rows were dropped on their value alone.
  for (size_t max = 1; max <= 4; ++max) {
    spec.max_results = max;
    EXPECT_EQ(Drain(spec), want) << max;
  }
  spec.max_results = 1;
  model::ScanResult first = Run(spec);
  ASSERT_TRUE(first.next.has_value());
  EXPECT_EQ(*first.next, (EntityKey{"a", "2"}));
}

TEST_P(EngineScanTest, PagingWithMaxResultsVisitsEveryRowOnce) {
  ScanSpec spec;
  spec.max_results = 3;
  model::ScanResult first = Run(spec);
  ASSERT_EQ(first.entities.size(), 3u);
  ASSERT_TRUE(first.next.has_value());
  EXPECT_EQ(*first.next, (EntityKey{"a", "2"}));  // the first entity of the next page
  size_t pages = 0;
  EXPECT_EQ(Drain(spec, &pages), Concat({Rows("a"), Rows("a0"), Rows("ab"), Rows("b")}));
  EXPECT_EQ(pages, 7u);  // 20 rows / 3: no empty trailing page
  spec.max_results = 5;
  Drain(spec, &pages);
  EXPECT_EQ(pages, 4u);
}

TEST_P(EngineScanTest, PagingAcrossRangesAndWithPredicate) {
  ScanSpec spec;
  spec.ranges = {KeyRange{Partition("a", true), Partition("a", true)},
                 KeyRange{Point("ab", "1", true), Point("ab", "2", true)},
                 KeyRange{Partition("b", true), std::nullopt}};
  spec.predicate = test_util::Where([](const Entity& e) { return e.row_key != "10"; });
  spec.max_results = 2;
  Keys want = {{"a", "09"}, {"a", "1"}, {"a", "2"}, {"a", "9"}, {"ab", "1"}, {"ab", "2"},
               {"b", "09"}, {"b", "1"}, {"b", "2"}, {"b", "9"}};
  EXPECT_EQ(Drain(spec), want);
  // Resuming beyond the first two ranges skips them entirely.
  spec.resume_from = EntityKey{"b", "1"};
  spec.max_results = 100;
  model::ScanResult r = Run(spec);
  EXPECT_EQ(KeysOf(r.entities), (Keys{{"b", "1"}, {"b", "2"}, {"b", "9"}}));
  EXPECT_EQ(r.rows_examined, 4u);  // b/1, b/10, b/2, b/9
  // A resume key that falls between rows starts at the next row.
  spec.resume_from = EntityKey{"a", "3"};
  EXPECT_EQ(KeysOf(Run(spec).entities).front(), (std::pair<std::string, std::string>{"a", "9"}));
}

TEST_P(EngineScanTest, ByteLimitEndsThePage) {
  ScanSpec spec;
  spec.max_bytes = 1;  // every row passes it: one entity per page
  model::ScanResult r = Run(spec);
  EXPECT_EQ(r.entities.size(), 1u);
  ASSERT_TRUE(r.next.has_value());
  size_t pages = 0;
  EXPECT_EQ(Drain(spec, &pages).size(), 20u);
  EXPECT_EQ(pages, 20u);
}

// ScanSpec::bound (a SAS key range, for the server; issue 22, finding 4): no
// row outside it is examined, returned or named as the continuation.
TEST_P(EngineScanTest, BoundCutsTheScan) {
  ScanSpec spec;
  spec.bound = KeyRange{Point("a0", "1", true), Point("ab", "10", true)};
  const Keys inside = {{"a0", "1"}, {"a0", "10"}, {"a0", "2"}, {"a0", "9"}, {"ab", "09"}, {"ab", "1"}, {"ab", "10"}};
  model::ScanResult r = Run(spec);
  EXPECT_EQ(KeysOf(r.entities), inside);
  EXPECT_EQ(r.rows_examined, inside.size());
  EXPECT_FALSE(r.next.has_value());
  // One row per page: every continuation is inside the bound, and the last
  // page (ending at the bound's last row) has none, though "ab"/"2" follows.
  spec.max_results = 1;
  Keys seen;
  ScanSpec paged = spec;
  for (int i = 0; i < 20; ++i) {
    model::ScanResult page = Run(paged);
    EXPECT_LE(page.rows_examined, 1u);
    for (const auto& k : KeysOf(page.entities)) seen.push_back(k);
    if (!page.next) break;
    EXPECT_NE(std::find(inside.begin(), inside.end(), std::make_pair(page.next->partition_key, page.next->row_key)),
              inside.end())
        << page.next->partition_key << "/" << page.next->row_key;
    paged.resume_from = *page.next;
  }
  EXPECT_EQ(seen, inside);
  // Ranges are intersected with it.
  spec.max_results = model::kMaxPageEntities;
  spec.ranges = {KeyRange{Partition("ab", true), std::nullopt}};
  EXPECT_EQ(KeysOf(Run(spec).entities), (Keys{{"ab", "09"}, {"ab", "1"}, {"ab", "10"}}));
  spec.ranges = {KeyRange{Partition("b", true), Partition("b", true)}};
  r = Run(spec);
  EXPECT_TRUE(r.entities.empty());
  EXPECT_EQ(r.rows_examined, 0u);
  EXPECT_FALSE(r.next.has_value());
  spec.ranges.clear();
  // A resume point before the bound starts at the bound; one after it ends
  // the scan at once, with no continuation.
  spec.resume_from = EntityKey{"a", "1"};
  EXPECT_EQ(KeysOf(Run(spec).entities), inside);
  spec.resume_from = EntityKey{"ab", "2"};
  r = Run(spec);
  EXPECT_TRUE(r.entities.empty());
  EXPECT_EQ(r.rows_examined, 0u);
  EXPECT_FALSE(r.next.has_value());
}

// A page ended by its deadline names a key inside the bound too, and the
// scan starts at the bound rather than at the table's first row.
TEST_P(EngineScanTest, BoundHoldsWhenTheDeadlineEndsThePage) {
  InsertBigPartition();
  ScanSpec spec;
  spec.bound = KeyRange{Point("big", "0100", true), Point("big", "0600", true)};
  spec.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  model::ScanResult r = Run(spec);
  // The clock is read every 256 rows: 255 rows from the bound's start.
  ASSERT_EQ(r.entities.size(), 255u);
  EXPECT_EQ(r.entities.front().row_key, "0100");
  ASSERT_TRUE(r.next.has_value());
  EXPECT_EQ(*r.next, (EntityKey{"big", "0355"}));
  spec.resume_from = *r.next;
  r = Run(spec);
  ASSERT_EQ(r.entities.size(), 246u);  // 0355..0600: the bound ends the scan first
  EXPECT_EQ(r.entities.back().row_key, "0600");
  EXPECT_FALSE(r.next.has_value());
}

// ScanSpec::row_sizer: the byte limit counts what it says a row costs, and a
// row that would take the page past max_bytes starts the next page.
TEST_P(EngineScanTest, RowSizerBoundsThePageBytes) {
  class Fixed : public model::RowSizer {
   public:
    explicit Fixed(size_t bytes) : bytes_(bytes) {}
    size_t Bytes(const Entity&, size_t) const override { return bytes_; }
    size_t Bound(const Entity&, size_t) const override { return bytes_; }

   private:
    size_t bytes_;
  };
  ScanSpec spec;
  spec.row_sizer = std::make_shared<Fixed>(100);
  spec.max_bytes = 250;
  model::ScanResult r = Run(spec);
  EXPECT_EQ(r.entities.size(), 2u);  // a third row would make 300 > 250
  ASSERT_TRUE(r.next.has_value());
  EXPECT_EQ(*r.next, (EntityKey{"a", "10"}));
  size_t pages = 0;
  EXPECT_EQ(Drain(spec, &pages).size(), 20u);
  EXPECT_EQ(pages, 10u);
  // A row larger than the whole limit still makes progress: one per page.
  spec.row_sizer = std::make_shared<Fixed>(1000);
  EXPECT_EQ(Run(spec).entities.size(), 1u);
  EXPECT_EQ(Drain(spec, &pages).size(), 20u);
  EXPECT_EQ(pages, 20u);
}

// A sizer whose Bound() exceeds Bytes() by a per-row slack (row "n" is the
// numeric row key), counting its Bytes() calls.
class SlackSizer : public model::RowSizer {
 public:
  // Exact bytes of the row (pk, rk): differs per row so that cuts move.
  static size_t ExactBytes(const std::string& pk, const std::string& rk) {
    return 20 + 7 * static_cast<size_t>(std::atoi(rk.c_str())) + 3 * pk.size();
  }
  explicit SlackSizer(size_t slack) : slack_(slack) {}
  size_t Bytes(const Entity& e, size_t) const override {
    bytes_calls_.fetch_add(1, std::memory_order_relaxed);
    return ExactBytes(e.partition_key, e.row_key);
  }
  size_t Bound(const Entity& e, size_t) const override {
    const size_t exact = ExactBytes(e.partition_key, e.row_key);
    return exact + (slack_ * (exact % 7)) / 3;  // per row, from 0 up to 2 * slack
  }
  size_t bytes_calls() const { return bytes_calls_.load(); }

 private:
  size_t slack_;
  mutable std::atomic<size_t> bytes_calls_{0};
};

// The cheap bound is only a shortcut: pages cut where the exact sizes alone
// cut them (the rule of ScanSpec::max_bytes, simulated here over the known
// rows), for every byte limit, with and without a row limit, for bounds a
// little or far above the exact sizes, and on repeated scans (which the
// scan cache may serve).
TEST_P(EngineScanTest, RowSizerBoundCutsPagesWhereTheExactSizesDo) {
  const Keys rows = Concat({Rows("a"), Rows("a0"), Rows("ab"), Rows("b")});
  auto expected_pages = [&](size_t max_bytes, size_t max_results) {
    std::vector<size_t> pages;
    for (size_t start = 0; start < rows.size();) {
      size_t i = start, sum = 0;
      while (i < rows.size()) {
        const size_t b = SlackSizer::ExactBytes(rows[i].first, rows[i].second);
        if (i > start && b > max_bytes - std::min(sum, max_bytes)) break;
        sum += b;
        ++i;
        if (i - start >= max_results || sum >= max_bytes) break;
      }
      pages.push_back(i - start);
      start = i;
    }
    return pages;
  };
  for (size_t slack : {0u, 5u, 40u, 1000u}) {
    for (size_t max_results : {size_t{1000}, size_t{3}, size_t{7}}) {
      for (size_t max_bytes = 1; max_bytes <= 700; max_bytes += (max_bytes < 200 ? 1 : 7)) {
        ScanSpec spec;
        spec.row_sizer = std::make_shared<SlackSizer>(slack);
        spec.max_bytes = max_bytes;
        spec.max_results = max_results;
        std::vector<size_t> pages;
        Keys all;
        while (true) {
          model::ScanResult r = Run(spec);
          pages.push_back(r.entities.size());
          Keys k = KeysOf(r.entities);
          all.insert(all.end(), k.begin(), k.end());
          if (!r.next || pages.size() > rows.size()) break;
          EXPECT_EQ(*r.next, (EntityKey{rows[all.size()].first, rows[all.size()].second}));
          spec.resume_from = *r.next;
        }
        ASSERT_EQ(pages, expected_pages(max_bytes, max_results))
            << "slack " << slack << " max_bytes " << max_bytes << " max_results " << max_results;
        ASSERT_EQ(all, rows);
      }
    }
  }
}

// The case the shortcut must not get wrong: the bounds would end the page a
// row early (3 * 150 + 150 > 500), the exact sizes fill it to exactly
// max_bytes (5 * 100) and end it there.
TEST_P(EngineScanTest, RowSizerBoundThatWouldCutEarlierDoesNot) {
  class Loose : public model::RowSizer {
   public:
    size_t Bytes(const Entity&, size_t) const override { return 100; }
    size_t Bound(const Entity&, size_t) const override { return 150; }
  };
  ScanSpec spec;
  spec.row_sizer = std::make_shared<Loose>();
  spec.max_bytes = 500;
  model::ScanResult r = Run(spec);
  EXPECT_EQ(r.entities.size(), 5u);
  ASSERT_TRUE(r.next.has_value());
  EXPECT_EQ(*r.next, (EntityKey{"a0", "09"}));
  spec.max_bytes = 499;  // 4 * 100, and a fifth row would pass it
  r = Run(spec);
  EXPECT_EQ(r.entities.size(), 4u);
  ASSERT_TRUE(r.next.has_value());
  EXPECT_EQ(*r.next, (EntityKey{"a", "9"}));
}

// A page far from max_bytes never asks for the exact (costly) size.
TEST_P(EngineScanTest, RowSizerExactSizeOnlyNearTheLimit) {
  auto sizer = std::make_shared<SlackSizer>(40);
  ScanSpec spec;
  spec.row_sizer = sizer;
  spec.max_bytes = 1u << 20;
  EXPECT_EQ(Run(spec).entities.size(), 20u);
  EXPECT_EQ(sizer->bytes_calls(), 0u);
  // Near the limit every kept row so far, and the row that ends the page,
  // is sized exactly (once each).
  spec.max_bytes = 300;
  model::ScanResult r = Run(spec);
  ASSERT_TRUE(r.next.has_value());
  EXPECT_GT(sizer->bytes_calls(), 0u);
  EXPECT_LE(sizer->bytes_calls(), r.entities.size() + 1);
}

TEST_P(EngineScanTest, DeadlineEndsThePageWithAContinuation) {
  InsertBigPartition();
  ScanSpec spec;
  spec.ranges = {KeyRange{Partition("big", true), Partition("big", true)}};
  spec.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  model::ScanResult r = Run(spec);
  // The clock is read every 256 rows, so a page still makes progress: 255
  // rows are examined, the 256th becomes the continuation.
  EXPECT_EQ(r.entities.size(), 255u);
  EXPECT_EQ(r.rows_examined, 255u);
  ASSERT_TRUE(r.next.has_value());
  EXPECT_EQ(*r.next, (EntityKey{"big", "0255"}));
  size_t pages = 0;
  EXPECT_EQ(Drain(spec, &pages).size(), 1000u);
  EXPECT_GT(pages, 1u);
}

// A CPU budget ends the page as the deadline does (the I/O thread's query
// slice); a generous one leaves the page whole.
TEST_P(EngineScanTest, CpuBudgetEndsThePageLikeTheDeadline) {
  InsertBigPartition();
  ScanSpec spec;
  spec.ranges = {KeyRange{Partition("big", true), Partition("big", true)}};
  model::ScanRun run;
  run.cpu_budget = std::chrono::nanoseconds(0);
  model::ScanResult r = Run(spec, run);
  EXPECT_EQ(r.entities.size(), 255u);  // the clock is read every 256 rows
  EXPECT_TRUE(r.deadline_passed);
  ASSERT_TRUE(r.next.has_value());
  EXPECT_EQ(*r.next, (EntityKey{"big", "0255"}));
  run.cpu_budget = std::chrono::seconds(60);
  r = Run(spec, run);
  EXPECT_EQ(r.entities.size(), 1000u);
  EXPECT_FALSE(r.deadline_passed);
}

// A scan with a CPU burst offers the CPU at its clock checks once the burst
// is spent (every check, with a 1 ns burst) and pages exactly as without.
TEST_P(EngineScanTest, CpuBurstYieldsWithoutChangingThePage) {
  InsertBigPartition();
  ScanSpec spec;
  spec.ranges = {KeyRange{Partition("big", true), Partition("big", true)}};
  spec.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  model::ScanResult plain = Run(spec);
  EXPECT_EQ(plain.cpu_yields, 0u);
  model::ScanRun run;
  run.cpu_burst = std::chrono::nanoseconds(1);
  model::ScanResult yielding = Run(spec, run);
  EXPECT_EQ(KeysOf(yielding.entities), KeysOf(plain.entities));
  EXPECT_EQ(yielding.entities.size(), 1000u);
  EXPECT_FALSE(yielding.deadline_passed);
  EXPECT_EQ(yielding.cpu_yields, 1000u / 256);  // the clock is read every 256 rows
  run.cpu_burst = std::chrono::minutes(1);
  EXPECT_EQ(Run(spec, run).cpu_yields, 0u);
}

// A resumable scan that reaches its CPU budget is suspended (ScanResult::
// suspended, no rows handed out) and, continued, gives the page an
// uninterrupted scan gives: the same rows, `next` and rows examined, read
// from the first scan's snapshot (a row written in between is not in it).
TEST_P(EngineScanTest, ASuspendedScanContinuesAsIfUninterrupted) {
  InsertBigPartition();
  ScanSpec spec;
  spec.ranges = {KeyRange{Partition("a", true), Partition("a0", true)}, KeyRange{Partition("big", true), std::nullopt}};
  spec.predicate = test_util::Where([](const Entity& e) { return e.row_key != "0007"; });
  spec.max_results = 900;
  const model::ScanResult whole = Run(spec);
  ASSERT_EQ(whole.entities.size(), 900u);
  ASSERT_TRUE(whole.next.has_value());

  ScanSpec first = spec;
  first.resumable = true;
  model::ScanRun zero;
  zero.cpu_budget = std::chrono::nanoseconds(0);  // suspended at the first clock check
  model::ScanResult paused = Run(first, zero);
  ASSERT_NE(paused.suspended, nullptr);
  EXPECT_TRUE(paused.deadline_passed);
  EXPECT_TRUE(paused.entities.empty());
  EXPECT_EQ(paused.rows_examined, 255u);
  Insert("big", "0300x");  // after the suspended scan's snapshot

  ScanSpec rest = spec;
  rest.resume_scan = paused.suspended.get();
  model::ScanResult continued = Run(rest);
  EXPECT_EQ(continued.suspended, nullptr);
  EXPECT_FALSE(continued.deadline_passed);
  EXPECT_EQ(KeysOf(continued.entities), KeysOf(whole.entities));
  EXPECT_EQ(continued.next, whole.next);
  EXPECT_EQ(continued.rows_examined, whole.rows_examined);
  paused.suspended.reset();
  // A scan started now sees the row.
  EXPECT_NE(KeysOf(Run(spec).entities), KeysOf(whole.entities));
}

// A scan that is not resumable ends its page at the budget as before; one
// continued is never suspended again, and a suspended scan continues only on
// its own table.
TEST_P(EngineScanTest, OnlyAResumableScanIsSuspendedAndOnlyOnce) {
  InsertBigPartition();
  ScanSpec spec;
  model::ScanRun zero;
  zero.cpu_budget = std::chrono::nanoseconds(0);
  model::ScanResult ended = Run(spec, zero);
  EXPECT_EQ(ended.suspended, nullptr);
  EXPECT_TRUE(ended.deadline_passed);
  EXPECT_EQ(ended.entities.size(), 255u);

  spec.resumable = true;
  model::ScanResult paused = Run(spec, zero);
  ASSERT_NE(paused.suspended, nullptr);
  TableInfo other = Create("other");
  ScanSpec elsewhere;
  elsewhere.resume_scan = paused.suspended.get();
  EXPECT_FALSE(engine_->Scan(other, elsewhere).ok());
  ScanSpec again = spec;  // still resumable, and run with a zero budget again
  again.resume_scan = paused.suspended.get();
  model::ScanResult continued = Run(again, zero);
  EXPECT_EQ(continued.suspended, nullptr);
  EXPECT_TRUE(continued.deadline_passed);  // its own budget ends the page, at its next clock check
  EXPECT_EQ(continued.entities.size(), 255u + 255u);
}

// A suspended scan does not keep the engine open: Close() returns while the
// caller still holds it, invalidates it (its snapshot and iterator are
// released with the database still open), and resuming it then answers
// kShuttingDown. Dropping it after the close, or after the engine is gone,
// touches nothing of the engine. Before, Close() waited until it was dropped.
TEST_P(EngineScanTest, CloseInvalidatesASuspendedScanInsteadOfWaitingForIt) {
  InsertBigPartition();
  ScanSpec spec;
  spec.resumable = true;
  model::ScanRun zero;
  zero.cpu_budget = std::chrono::nanoseconds(0);
  model::ScanResult paused = Run(spec, zero);
  ASSERT_NE(paused.suspended, nullptr);
  auto closed = std::async(std::launch::async, [&] { return engine_->Close(); });
  ASSERT_EQ(closed.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "Close waited for the scan";
  EXPECT_TRUE(closed.get().ok());
  ScanSpec again = spec;
  again.resume_scan = paused.suspended.get();
  auto resumed = engine_->Scan(table_, again);
  EXPECT_EQ(resumed.status().code(), StatusCode::kShuttingDown);
  engine_.reset();
  paused.suspended.reset();  // after the engine: must not touch it
}

// Only a live suspended scan of this engine is continued: a handle of another
// engine is refused with kInvalidArgument, not cast.
TEST_P(EngineScanTest, AForeignSuspendedScanIsRefused) {
  class Foreign final : public model::SuspendedScan {};
  Foreign foreign;
  ScanSpec spec;
  spec.resume_scan = &foreign;
  auto r = engine_->Scan(table_, spec);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST_P(EngineScanTest, ScanReadsAConsistentSnapshot) {
  ScanSpec spec;
  bool wrote = false;
  spec.predicate = test_util::Where([&](const Entity&) {
    if (!wrote) {
      wrote = true;
      // A concurrent writer adds rows ahead of the scan position and deletes one.
      std::thread writer([&] {
        auto w1 = test_util::WriteOne(*engine_, table_, Op(WriteKind::kInsert, MakeEntity("a0", "5")));
        auto w2 = test_util::WriteOne(*engine_, table_, Op(WriteKind::kDelete, MakeEntity("b", "9"), test_util::IfAny()));
        EXPECT_TRUE(w1.status.ok());
        EXPECT_TRUE(w2.status.ok());
      });
      writer.join();
    }
    return true;
  });
  model::ScanResult r = Run(spec);
  EXPECT_EQ(KeysOf(r.entities), Concat({Rows("a"), Rows("a0"), Rows("ab"), Rows("b")}));
  EXPECT_EQ(ScanAll(table_).size(), 20u);  // +1 -1 afterwards
}

// A scan stops adding blocks to the block cache after
// EngineOptions::scan_fill_cache_bytes of rows: the rest of it reads through
// a new iterator on the same snapshot, which must neither skip nor repeat a
// row, nor see a write made after the scan began.
TEST_P(EngineScanTest, LongScanStopsFillingTheBlockCacheAndMissesNoRow) {
  if (GetParam()) GTEST_SKIP() << "in memory, a reopened engine starts empty";
  const std::string filler(200, 'x');
  Keys expected = Concat({Rows("a"), Rows("a0"), Rows("ab"), Rows("b")});
  for (int i = 0; i < 3000; ++i) {
    char rk[8];
    std::snprintf(rk, sizeof rk, "%04d", i);
    Insert("big", rk, {{"s", EdmValue::String(filler)}});
    expected.emplace_back("big", rk);
  }
  std::sort(expected.begin(), expected.end());
  // Blocks used by one full scan of the table, read from SST files (Close
  // flushes), with the given fill limit.
  const auto cache_growth_of_a_scan = [&](size_t fill_limit) {
    scan_fill_cache_bytes_ = fill_limit;
    Reopen();
    const uint64_t before = engine_->GetStats().block_cache_bytes;
    ScanSpec spec;
    spec.max_results = SIZE_MAX;
    spec.max_bytes = SIZE_MAX;
    bool wrote = false;
    spec.predicate = test_util::Where([&](const Entity&) {
      if (!wrote) {
        wrote = true;
        std::thread writer([&] {
          EXPECT_TRUE(test_util::WriteOne(*engine_, table_, Op(WriteKind::kInsert, MakeEntity("big", "2500x"))).status.ok());
        });
        writer.join();
      }
      return true;
    });
    EXPECT_EQ(KeysOf(Run(spec).entities), expected);
    EXPECT_TRUE(test_util::WriteOne(*engine_, table_, Op(WriteKind::kDelete, MakeEntity("big", "2500x"), test_util::IfAny()))
                    .status.ok());
    return engine_->GetStats().block_cache_bytes - before;
  };
  const uint64_t filled = cache_growth_of_a_scan(SIZE_MAX);
  const uint64_t limited = cache_growth_of_a_scan(4096);
  EXPECT_GT(filled, 3000u * filler.size() / 2);  // the table's data blocks (~600 KB)
  EXPECT_LT(limited, filled / 4);
}

// The first scan after a clean restart reads the L0 file the close flushed:
// L0 is written uncompressed, every lower level with the compression of the
// other column families (LZ4 where available), so data at rest stays small.
TEST_P(EngineScanTest, FlushedRowsAreUncompressedAndLowerLevelsAreNot) {
  if (GetParam()) GTEST_SKIP() << "in memory, nothing is left on disk to inspect";
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  const std::string path = Options().path;
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  rocksdb::ConfigOptions config;
  config.ignore_unknown_options = true;
  ASSERT_TRUE(rocksdb::LoadLatestOptions(config, path, &db_options, &families).ok());
  const rocksdb::ColumnFamilyOptions* entities = nullptr;
  const rocksdb::ColumnFamilyOptions* catalog = nullptr;
  for (const rocksdb::ColumnFamilyDescriptor& f : families) {
    if (f.name == "entities") entities = &f.options;
    if (f.name == "catalog") catalog = &f.options;
  }
  ASSERT_NE(entities, nullptr);
  ASSERT_NE(catalog, nullptr);
  ASSERT_EQ(entities->compression_per_level.size(), static_cast<size_t>(entities->num_levels));
  EXPECT_EQ(entities->compression_per_level[0], rocksdb::kNoCompression);
  for (size_t level = 1; level < entities->compression_per_level.size(); ++level) {
    EXPECT_EQ(entities->compression_per_level[level], catalog->compression) << "level " << level;
  }
  // The rows SetUp() wrote, flushed by Close(): one L0 file, uncompressed.
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(db_options, path, families, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::TablePropertiesCollection tables;
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    if (h->GetName() == "entities") ASSERT_TRUE(db->GetPropertiesOfAllTables(h, &tables).ok());
  }
  EXPECT_FALSE(tables.empty());
  for (const auto& [file, props] : tables) EXPECT_EQ(props->compression_name, "NoCompression") << file;
  for (rocksdb::ColumnFamilyHandle* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  db.reset();
  Reopen();
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineScanTest, ::testing::Bool(), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
