#include "server/faults/fault_rules.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "protocol/operation.h"

namespace tablestone::faults {
namespace {

using nlohmann::json;

constexpr struct {
  FaultAction action;
  std::string_view name;
} kActions[] = {
    {FaultAction::kServerBusy, "serverBusy"},
    {FaultAction::kTimeoutBefore, "timeoutBefore"},
    {FaultAction::kInternalErrorBefore, "internalErrorBefore"},
    {FaultAction::kTimeoutAfter, "timeoutAfter"},
    {FaultAction::kCloseAfter, "closeAfter"},
    {FaultAction::kResetMidResponse, "resetMidResponse"},
    {FaultAction::kLatencyBefore, "latencyBefore"},
    {FaultAction::kLatencyAfter, "latencyAfter"},
    {FaultAction::kThrottle, "throttle"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && Lower(a) == Lower(b);
}

// FNV-1a: mixes a rule's id into the set's seed.
uint64_t Hash(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  return h;
}

bool Fail(std::string* error, std::string why) {
  if (error != nullptr) *error = std::move(why);
  return false;
}

bool GetString(const json& j, const char* key, std::string* out, std::string* error) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  if (!it->is_string()) return Fail(error, std::string(key) + " must be a string");
  *out = it->get<std::string>();
  return true;
}

// A number of milliseconds in [0, max]: checked as a double before the
// conversion, which is undefined for values out of int64_t's range (1e300).
bool IsMillis(const json& j, double max) {
  return j.is_number() && j.get<double>() >= 0 && j.get<double>() <= max;
}

bool GetMillis(const json& j, const char* key, std::chrono::milliseconds* out, std::string* error) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  if (!IsMillis(*it, kMaxWindowMs)) {
    return Fail(error, std::string(key) + " must be a number of milliseconds in [0, " +
                           std::to_string(static_cast<int64_t>(kMaxWindowMs)) + "]");
  }
  *out = std::chrono::milliseconds(static_cast<int64_t>(it->get<double>()));
  return true;
}

bool IsOperationName(std::string_view name) {
  for (std::string_view known : protocol::OperationNames()) {
    if (known == name) return true;
  }
  return false;
}

std::string OperationNameList() {
  std::string out;
  for (std::string_view known : protocol::OperationNames()) {
    if (!out.empty()) out += ", ";
    out += known;
  }
  return out;
}

// A JSON integer >= `min` (nlohmann keeps literal and parsed non-negative
// numbers as signed or unsigned alike).
bool IsCount(const json& j, int64_t min) {
  return j.is_number_integer() && (j.is_number_unsigned() || j.get<int64_t>() >= min) &&
         (!j.is_number_unsigned() || j.get<uint64_t>() >= static_cast<uint64_t>(min));
}

bool CheckKeys(const json& j, std::initializer_list<std::string_view> known, std::string_view what,
               std::string* error) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      return Fail(error, "unknown field in " + std::string(what) + ": " + it.key());
    }
  }
  return true;
}

json RuleJson(const FaultRule& r) {
  json j = {{"id", r.id}, {"action", ActionName(r.action)}};
  json m = json::object();
  if (!r.account.empty()) m["account"] = r.account;
  if (!r.table.empty()) m["table"] = r.table;
  if (!r.operations.empty()) m["operation"] = r.operations;
  if (!r.method.empty()) m["method"] = r.method;
  if (r.has_partition_key_prefix) m["partitionKeyPrefix"] = r.partition_key_prefix;
  if (!r.header_name.empty()) m["header"] = {{"name", r.header_name}, {"value", r.header_value}};
  j["match"] = m;
  if (r.every_nth > 0) {
    j["everyNth"] = r.every_nth;
  } else {
    j["probability"] = r.probability;
  }
  if (r.max_count > 0) j["maxCount"] = r.max_count;
  if (r.window_start.count() > 0 || r.window_duration) {
    j["window"] = {{"startAfterMs", r.window_start.count()}};
    if (r.window_duration) j["window"]["durationMs"] = r.window_duration->count();
  }
  if (r.action == FaultAction::kLatencyBefore || r.action == FaultAction::kLatencyAfter) {
    j["latencyMs"] = r.latency_min == r.latency_max ? json(r.latency_min.count())
                                                    : json::array({r.latency_min.count(), r.latency_max.count()});
  }
  if (r.action == FaultAction::kThrottle) {
    j["throttle"] = {{"per", r.per_partition ? "partition" : "account"},
                     {"ratePerSecond", r.rate_per_second},
                     {"burst", r.burst}};
  }
  return j;
}

}  // namespace

