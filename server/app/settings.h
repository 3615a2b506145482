// The table of configuration settings behind Config: for each key its JSON
// path, environment variable, type, limits and help. One table drives the
// file reader, the environment reader, the flag parser and --help, so the
// four cannot drift apart. Internal to server/app.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/app/config.h"

namespace tablestone::app::internal {

enum class Kind { kString, kUint, kBool, kChoice };

using Value = std::variant<std::string, uint64_t, bool>;

struct Setting {
  std::string_view path;  // JSON path, e.g. "listen.port"
  std::string_view env;   // environment variable, e.g. "TABLESTONE_PORT"
  Kind kind;
  std::string_view help;
  uint64_t min = 0;              // kUint
  uint64_t max = UINT64_MAX;     // kUint
  std::string_view choices;      // kChoice: "a|b|c"
  // Extra check/normalisation for kString (may rewrite the value).
  bool (*check)(std::string* value, std::string* why) = nullptr;
  void (*set)(Config& config, const Value& value) = nullptr;
  std::string (*show)(const Config& config) = nullptr;
};

// Every setting except "accounts" (a list, handled on its own).
const std::vector<Setting>& Settings();
const Setting* FindSettingByPath(std::string_view path);
const Setting* FindSettingByEnv(std::string_view env);

// Text (environment or flag) -> typed value. On failure `why` says what is
// expected, e.g. "must be an integer between 0 and 65535".
bool ParseText(const Setting& setting, std::string_view text, Value* value, std::string* why);
// JSON value -> typed value, same checks.
bool ParseJson(const Setting& setting, const nlohmann::json& json, Value* value, std::string* why);

// Reads the JSON config file into `config`. Errors name the file and key.
bool ApplyConfigFile(const std::string& path, Config* config, std::string* error);

// Checks names/keys of an account list (non-empty, unique, base64 keys).
bool ValidateAccounts(const std::vector<api::AccountKeys>& accounts, std::string* why);

// "a|b|c" -> "a, b or c" for messages.
std::string DescribeChoices(std::string_view choices);

}  // namespace tablestone::app::internal
