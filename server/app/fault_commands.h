// What `tablestone faults` does on this side of the wire
// (docs/testing-with-faults.md): a rule built from a few flags, rules checked
// by the server's own parser before anything is sent, and the server's
// listing made readable. Pure: no sockets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tablestone::app {

// `tablestone faults add` without --rule: the common case in flags. Empty /
// zero fields are left out of the rule.
struct FaultFlags {
  std::string id;
  std::string account;  // match.account
  std::string table;    // match.table
  std::vector<std::string> operations;  // match.operation
  std::string action;   // a rule action name; or from status/error_code
  int status = 0;       // 503 or 500, mapped to an action with error_code
  std::string error_code;  // ServerBusy, OperationTimedOut, InternalError
  uint64_t count = 0;   // maxCount
  double probability = 0;  // 0 = absent (the rule's default, 1)
  uint64_t every_nth = 0;
  uint64_t latency_ms = 0;  // latencyBefore/latencyAfter
};

// The rule the flags describe, or false with why (an action that
// contradicts the status or error code, a status no action answers with).
// The rule still goes through CheckFaultRules.
bool FaultRuleFromFlags(const FaultFlags& flags, nlohmann::json* rule, std::string* error);

// Checks `rules` (a rule, an array of rules, or the --faults file form) with
// the parser the server uses (server/faults/fault_rules.h), so an unknown
// operation name, field or action is refused here, with the server's
// message, before anything is sent.
bool CheckFaultRules(const nlohmann::json& rules, std::string* error);

// GET /_tablestone/faults's answer as lines for a terminal: one per rule
// (id, action, what it matches, its trigger, matched and injected counts),
// then the seed and realistic mode. Never throws on an unexpected shape.
std::string DescribeFaultListing(const nlohmann::json& listing);

}  // namespace tablestone::app