std::string_view ActionName(FaultAction action) {
  for (const auto& a : kActions) {
    if (a.action == action) return a.name;
  }
  return "unknown";
}

std::optional<FaultRule> ParseRule(const json& j, std::string* error) {
  if (!j.is_object()) return Fail(error, "a rule must be a JSON object"), std::nullopt;
  if (!CheckKeys(j, {"id", "match", "action", "probability", "everyNth", "maxCount", "window", "latencyMs", "throttle"},
                 "rule", error)) {
    return std::nullopt;
  }
  FaultRule r;
  if (!GetString(j, "id", &r.id, error)) return std::nullopt;
  std::string action;
  if (!GetString(j, "action", &action, error)) return std::nullopt;
  bool known = false;
  for (const auto& a : kActions) {
    if (a.name == action) {
      r.action = a.action;
      known = true;
    }
  }
  if (!known) return Fail(error, "unknown or missing action: \"" + action + "\""), std::nullopt;

  if (auto m = j.find("match"); m != j.end()) {
    if (!m->is_object()) return Fail(error, "match must be an object"), std::nullopt;
    if (!CheckKeys(*m, {"account", "table", "operation", "method", "partitionKeyPrefix", "header"}, "match", error)) {
      return std::nullopt;
    }
    if (!GetString(*m, "account", &r.account, error) || !GetString(*m, "table", &r.table, error) ||
        !GetString(*m, "method", &r.method, error)) {
      return std::nullopt;
    }
    if (auto op = m->find("operation"); op != m->end()) {
      if (op->is_string()) {
        r.operations.push_back(op->get<std::string>());
      } else if (op->is_array() && std::all_of(op->begin(), op->end(), [](const json& e) { return e.is_string(); })) {
        for (const json& e : *op) r.operations.push_back(e.get<std::string>());
      } else {
        return Fail(error, "match.operation must be a string or an array of strings"), std::nullopt;
      }
      // Names are compared exactly (Matches): a typo would never fire.
      for (const std::string& name : r.operations) {
        if (!IsOperationName(name)) {
          return Fail(error, "unknown operation in match.operation: \"" + name + "\" (the operations are: " +
                                 OperationNameList() + ")"),
                 std::nullopt;
        }
      }
    }
    if (m->contains("partitionKeyPrefix")) {
      if (!GetString(*m, "partitionKeyPrefix", &r.partition_key_prefix, error)) return std::nullopt;
      r.has_partition_key_prefix = true;
    }
    if (auto h = m->find("header"); h != m->end()) {
      if (!h->is_object()) return Fail(error, "match.header must be an object"), std::nullopt;
      if (!CheckKeys(*h, {"name", "value"}, "match.header", error) || !GetString(*h, "name", &r.header_name, error) ||
          !GetString(*h, "value", &r.header_value, error)) {
        return std::nullopt;
      }
      if (r.header_name.empty()) return Fail(error, "match.header needs a name"), std::nullopt;
    }
  }
  if (j.contains("probability") && j.contains("everyNth")) {
    return Fail(error, "give probability or everyNth, not both"), std::nullopt;
  }
  if (auto p = j.find("probability"); p != j.end()) {
    if (!p->is_number() || p->get<double>() < 0 || p->get<double>() > 1) {
      return Fail(error, "probability must be a number in [0, 1]"), std::nullopt;
    }
    r.probability = p->get<double>();
  }
  if (auto n = j.find("everyNth"); n != j.end()) {
    if (!IsCount(*n, 1)) {
      return Fail(error, "everyNth must be an integer >= 1"), std::nullopt;
    }
    r.every_nth = n->get<uint64_t>();
  }
  if (auto n = j.find("maxCount"); n != j.end()) {
    if (!IsCount(*n, 0)) return Fail(error, "maxCount must be an integer >= 0"), std::nullopt;
    r.max_count = n->get<uint64_t>();
  }
  if (auto w = j.find("window"); w != j.end()) {
    if (!w->is_object() || !CheckKeys(*w, {"startAfterMs", "durationMs"}, "window", error)) {
      if (error != nullptr && error->empty()) *error = "window must be an object";
      return std::nullopt;
    }
    if (!GetMillis(*w, "startAfterMs", &r.window_start, error)) return std::nullopt;
    if (w->contains("durationMs")) {
      std::chrono::milliseconds d{0};
      if (!GetMillis(*w, "durationMs", &d, error)) return std::nullopt;
      r.window_duration = d;
    }
  }
  const bool latency = r.action == FaultAction::kLatencyBefore || r.action == FaultAction::kLatencyAfter;
  if (auto l = j.find("latencyMs"); l != j.end()) {
    if (!latency) return Fail(error, "latencyMs is for the latency actions"), std::nullopt;
    if (IsMillis(*l, kMaxLatencyMs)) {
      r.latency_min = r.latency_max = std::chrono::milliseconds(static_cast<int64_t>(l->get<double>()));
    } else if (l->is_array() && l->size() == 2 && IsMillis((*l)[0], kMaxLatencyMs) &&
               IsMillis((*l)[1], kMaxLatencyMs) && (*l)[0].get<double>() <= (*l)[1].get<double>()) {
      r.latency_min = std::chrono::milliseconds(static_cast<int64_t>((*l)[0].get<double>()));
      r.latency_max = std::chrono::milliseconds(static_cast<int64_t>((*l)[1].get<double>()));
    } else {
      return Fail(error, "latencyMs must be a number or [min, max] of milliseconds in [0, " +
                             std::to_string(static_cast<int64_t>(kMaxLatencyMs)) + "]"),
             std::nullopt;
    }
  } else if (latency) {
    return Fail(error, "a latency action needs latencyMs"), std::nullopt;
  }
  if (auto t = j.find("throttle"); t != j.end()) {
    if (r.action != FaultAction::kThrottle) return Fail(error, "throttle is for the throttle action"), std::nullopt;
    if (!t->is_object() || !CheckKeys(*t, {"per", "ratePerSecond", "burst"}, "throttle", error)) {
      if (error != nullptr && error->empty()) *error = "throttle must be an object";
      return std::nullopt;
    }
    std::string per = "account";
    if (!GetString(*t, "per", &per, error)) return std::nullopt;
    if (per != "account" && per != "partition") return Fail(error, "throttle.per must be account or partition"), std::nullopt;
    r.per_partition = per == "partition";
    auto rate = t->find("ratePerSecond");
    if (rate == t->end() || !rate->is_number() || rate->get<double>() <= 0) {
      return Fail(error, "throttle.ratePerSecond must be a number > 0"), std::nullopt;
    }
    r.rate_per_second = rate->get<double>();
    r.burst = r.rate_per_second;
    if (auto b = t->find("burst"); b != t->end()) {
      if (!b->is_number() || b->get<double>() < 1) return Fail(error, "throttle.burst must be a number >= 1"), std::nullopt;
      r.burst = b->get<double>();
    }
  } else if (r.action == FaultAction::kThrottle) {
    return Fail(error, "the throttle action needs throttle.ratePerSecond"), std::nullopt;
  }
  return r;
}

