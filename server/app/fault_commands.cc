#include "server/app/fault_commands.h"

#include <nlohmann/json.hpp>

#include "server/faults/fault_rules.h"

namespace tablestone::app {
namespace {

using json = nlohmann::json;

// The actions that answer with an error status, by the status and error
// code they answer with (docs/testing-with-faults.md, the `action` table).
struct ErrorAction {
  int status;
  const char* code;
  const char* action;
};
constexpr ErrorAction kErrorActions[] = {
    {503, "ServerBusy", "serverBusy"},
    {500, "OperationTimedOut", "timeoutBefore"},
    {500, "InternalError", "internalErrorBefore"},
};

std::string ErrorActionList() {
  std::string out;
  for (const ErrorAction& e : kErrorActions) {
    out += (out.empty() ? "" : ", ") + std::to_string(e.status) + " " + e.code;
  }
  return out;
}

// A field as text: a string as is, anything else as JSON, "?" when absent.
std::string Field(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return "?";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// "operation=A,B table=T" from a rule's match object.
std::string DescribeMatch(const json& match) {
  if (!match.is_object() || match.empty()) return "every request";
  std::string out;
  for (const auto& [key, value] : match.items()) {
    std::string shown;
    if (value.is_string()) {
      shown = value.get<std::string>();
    } else if (value.is_array()) {
      for (const json& v : value) shown += (shown.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
    } else if (key == "header" && value.is_object()) {
      shown = Field(value, "name") + ":" + Field(value, "value");
    } else {
      shown = value.dump();
    }
    out += (out.empty() ? "" : " ") + key + "=" + shown;
  }
  return out;
}

}  // namespace

bool FaultRuleFromFlags(const FaultFlags& flags, json* rule, std::string* error) {
  std::string action = flags.action;
  if (flags.status != 0 || !flags.error_code.empty()) {
    std::string chosen;
    for (const ErrorAction& e : kErrorActions) {
      if ((flags.status == 0 || flags.status == e.status) && (flags.error_code.empty() || flags.error_code == e.code)) {
        if (!chosen.empty()) {
          *error = "--status " + std::to_string(flags.status) + " is answered with more than one error code: add "
                   "--errorCode (" + ErrorActionList() + ")";
          return false;
        }
        chosen = e.action;
      }
    }
    if (chosen.empty()) {
      *error = "no fault answers with " +
               (flags.status != 0 ? std::to_string(flags.status) + (flags.error_code.empty() ? "" : " ") : "") +
               flags.error_code + "; the error answers are " + ErrorActionList() +
               " (other faults: --action, docs/testing-with-faults.md)";
      return false;
    }
    if (!action.empty() && action != chosen) {
      *error = "--action " + action + " does not answer with the --status/--errorCode given (that is " + chosen + ")";
      return false;
    }
    action = chosen;
  }
  json r = json::object();
  if (!flags.id.empty()) r["id"] = flags.id;
  json match = json::object();
  if (!flags.account.empty()) match["account"] = flags.account;
  if (!flags.table.empty()) match["table"] = flags.table;
  if (flags.operations.size() == 1) match["operation"] = flags.operations.front();
  if (flags.operations.size() > 1) match["operation"] = flags.operations;
  if (!match.empty()) r["match"] = match;
  r["action"] = action.empty() ? "serverBusy" : action;
  if (flags.probability > 0) r["probability"] = flags.probability;
  if (flags.every_nth > 0) r["everyNth"] = flags.every_nth;
  if (flags.count > 0) r["maxCount"] = flags.count;
  if (flags.latency_ms > 0) r["latencyMs"] = flags.latency_ms;
  *rule = std::move(r);
  return true;
}

bool CheckFaultRules(const json& rules, std::string* error) {
  // A scratch set: AddJson applies every check the server's own add does
  // (all or nothing), except those that depend on the server's state (ids
  // already there, the rules it already holds, who signs).
  faults::FaultSet scratch;
  return scratch.AddJson(rules, error).has_value();
}

std::string DescribeFaultListing(const json& listing) {
  if (!listing.is_object()) return listing.dump(2) + "\n";
  std::string out;
  const json* rules = listing.contains("rules") && listing["rules"].is_array() ? &listing["rules"] : nullptr;
  if (rules == nullptr || rules->empty()) out += "no fault rules\n";
  if (rules != nullptr) {
    for (const json& r : *rules) {
      if (!r.is_object()) continue;
      std::string line = Field(r, "id") + "  " + Field(r, "action") + "  " +
                         DescribeMatch(r.contains("match") ? r["match"] : json());
      for (const auto& [key, value] : r.items()) {
        if (key == "id" || key == "action" || key == "match" || key == "matched" || key == "injected") continue;
        if (key == "probability" && value.is_number() && value.get<double>() == 1.0) continue;  // the default
        line += "  " + key + "=" + value.dump();
      }
      line += "  matched " + Field(r, "matched") + ", injected " + Field(r, "injected");
      out += line + "\n";
    }
  }
  if (listing.contains("realistic") && listing["realistic"].is_object()) {
    const json& realistic = listing["realistic"];
    out += "realistic mode " + std::string(realistic.contains("enabled") && realistic["enabled"] == true ? "on" : "off");
    if (realistic.contains("scopes") && realistic["scopes"].is_object()) {
      for (const auto& [scope, on] : realistic["scopes"].items()) {
        out += ", " + scope + " " + (on.is_boolean() && on.get<bool>() ? "on" : "off");
      }
    }
    out += " (tableBeingDeletedMs " + Field(realistic, "tableBeingDeletedMs") + ", latencyMedianMs " +
           Field(realistic, "latencyMedianMs") + ")";
    if (listing.contains("seed")) out += "; seed " + listing["seed"].dump();
    out += "\n";
  }
  return out;
}

}  // namespace tablestone::app
