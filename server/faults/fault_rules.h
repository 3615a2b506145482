// Fault rules and realistic mode (docs/testing-with-faults.md): what lets a
// user test retry and paging code against errors the real service gives now
// and then (ServerBusy, timeouts of writes that committed, closed
// connections, short and empty query pages, a deleted table's name held for
// a while). Pure: no Beast, no storage, no sockets; the dispatcher
// (server/api/dispatcher.cc) asks FaultSet what to do with each request and
// does it.
//
// A rule matches a request on account, table (case-insensitive, as table
// names are), operation (protocol::OperationName), HTTP method, PartitionKey
// prefix and one header name=value; all present criteria must hold. A
// matching request then fires the rule when its trigger says so: every Nth
// match, or with a probability drawn from the rule's own PRNG, seeded from
// the set's seed and the rule's id, so the same seed and the same sequence
// of requests give the same faults. `maxCount` caps the injections and a
// window (relative to the rule's creation) bounds them in time. A throttle
// rule instead fires when its token bucket (per account or per partition) is
// empty. The first rule (in insertion order) that fires decides; the others
// do not see the request (their counters do not move). Each rule counts the
// requests that matched it ("matched", whether it fired or not) and the
// faults it injected ("injected").
//
// Thread safety: every method may be called from any thread. active() is one
// relaxed load, so a server with no rules and realistic mode off pays that
// and a branch per request.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tablestone::faults {

// splitmix64: tiny, fast and good enough to pick faults; its whole state is
// one word, so a seed fixes every later draw.
class Prng {
 public:
  explicit Prng(uint64_t seed = 0) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi] (lo <= hi).
  uint64_t Between(uint64_t lo, uint64_t hi) { return lo + Next() % (hi - lo + 1); }

 private:
  uint64_t state_;
};

// A token bucket: `rate` tokens a second up to `burst`; Take() spends one.
// Starts full. Not thread-safe (FaultSet holds its lock).
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double rate, double burst, Clock::time_point now) : rate_(rate), burst_(burst), tokens_(burst), last_(now) {}
  // True when a token was there (the request may pass).
  bool Take(Clock::time_point now) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    if (elapsed > 0) {
      tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
      last_ = now;
    }
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

// What a firing rule does. JSON names in parentheses (the "action" field).
enum class FaultAction {
  kServerBusy,           // (serverBusy) 503 ServerBusy; the operation does not run
  kTimeoutBefore,        // (timeoutBefore) 500 OperationTimedOut; does not run
  kInternalErrorBefore,  // (internalErrorBefore) 500 InternalError; does not run
  kTimeoutAfter,         // (timeoutAfter) runs and commits, then 500 OperationTimedOut
  kCloseAfter,           // (closeAfter) runs and commits, then the connection closes unanswered
  kResetMidResponse,     // (resetMidResponse) runs, half the response is written, then a TCP reset
  kLatencyBefore,        // (latencyBefore) waits latencyMs, then runs
  kLatencyAfter,         // (latencyAfter) runs, then waits latencyMs before answering
  kThrottle,             // (throttle) 503 ServerBusy above the token bucket's rate
};

std::string_view ActionName(FaultAction action);

// One request as the rules see it. Strings view the request, which outlives
// the call.
struct FaultRequest {
  std::string_view account;
  std::string_view table;      // empty for service-level operations
  std::string_view operation;  // protocol::OperationName
  std::string_view method;     // "GET", "POST", ...
  std::optional<std::string_view> partition_key;  // from the URL or an insert's body
  // The first value of a header by case-insensitive name, or nullopt; unset
  // = no headers.
  std::function<std::optional<std::string_view>(std::string_view)> header;
};

// What to do with one request.
struct FaultDecision {
  FaultAction action = FaultAction::kServerBusy;
  std::string rule_id;
  std::chrono::milliseconds latency{0};  // latency actions only
};

struct FaultRule {
  std::string id;  // unique in the set; "r<N>" when not given
  // Match (empty = any).
  std::string account;
  std::string table;
  std::vector<std::string> operations;
  std::string method;
  std::string partition_key_prefix;
  bool has_partition_key_prefix = false;
  std::string header_name;
  std::string header_value;
  // Trigger.
  FaultAction action = FaultAction::kServerBusy;
  double probability = 1.0;
  uint64_t every_nth = 0;  // 0 = use probability
  uint64_t max_count = 0;  // 0 = unlimited
  std::chrono::milliseconds window_start{0};     // after creation
  std::optional<std::chrono::milliseconds> window_duration;
  std::chrono::milliseconds latency_min{0};
  std::chrono::milliseconds latency_max{0};
  // Throttle.
  bool per_partition = false;
  double rate_per_second = 0;
  double burst = 0;
};