FaultSet::FaultSet(uint64_t seed, RealisticOptions realistic)
    : seed_(seed), realistic_(realistic), realistic_prng_(seed ^ Hash("realistic")) {
  std::lock_guard lock(mu_);
  Refresh();
}

void FaultSet::Refresh() {
  bool any_realistic = realistic_.enabled;
  for (const auto& [scope, on] : realistic_scopes_) any_realistic = any_realistic || on;
  wants_partition_key_.store(partition_key_rules_ > 0, std::memory_order_relaxed);
  active_.store(!rules_.empty() || any_realistic, std::memory_order_relaxed);
}

namespace {
bool NeedsPartitionKey(const FaultRule& rule) { return rule.has_partition_key_prefix || rule.per_partition; }
}  // namespace

std::optional<std::string> FaultSet::AddLocked(FaultRule rule, std::string* error) {
  if (rules_.size() >= kMaxRules) {
    Fail(error, "the server holds " + std::to_string(kMaxRules) + " fault rules already (the most it takes)");
    return std::nullopt;
  }
  if (rule.id.empty()) {
    do {
      rule.id = "r" + std::to_string(next_id_++);
    } while (ids_.contains(rule.id));
  } else if (ids_.contains(rule.id)) {
    Fail(error, "a rule with id \"" + rule.id + "\" exists");
    return std::nullopt;
  }
  const uint64_t rule_seed = seed_ ^ Hash(rule.id);
  std::string id = rule.id;
  ids_.insert(id);
  partition_key_rules_ += NeedsPartitionKey(rule) ? 1 : 0;
  rules_.push_back(Entry{std::move(rule), Clock::now(), Prng(rule_seed), 0, 0, {}});
  return id;
}

