#include "server/faults/fault_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

namespace tablestone::faults {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Headers by lower-case name, as FaultRequest::header looks them up.
struct MapHeaders {
  std::map<std::string, std::string> values;
  std::optional<std::string_view> Find(std::string_view name) const {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto it = values.find(lower);
    if (it == values.end()) return std::nullopt;
    return std::string_view(it->second);
  }
};

FaultRequest Insert(std::string_view table = "orders", std::optional<std::string_view> pk = "p1",
                    const MapHeaders* headers = nullptr) {
  FaultRequest q;
  q.account = "devstoreaccount1";
  q.table = table;
  q.operation = "InsertEntity";
  q.method = "POST";
  q.partition_key = pk;
  if (headers != nullptr) q.header = [headers](std::string_view name) { return headers->Find(name); };
  return q;
}

std::unique_ptr<FaultSet> WithRules(const json& rules, uint64_t seed = 0) {
  auto set = std::make_unique<FaultSet>(seed);
  std::string error;
  EXPECT_TRUE(set->AddJson(rules, &error).has_value()) << error;
  return set;
}

TEST(FaultRulesTest, EmptySetIsInactive) {
  FaultSet set;
  EXPECT_FALSE(set.active());
  EXPECT_FALSE(set.Evaluate(Insert()).has_value());
}

TEST(FaultRulesTest, MatchesEveryCriterion) {
  MapHeaders headers;
  headers.values["x-test"] = "a";
  auto owned = WithRules({{"action", "serverBusy"},
                            {"match",
                             {{"account", "devstoreaccount1"},
                              {"table", "Orders"},
                              {"operation", {"InsertEntity", "UpdateEntity"}},
                              {"method", "post"},
                              {"partitionKeyPrefix", "p"},
                              {"header", {{"name", "X-Test"}, {"value", "a"}}}}}});
  FaultSet& set = *owned;
  EXPECT_TRUE(set.active());
  EXPECT_TRUE(set.wants_partition_key());
  EXPECT_TRUE(set.Evaluate(Insert("orders", "p1", &headers)).has_value());  // table case-insensitive
  EXPECT_FALSE(set.Evaluate(Insert("other", "p1", &headers)).has_value());
  EXPECT_FALSE(set.Evaluate(Insert("orders", "q1", &headers)).has_value());
  EXPECT_FALSE(set.Evaluate(Insert("orders", std::nullopt, &headers)).has_value());
  EXPECT_FALSE(set.Evaluate(Insert("orders", "p1", nullptr)).has_value());
  headers.values["x-test"] = "b";
  EXPECT_FALSE(set.Evaluate(Insert("orders", "p1", &headers)).has_value());
  headers.values["x-test"] = "a";
  FaultRequest get = Insert("orders", "p1", &headers);
  get.operation = "GetEntity";
  get.method = "GET";
  EXPECT_FALSE(set.Evaluate(get).has_value());
  FaultRequest other_account = Insert("orders", "p1", &headers);
  other_account.account = "other";
  EXPECT_FALSE(set.Evaluate(other_account).has_value());
}

TEST(FaultRulesTest, EveryNthAndMaxCountAreCounted) {
  auto owned = WithRules({{"id", "busy"}, {"action", "serverBusy"}, {"everyNth", 2}, {"maxCount", 2}});
  FaultSet& set = *owned;
  std::vector<bool> fired;
  for (int i = 0; i < 8; ++i) fired.push_back(set.Evaluate(Insert()).has_value());
  EXPECT_EQ(fired, (std::vector<bool>{false, true, false, true, false, false, false, false}));
  json listed = set.ToJson();
  EXPECT_EQ(listed["rules"][0]["injected"], 2);
  EXPECT_EQ(listed["rules"][0]["matched"], 8);  // every matching request, past maxCount too
  EXPECT_EQ(set.Counts(), (std::vector<std::pair<std::string, uint64_t>>{{"busy", 2}}));
}

TEST(FaultRulesTest, SameSeedSameFaults) {
  auto run = [](uint64_t seed) {
    auto owned = WithRules({{"id", "p"}, {"action", "timeoutBefore"}, {"probability", 0.3}}, seed);
    FaultSet& set = *owned;
    std::vector<bool> fired;
    for (int i = 0; i < 200; ++i) fired.push_back(set.Evaluate(Insert()).has_value());
    return fired;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
  const auto fired = run(7);
  const auto count = std::count(fired.begin(), fired.end(), true);
  EXPECT_GT(count, 30);  // ~60 expected
  EXPECT_LT(count, 100);
}

TEST(FaultRulesTest, FirstFiringRuleDecides) {
  auto owned = WithRules(json::array({{{"id", "a"}, {"action", "serverBusy"}, {"everyNth", 2}},
                                        {{"id", "b"}, {"action", "internalErrorBefore"}}}));
  FaultSet& set = *owned;
  EXPECT_EQ(set.Evaluate(Insert())->rule_id, "b");
  EXPECT_EQ(set.Evaluate(Insert())->rule_id, "a");
  EXPECT_EQ(set.Evaluate(Insert())->action, FaultAction::kInternalErrorBefore);
}

TEST(FaultRulesTest, WindowBoundsInjections) {
  auto owned = WithRules({{"action", "serverBusy"}, {"window", {{"startAfterMs", 1000}, {"durationMs", 1000}}}});
  FaultSet& set = *owned;
  const auto now = FaultSet::Clock::now();
  EXPECT_FALSE(set.Evaluate(Insert(), now).has_value());
  EXPECT_TRUE(set.Evaluate(Insert(), now + 1500ms).has_value());
  EXPECT_FALSE(set.Evaluate(Insert(), now + 2500ms).has_value());
}

TEST(FaultRulesTest, LatencyRangeIsDrawnWithinBounds) {
  auto owned = WithRules({{"action", "latencyBefore"}, {"latencyMs", {10, 20}}});
  FaultSet& set = *owned;
  for (int i = 0; i < 50; ++i) {
    auto d = set.Evaluate(Insert());
    ASSERT_TRUE(d.has_value());
    EXPECT_GE(d->latency, 10ms);
    EXPECT_LE(d->latency, 20ms);
  }
}

TEST(FaultRulesTest, TokenBucketRefillsAtItsRate) {
  const auto t0 = TokenBucket::Clock::now();
  TokenBucket bucket(10, 2, t0);
  EXPECT_TRUE(bucket.Take(t0));
  EXPECT_TRUE(bucket.Take(t0));
  EXPECT_FALSE(bucket.Take(t0));
  EXPECT_FALSE(bucket.Take(t0 + 50ms));  // half a token
  EXPECT_TRUE(bucket.Take(t0 + 100ms));
  EXPECT_TRUE(bucket.Take(t0 + 10s));
  EXPECT_TRUE(bucket.Take(t0 + 10s));  // refilled to the burst, not beyond
  EXPECT_FALSE(bucket.Take(t0 + 10s));
}

TEST(FaultRulesTest, ThrottlePerPartitionKeepsOneBucketEach) {
  auto owned = WithRules(
      {{"id", "t"}, {"action", "throttle"}, {"throttle", {{"per", "partition"}, {"ratePerSecond", 1}, {"burst", 1}}}});
  FaultSet& set = *owned;
  const auto now = FaultSet::Clock::now();
  EXPECT_FALSE(set.Evaluate(Insert("orders", "a"), now).has_value());
  EXPECT_TRUE(set.Evaluate(Insert("orders", "a"), now).has_value());
  EXPECT_FALSE(set.Evaluate(Insert("orders", "b"), now).has_value());  // its own bucket
  EXPECT_FALSE(set.Evaluate(Insert("orders", "a"), now + 1100ms).has_value());
  EXPECT_EQ(set.Counts()[0].second, 1u);
}

TEST(FaultRulesTest, RefusesBadRules) {
  const json bad[] = {
      {{"action", "explode"}},
      {{"action", "serverBusy"}, {"match", {{"tabel", "x"}}}},
      {{"action", "serverBusy"}, {"probability", 2}},
      {{"action", "serverBusy"}, {"probability", 0.5}, {"everyNth", 2}},
      {{"action", "serverBusy"}, {"everyNth", 0}},
      {{"action", "latencyBefore"}},
      {{"action", "latencyAfter"}, {"latencyMs", {20, 10}}},
      {{"action", "serverBusy"}, {"latencyMs", 5}},
      {{"action", "throttle"}},
      {{"action", "throttle"}, {"throttle", {{"per", "table"}, {"ratePerSecond", 1}}}},
      {{"action", "serverBusy"}, {"match", {{"header", {{"value", "x"}}}}}},
      {{"action", "serverBusy"}, {"bogus", 1}},
  };
  for (const json& rule : bad) {
    std::string error;
    EXPECT_FALSE(ParseRule(rule, &error).has_value()) << rule.dump();
    EXPECT_FALSE(error.empty()) << rule.dump();
  }
}

// issue 35: a typo in an operation name gave a rule that never fired; issue
// 30 item 7: latencyMs 1e300 was converted to int64_t out of range (undefined).
TEST(FaultRulesTest, RefusesUnknownOperationsAndOutOfRangeDurations) {
  std::string error;
  EXPECT_FALSE(ParseRule({{"action", "serverBusy"}, {"match", {{"operation", "InsertEntities"}}}}, &error));
  EXPECT_NE(error.find("InsertEntities"), std::string::npos) << error;
  // The message lists the names a rule may use.
  for (const char* name : {"InsertEntity", "EntityGroupTransaction", "QueryTables", "PreflightTableRequest"}) {
    EXPECT_NE(error.find(name), std::string::npos) << name << ": " << error;
  }
  EXPECT_FALSE(ParseRule({{"action", "serverBusy"}, {"match", {{"operation", {"GetEntity", "getentity"}}}}}, &error));
  EXPECT_TRUE(ParseRule({{"action", "serverBusy"}, {"match", {{"operation", "EntityGroupTransaction"}}}}, &error))
      << error;
  const json bad[] = {
      {{"action", "latencyBefore"}, {"latencyMs", 1e300}},
      {{"action", "latencyAfter"}, {"latencyMs", {0, 1e300}}},
      {{"action", "latencyAfter"}, {"latencyMs", kMaxLatencyMs + 1}},
      {{"action", "serverBusy"}, {"window", {{"startAfterMs", 1e300}}}},
      {{"action", "serverBusy"}, {"window", {{"durationMs", 1e19}}}},
  };
  for (const json& rule : bad) {
    error.clear();
    EXPECT_FALSE(ParseRule(rule, &error).has_value()) << rule.dump();
    EXPECT_FALSE(error.empty()) << rule.dump();
  }
  EXPECT_TRUE(ParseRule({{"action", "latencyBefore"}, {"latencyMs", kMaxLatencyMs}}, &error)) << error;
  FaultSet set;
  EXPECT_FALSE(set.SetRealisticJson({{"tableBeingDeletedMs", 1e300}}, &error));
  EXPECT_FALSE(set.SetRealisticJson({{"latencyMedianMs", -1}}, &error));
}

// issue 30 item 7: no limit, and adding was O(N^2) (40k rules: 10.5 s of CPU).
TEST(FaultRulesTest, HoldsAtMostkMaxRulesAndAddsInLinearTime) {
  FaultSet set;
  std::string error;
  json many = json::array();
  for (size_t i = 0; i < FaultSet::kMaxRules; ++i) many.push_back({{"action", "serverBusy"}, {"everyNth", 1000000}});
  const auto begin = std::chrono::steady_clock::now();
  auto ids = set.AddJson(many, &error);
  ASSERT_TRUE(ids.has_value()) << error;
  EXPECT_EQ(ids->size(), FaultSet::kMaxRules);
  // One more, alone or in a list, is refused with a reason; nothing changes.
  EXPECT_FALSE(set.Add(FaultRule{}, &error).has_value());
  EXPECT_NE(error.find(std::to_string(FaultSet::kMaxRules)), std::string::npos) << error;
  EXPECT_FALSE(set.AddJson(json::array({{{"action", "serverBusy"}}}), &error).has_value());
  EXPECT_EQ(set.ToJson()["rules"].size(), FaultSet::kMaxRules);
  // A list longer than the limit is refused before its rules are parsed.
  FaultSet other;
  many.push_back({{"action", "serverBusy"}});
  EXPECT_FALSE(other.AddJson(many, &error).has_value());
  EXPECT_FALSE(other.active());
  // Removing frees a place; its id is reusable.
  EXPECT_TRUE(set.Remove((*ids)[5]));
  EXPECT_TRUE(set.AddJson({{"id", (*ids)[5]}, {"action", "serverBusy"}}, &error).has_value()) << error;
  // One at a time: each add is a hash lookup, not a walk of every rule.
  FaultSet one_by_one;
  for (size_t i = 0; i < FaultSet::kMaxRules; ++i) {
    ASSERT_TRUE(one_by_one.Add(FaultRule{}, &error).has_value()) << error;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_LT(seconds, 2.0);
  // Auto ids skip the ids given by hand.
  FaultSet named;
  ASSERT_TRUE(named.AddJson({{"id", "r1"}, {"action", "serverBusy"}}, &error).has_value());
  auto auto_id = named.Add(FaultRule{}, &error);
  ASSERT_TRUE(auto_id.has_value());
  EXPECT_EQ(*auto_id, "r2");
  // wants_partition_key follows the rules that need it through add and remove.
  EXPECT_FALSE(named.wants_partition_key());
  ASSERT_TRUE(named.AddJson({{"id", "pk"}, {"action", "serverBusy"}, {"match", {{"partitionKeyPrefix", "a"}}}}, &error));
  EXPECT_TRUE(named.wants_partition_key());
  EXPECT_TRUE(named.Remove("pk"));
  EXPECT_FALSE(named.wants_partition_key());
}

TEST(FaultRulesTest, AddRemoveClearAndIds) {
  FaultSet set;
  std::string error;
  auto ids = set.AddJson(json::array({{{"action", "serverBusy"}}, {{"id", "mine"}, {"action", "closeAfter"}}}), &error);
  ASSERT_TRUE(ids.has_value()) << error;
  EXPECT_EQ(*ids, (std::vector<std::string>{"r1", "mine"}));
  // All or nothing: a duplicate id refuses the whole list.
  EXPECT_FALSE(set.AddJson(json::array({{{"id", "new"}, {"action", "serverBusy"}}, {{"id", "mine"}, {"action", "serverBusy"}}}),
                           &error)
                   .has_value());
  EXPECT_EQ(set.ToJson()["rules"].size(), 2u);
  EXPECT_TRUE(set.Remove("mine"));
  EXPECT_FALSE(set.Remove("mine"));
  set.Clear();
  EXPECT_FALSE(set.active());
  // A listed rule parses back to the same listing.
  ASSERT_TRUE(set.AddJson({{"id", "x"}, {"action", "latencyAfter"}, {"latencyMs", {1, 5}}, {"maxCount", 3},
                           {"match", {{"operation", "GetEntity"}}}},
                          &error));
  json listed = set.ToJson()["rules"][0];
  listed.erase("matched");
  listed.erase("injected");
  auto again = ParseRule(listed, &error);
  ASSERT_TRUE(again.has_value()) << error;
  EXPECT_EQ(again->latency_max, 5ms);
  EXPECT_EQ(again->max_count, 3u);
  EXPECT_EQ(again->operations, std::vector<std::string>{"GetEntity"});
}

TEST(FaultRulesTest, RealisticScopesAndTableBeingDeleted) {
  FaultSet set;
  std::string error;
  EXPECT_FALSE(set.Realistic("a", "t"));
  ASSERT_TRUE(set.SetRealisticJson({{"enabled", true}, {"account", "a"}, {"tableBeingDeletedMs", 1000}}, &error)) << error;
  EXPECT_TRUE(set.active());
  EXPECT_TRUE(set.Realistic("a", "T"));
  EXPECT_FALSE(set.Realistic("b", "t"));
  ASSERT_TRUE(set.SetRealisticJson({{"enabled", false}, {"account", "a"}, {"table", "T"}}, &error));
  EXPECT_FALSE(set.Realistic("a", "t"));
  EXPECT_TRUE(set.Realistic("a", "u"));
  EXPECT_FALSE(set.SetRealisticJson({{"table", "t"}, {"enabled", true}}, &error));

  const auto now = FaultSet::Clock::now();
  set.NoteTableDeleted("a", "Orders", now);
  EXPECT_TRUE(set.TableBeingDeleted("a", "orders", now + 999ms));
  EXPECT_FALSE(set.TableBeingDeleted("b", "orders", now));
  EXPECT_FALSE(set.TableBeingDeleted("a", "orders", now + 1000ms));
}

TEST(FaultRulesTest, PageCutsAreSeededAndBelowAThousand) {
  auto cuts = [](uint64_t seed) {
    FaultSet set(seed, RealisticOptions{true});
    std::vector<size_t> out;
    for (int i = 0; i < 100; ++i) out.push_back(set.NextPageCut().max_rows);
    return out;
  };
  const auto a = cuts(3);
  EXPECT_EQ(a, cuts(3));
  EXPECT_NE(a, cuts(4));
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](size_t n) { return n < 1000; }));
  EXPECT_GT(std::count(a.begin(), a.end(), 0u), 5);  // empty pages happen
}

TEST(FaultRulesTest, RealisticLatencyFollowsItsMedian) {
  FaultSet set(1, RealisticOptions{true, 40000ms, 10ms});
  std::vector<int64_t> ms;
  for (int i = 0; i < 1001; ++i) ms.push_back(set.NextLatency().count());
  std::sort(ms.begin(), ms.end());
  EXPECT_GE(ms[500], 8);
  EXPECT_LE(ms[500], 11);
  EXPECT_LE(ms.back(), 200);
}

}  // namespace
}  // namespace tablestone::faults