// Parses one rule (docs/testing-with-faults.md, "Rule format"). Unknown
// fields and unknown operation names are refused so that a typo does not
// silently match everything or nothing; durations are bounded
// (kMaxLatencyMs, kMaxWindowMs). On failure returns nullopt and says why in
// *error.
std::optional<FaultRule> ParseRule(const nlohmann::json& json, std::string* error);

// Realistic mode's settings (docs/testing-with-faults.md, "Realistic mode").
struct RealisticOptions {
  bool enabled = false;  // for every account and table
  // How long a deleted table's name answers 409 TableBeingDeleted.
  std::chrono::milliseconds table_being_deleted{40000};
  // Per-request latency: 0 = none; else a log-normal draw with this median,
  // capped at 20 times the median.
  std::chrono::milliseconds latency_median{0};
};

// How realistic mode cuts one query page.
struct PageCut {
  size_t max_rows = 1000;  // the page ends after this many rows (0: an empty page with a token)
  bool partition_key_only = false;  // a token at a partition boundary names only the partition
};

// Bounds of a rule's numbers: a latency longer than any client waits, and a
// window or realistic-mode duration of more than a month, are mistakes.
inline constexpr double kMaxLatencyMs = 10 * 60 * 1000.0;
inline constexpr double kMaxWindowMs = 31 * 24 * 3600 * 1000.0;

class FaultSet {
 public:
  using Clock = std::chrono::steady_clock;
  // Rules a set holds at most: Evaluate walks them all for every request.
  static constexpr size_t kMaxRules = 1000;

  explicit FaultSet(uint64_t seed = 0, RealisticOptions realistic = {});

  // One relaxed load: any rule, or realistic mode on anywhere.
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // True when some rule needs the PartitionKey (a prefix match or a
  // per-partition throttle), so the caller digs it out of an insert's body.
  bool wants_partition_key() const { return wants_partition_key_.load(std::memory_order_relaxed); }

  // Adds a rule; refuses a duplicate id and a rule beyond kMaxRules. Returns
  // the id. Constant time (ids are hashed).
  std::optional<std::string> Add(FaultRule rule, std::string* error);
  // Adds every rule of `json` (one rule object, an array of them, or
  // {"rules":[...], "seed":N, "realistic":{...}}); all or nothing.
  std::optional<std::vector<std::string>> AddJson(const nlohmann::json& json, std::string* error);
  bool Remove(std::string_view id);
  void Clear();  // every rule (realistic mode stays as it is)
  // {"seed":N,"rules":[{...the rule..., "matched":N, "injected":N}], "realistic":{...}}
  nlohmann::json ToJson() const;
  // (rule id, injections) of every rule, for the metrics.
  std::vector<std::pair<std::string, uint64_t>> Counts() const;

  // The fault for this request, if a rule fires; counts it.
  std::optional<FaultDecision> Evaluate(const FaultRequest& request, Clock::time_point now = Clock::now());

  // Realistic mode. SetRealistic with an empty account changes the default
  // (and the window and latency); with an account (and table) it switches the
  // mode for that account (or table) only. Settings from JSON:
  // {"enabled":B, "account":A, "table":T, "tableBeingDeletedMs":N, "latencyMedianMs":N, "seed":N}.
  bool SetRealisticJson(const nlohmann::json& json, std::string* error);
  bool Realistic(std::string_view account, std::string_view table) const;
  // A cut for the next query page (realistic mode on for it), drawn from the seeded PRNG.
  PageCut NextPageCut();
  // The per-request latency to add, or 0.
  std::chrono::milliseconds NextLatency();
  void NoteTableDeleted(std::string_view account, std::string_view table, Clock::time_point now = Clock::now());
  // True while a table of that name was deleted less than the window ago.
  bool TableBeingDeleted(std::string_view account, std::string_view table, Clock::time_point now = Clock::now());

 private:
  struct Entry {
    FaultRule rule;
    Clock::time_point created;
    Prng prng;
    uint64_t matched = 0;
    uint64_t injected = 0;
    std::map<std::string, TokenBucket, std::less<>> buckets;
  };
  bool Matches(const Entry& e, const FaultRequest& request) const;
  void Refresh();  // active_ and wants_partition_key_ after a change (lock held)
  std::optional<std::string> AddLocked(FaultRule rule, std::string* error);
  void RemoveLocked(std::vector<Entry>::iterator it);

  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t next_id_ = 1;
  std::vector<Entry> rules_;
  std::unordered_set<std::string> ids_;  // of rules_
  size_t partition_key_rules_ = 0;       // rules_ that need the PartitionKey
  RealisticOptions realistic_;
  std::map<std::string, bool, std::less<>> realistic_scopes_;  // "account" or "account/table" (lower-case table)
  Prng realistic_prng_;
  std::map<std::string, Clock::time_point, std::less<>> deleted_tables_;  // "account/table"
  std::atomic<bool> active_{false};
  std::atomic<bool> wants_partition_key_{false};
};

}  // namespace tablestone::faults