void FaultSet::RemoveLocked(std::vector<Entry>::iterator it) {
  ids_.erase(it->rule.id);
  partition_key_rules_ -= NeedsPartitionKey(it->rule) ? 1 : 0;
  rules_.erase(it);
}

std::optional<std::string> FaultSet::Add(FaultRule rule, std::string* error) {
  std::lock_guard lock(mu_);
  auto id = AddLocked(std::move(rule), error);
  Refresh();
  return id;
}

std::optional<std::vector<std::string>> FaultSet::AddJson(const json& j, std::string* error) {
  std::vector<FaultRule> rules;
  const json* list = &j;
  if (j.is_object() && (j.contains("rules") || j.contains("seed") || j.contains("realistic"))) {
    if (!CheckKeys(j, {"rules", "seed", "realistic"}, "fault file", error)) return std::nullopt;
    if (auto s = j.find("seed"); s != j.end()) {
      if (!IsCount(*s, 0)) return Fail(error, "seed must be an integer >= 0"), std::nullopt;
      std::lock_guard lock(mu_);
      seed_ = s->get<uint64_t>();
      realistic_prng_ = Prng(seed_ ^ Hash("realistic"));
    }
    if (auto r = j.find("realistic"); r != j.end()) {
      if (!SetRealisticJson(*r, error)) return std::nullopt;
    }
    static const json kNone = json::array();
    auto it = j.find("rules");
    list = it == j.end() ? &kNone : &*it;
  }
  if (list->is_object()) {
    auto rule = ParseRule(*list, error);
    if (!rule) return std::nullopt;
    rules.push_back(std::move(*rule));
  } else if (list->is_array()) {
    if (list->size() > kMaxRules) {
      return Fail(error, std::to_string(list->size()) + " rules: the server takes at most " +
                             std::to_string(kMaxRules)),
             std::nullopt;
    }
    for (const json& e : *list) {
      auto rule = ParseRule(e, error);
      if (!rule) return std::nullopt;
      rules.push_back(std::move(*rule));
    }
  } else {
    return Fail(error, "expected a rule, an array of rules or {\"rules\":[...]}"), std::nullopt;
  }
  // All or nothing, under one lock: checked first, so nothing is undone.
  std::lock_guard lock(mu_);
  if (rules_.size() + rules.size() > kMaxRules) {
    return Fail(error, "the server holds " + std::to_string(rules_.size()) + " fault rules; " +
                           std::to_string(rules.size()) + " more would pass the most it takes (" +
                           std::to_string(kMaxRules) + ")"),
           std::nullopt;
  }
  std::unordered_set<std::string_view> named;
  for (const FaultRule& rule : rules) {
    if (rule.id.empty()) continue;
    if (ids_.contains(rule.id) || !named.insert(rule.id).second) {
      return Fail(error, "a rule with id \"" + rule.id + "\" exists"), std::nullopt;
    }
  }
  std::vector<std::string> ids;
  ids.reserve(rules.size());
  for (FaultRule& rule : rules) ids.push_back(*AddLocked(std::move(rule), error));
  Refresh();
  return ids;
}

bool FaultSet::Remove(std::string_view id) {
  std::lock_guard lock(mu_);
  if (!ids_.contains(std::string(id))) return false;
  RemoveLocked(std::find_if(rules_.begin(), rules_.end(), [&](const Entry& e) { return e.rule.id == id; }));
  Refresh();
  return true;
}

void FaultSet::Clear() {
  std::lock_guard lock(mu_);
  rules_.clear();
  ids_.clear();
  partition_key_rules_ = 0;
  Refresh();
}

json FaultSet::ToJson() const {
  std::lock_guard lock(mu_);
  json rules = json::array();
  for (const Entry& e : rules_) {
    json r = RuleJson(e.rule);
    r["matched"] = e.matched;
    r["injected"] = e.injected;
    rules.push_back(std::move(r));
  }
  json scopes = json::object();
  for (const auto& [scope, on] : realistic_scopes_) scopes[scope] = on;
  return {{"seed", seed_},
          {"rules", std::move(rules)},
          {"realistic",
           {{"enabled", realistic_.enabled},
            {"tableBeingDeletedMs", realistic_.table_being_deleted.count()},
            {"latencyMedianMs", realistic_.latency_median.count()},
            {"scopes", std::move(scopes)}}}};
}

std::vector<std::pair<std::string, uint64_t>> FaultSet::Counts() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const Entry& e : rules_) out.emplace_back(e.rule.id, e.injected);
  return out;
}

bool FaultSet::Matches(const Entry& e, const FaultRequest& q) const {
  const FaultRule& r = e.rule;
  if (!r.account.empty() && r.account != q.account) return false;
  if (!r.table.empty() && !EqualsIgnoreCase(r.table, q.table)) return false;
  if (!r.operations.empty() &&
      std::none_of(r.operations.begin(), r.operations.end(), [&](const std::string& op) { return op == q.operation; })) {
    return false;
  }
  if (!r.method.empty() && !EqualsIgnoreCase(r.method, q.method)) return false;
  if (r.has_partition_key_prefix &&
      (!q.partition_key || q.partition_key->substr(0, r.partition_key_prefix.size()) != r.partition_key_prefix)) {
    return false;
  }
  if (!r.header_name.empty()) {
    auto v = q.header ? q.header(r.header_name) : std::nullopt;
    if (!v || *v != r.header_value) return false;
  }
  return true;
}

std::optional<FaultDecision> FaultSet::Evaluate(const FaultRequest& q, Clock::time_point now) {
  std::lock_guard lock(mu_);
  for (Entry& e : rules_) {
    const FaultRule& r = e.rule;
    if (!Matches(e, q)) continue;
    // Counted before the window and the cap, so a test reads how many of its
    // requests the server saw (retries included).
    ++e.matched;
    if (now < e.created + r.window_start) continue;
    if (r.window_duration && now >= e.created + r.window_start + *r.window_duration) continue;
    if (r.max_count > 0 && e.injected >= r.max_count) continue;
    bool fire;
    if (r.action == FaultAction::kThrottle) {
      std::string key(q.account);
      if (r.per_partition) {
        key += '/';
        key += Lower(q.table);
        key += '/';
        key += q.partition_key.value_or("");
      }
      auto it = e.buckets.find(key);
      if (it == e.buckets.end()) it = e.buckets.emplace(key, TokenBucket(r.rate_per_second, r.burst, now)).first;
      fire = !it->second.Take(now);
    } else if (r.every_nth > 0) {
      fire = e.matched % r.every_nth == 0;
    } else {
      // Drawn for every match, fired or not, so the sequence depends only on
      // the seed and the requests.
      fire = e.prng.NextDouble() < r.probability;
    }
    if (!fire) continue;
    ++e.injected;
    FaultDecision d{r.action, r.id, r.latency_min};
    if (r.latency_max > r.latency_min) {
      d.latency = std::chrono::milliseconds(
          e.prng.Between(static_cast<uint64_t>(r.latency_min.count()), static_cast<uint64_t>(r.latency_max.count())));
    }
    return d;
  }
  return std::nullopt;
}

bool FaultSet::SetRealisticJson(const json& j, std::string* error) {
  if (!j.is_object()) return Fail(error, "realistic settings must be an object");
  if (!CheckKeys(j, {"enabled", "account", "table", "tableBeingDeletedMs", "latencyMedianMs", "seed"}, "realistic",
                 error)) {
    return false;
  }
  std::string account, table;
  if (!GetString(j, "account", &account, error) || !GetString(j, "table", &table, error)) return false;
  if (!table.empty() && account.empty()) return Fail(error, "realistic.table needs realistic.account");
  std::optional<bool> enabled;
  if (auto e = j.find("enabled"); e != j.end()) {
    if (!e->is_boolean()) return Fail(error, "realistic.enabled must be true or false");
    enabled = e->get<bool>();
  }
  RealisticOptions next;
  {
    std::lock_guard lock(mu_);
    next = realistic_;
  }
  if (!GetMillis(j, "tableBeingDeletedMs", &next.table_being_deleted, error) ||
      !GetMillis(j, "latencyMedianMs", &next.latency_median, error)) {
    return false;
  }
  if (auto s = j.find("seed"); s != j.end() && !IsCount(*s, 0)) {
    return Fail(error, "realistic.seed must be an integer >= 0");
  }
  std::lock_guard lock(mu_);
  realistic_.table_being_deleted = next.table_being_deleted;
  realistic_.latency_median = next.latency_median;
  if (auto s = j.find("seed"); s != j.end()) realistic_prng_ = Prng(s->get<uint64_t>() ^ Hash("realistic"));
  if (enabled) {
    if (account.empty()) {
      realistic_.enabled = *enabled;
    } else {
      realistic_scopes_[table.empty() ? account : account + "/" + Lower(table)] = *enabled;
    }
  }
  Refresh();
  return true;
}

bool FaultSet::Realistic(std::string_view account, std::string_view table) const {
  std::lock_guard lock(mu_);
  if (!table.empty()) {
    auto it = realistic_scopes_.find(std::string(account) + "/" + Lower(table));
    if (it != realistic_scopes_.end()) return it->second;
  }
  auto it = realistic_scopes_.find(account);
  if (it != realistic_scopes_.end()) return it->second;
  return realistic_.enabled;
}

PageCut FaultSet::NextPageCut() {
  std::lock_guard lock(mu_);
  // One page in five is empty, two in five end within the first 20 rows
  // (so small test tables are cut too), the rest anywhere below 1000.
  PageCut cut;
  const uint64_t kind = realistic_prng_.Between(0, 4);
  cut.max_rows = kind == 0 ? 0 : kind <= 2 ? realistic_prng_.Between(1, 20) : realistic_prng_.Between(21, 999);
  cut.partition_key_only = realistic_prng_.Between(0, 1) == 1;
  return cut;
}

std::chrono::milliseconds FaultSet::NextLatency() {
  std::lock_guard lock(mu_);
  const auto median = realistic_.latency_median;
  if (median.count() <= 0) return std::chrono::milliseconds(0);
  // Log-normal with sigma 0.5 (Box-Muller): most requests near the median,
  // a tail to a few times it; capped at 20x.
  const double u1 = std::max(realistic_prng_.NextDouble(), 1e-12);
  const double u2 = realistic_prng_.NextDouble();
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
  const double ms = std::min(median.count() * std::exp(0.5 * z), 20.0 * median.count());
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

void FaultSet::NoteTableDeleted(std::string_view account, std::string_view table, Clock::time_point now) {
  std::lock_guard lock(mu_);
  // Forget names whose window has passed, so the map stays as small as the
  // deletions of the last window.
  for (auto it = deleted_tables_.begin(); it != deleted_tables_.end();) {
    it = now - it->second >= realistic_.table_being_deleted ? deleted_tables_.erase(it) : std::next(it);
  }
  deleted_tables_[std::string(account) + "/" + Lower(table)] = now;
}

bool FaultSet::TableBeingDeleted(std::string_view account, std::string_view table, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = deleted_tables_.find(std::string(account) + "/" + Lower(table));
  return it != deleted_tables_.end() && now - it->second < realistic_.table_being_deleted;
}

}  // namespace tablestone::faults
