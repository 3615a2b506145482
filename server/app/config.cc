#include "server/app/config.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "protocol/base64.h"
#include "server/api/ui_routes.h"
#include "server/app/logging.h"
#include "server/app/settings.h"
#include "storage/model/ascii.h"

extern char** environ;

namespace tablestone::app {
namespace internal {
namespace {

bool CheckString(const Setting& setting, std::string text, Value* value, std::string* why) {
  if (setting.kind == Kind::kChoice) {
    std::string lowered = model::ToAsciiLower(text);
    std::string_view rest = setting.choices;
    while (!rest.empty()) {
      size_t bar = rest.find('|');
      std::string_view choice = rest.substr(0, bar);
      if (lowered == choice) {
        *value = std::string(choice);
        return true;
      }
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
    *why = "must be one of " + DescribeChoices(setting.choices);
    return false;
  }
  if (setting.check != nullptr && !setting.check(&text, why)) return false;
  *value = std::move(text);
  return true;
}

std::string RangeMessage(const Setting& setting) {
  if (setting.max == UINT64_MAX) return "must be an integer >= " + std::to_string(setting.min);
  return "must be an integer between " + std::to_string(setting.min) + " and " + std::to_string(setting.max);
}

}  // namespace

const Setting* FindSettingByPath(std::string_view path) {
  for (const auto& s : Settings()) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

const Setting* FindSettingByEnv(std::string_view env) {
  for (const auto& s : Settings()) {
    if (s.env == env) return &s;
  }
  return nullptr;
}

std::string DescribeChoices(std::string_view choices) {
  std::vector<std::string> parts;
  std::string_view rest = choices;
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    parts.emplace_back(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " or " : ", ";
    out += "'" + parts[i] + "'";
  }
  return out;
}

bool ParseText(const Setting& setting, std::string_view text, Value* value, std::string* why) {
  switch (setting.kind) {
    case Kind::kString:
    case Kind::kChoice:
      return CheckString(setting, std::string(text), value, why);
    case Kind::kBool: {
      std::string lowered = model::ToAsciiLower(text);
      if (lowered == "true" || lowered == "1" || lowered == "yes" || lowered == "on") {
        *value = true;
        return true;
      }
      if (lowered == "false" || lowered == "0" || lowered == "no" || lowered == "off") {
        *value = false;
        return true;
      }
      *why = "must be true or false";
      return false;
    }
    case Kind::kUint: {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < setting.min ||
          n > setting.max) {
        *why = RangeMessage(setting);
        return false;
      }
      *value = n;
      return true;
    }
  }
  return false;
}

bool ParseJson(const Setting& setting, const nlohmann::json& json, Value* value, std::string* why) {
  switch (setting.kind) {
    case Kind::kString:
    case Kind::kChoice:
      if (!json.is_string()) {
        *why = setting.kind == Kind::kChoice ? "must be one of " + DescribeChoices(setting.choices)
                                             : std::string("must be a string");
        return false;
      }
      return CheckString(setting, json.get<std::string>(), value, why);
    case Kind::kBool:
      if (!json.is_boolean()) {
        *why = "must be true or false";
        return false;
      }
      *value = json.get<bool>();
      return true;
    case Kind::kUint: {
      if (!json.is_number_integer() || (json.is_number_integer() && !json.is_number_unsigned() &&
                                        json.get<int64_t>() < 0)) {
        *why = RangeMessage(setting);
        return false;
      }
      uint64_t n = json.get<uint64_t>();
      if (n < setting.min || n > setting.max) {
        *why = RangeMessage(setting);
        return false;
      }
      *value = n;
      return true;
    }
  }
  return false;
}

bool ValidateAccounts(const std::vector<api::AccountKeys>& accounts, std::string* why) {
  if (accounts.empty()) {
    *why = "at least one account is required";
    return false;
  }
  std::set<std::string> seen;
  for (const auto& account : accounts) {
    // Azure account names: 3-24 lower-case letters and digits.
    const auto& name = account.name;
    bool name_ok = name.size() >= 3 && name.size() <= 24 &&
                   std::all_of(name.begin(), name.end(), [](char c) {
                     return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                   });
    if (!name_ok) {
      *why = "account name '" + name + "' must be 3-24 lower-case letters and digits";
      return false;
    }
    if (!seen.insert(name).second) {
      *why = "account '" + name + "' is listed twice";
      return false;
    }
    if (account.keys.empty() || account.keys.size() > 2) {
      *why = "account '" + name + "' needs one or two keys";
      return false;
    }
    for (const auto& key : account.keys) {
      auto decoded = protocol::Base64Decode(key);
      if (key.empty() || !decoded || decoded->empty()) {
        *why = "a key of account '" + name + "' is not valid base64";
        return false;
      }
    }
  }
  return true;
}

namespace {

bool ApplyAccountsJson(const nlohmann::json& json, Config* config, std::string* why) {
  if (!json.is_array()) {
    *why = "must be a list of {\"name\": ..., \"keys\": [...]}";
    return false;
  }
  std::vector<api::AccountKeys> accounts;
  for (size_t i = 0; i < json.size(); ++i) {
    const auto& item = json[i];
    std::string where = "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      *why = where + " must be an object with \"name\" and \"keys\"";
      return false;
    }
    api::AccountKeys account;
    for (const auto& [key, value] : item.items()) {
      if (key == "name") {
        if (!value.is_string()) {
          *why = where + ".name must be a string";
          return false;
        }
        account.name = value.get<std::string>();
      } else if (key == "keys") {
        if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](auto& k) { return k.is_string(); })) {
          *why = where + ".keys must be a list of base64 strings";
          return false;
        }
        for (const auto& k : value) account.keys.push_back(k.get<std::string>());
      } else {
        *why = where + ": unknown key '" + key + "'";
        return false;
      }
    }
    accounts.push_back(std::move(account));
  }
  if (!ValidateAccounts(accounts, why)) return false;
  config->accounts = std::move(accounts);
  return true;
}

// Walks one JSON object; `prefix` is "" at the top or "listen." etc.
bool ApplyObject(const nlohmann::json& object, const std::string& prefix, Config* config, std::string* error) {
  for (const auto& [key, value] : object.items()) {
    std::string path = prefix + key;
    if (prefix.empty() && key == "$schema") continue;  // editors' schema pointer
    if (prefix.empty() && key == "accounts") {
      std::string why;
      if (!ApplyAccountsJson(value, config, &why)) {
        *error = "'accounts' " + why;
        return false;
      }
      continue;
    }
    if (const Setting* setting = FindSettingByPath(path)) {
      Value parsed;
      std::string why;
      if (!ParseJson(*setting, value, &parsed, &why)) {
        *error = "'" + path + "' " + why;
        return false;
      }
      setting->set(*config, parsed);
      continue;
    }
    // A group ("listen", "limits", ...) is known when a setting lives in it.
    bool is_group = std::any_of(Settings().begin(), Settings().end(), [&](const Setting& s) {
      return s.path.size() > path.size() + 1 && s.path.compare(0, path.size() + 1, path + ".") == 0;
    });
    if (is_group) {
      if (!value.is_object()) {
        *error = "'" + path + "' must be an object";
        return false;
      }
      if (!ApplyObject(value, path + ".", config, error)) return false;
      continue;
    }
    *error = "unknown key '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace

bool ApplyConfigFile(const std::string& path, Config* config, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read config file '" + path + "'";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json;
  try {
    // The one place exceptions are caught: nlohmann's parse error carries the
    // byte position, which the non-throwing parse does not report.
    json = nlohmann::json::parse(text.str(), nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    *error = "config file '" + path + "' is not valid JSON: " + e.what();
    return false;
  }
  if (!json.is_object()) {
    *error = "config file '" + path + "' must contain a JSON object";
    return false;
  }
  std::string why;
  if (!ApplyObject(json, "", config, &why)) {
    *error = "config file '" + path + "': " + why;
    return false;
  }
  config->config_file = path;
  return true;
}

}  // namespace internal

bool ParseAccountsEnv(const std::string& text, std::vector<api::AccountKeys>* accounts, std::string* error) {
  std::vector<api::AccountKeys> parsed;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    // Trim spaces around an entry (multi-line docker-compose values).
    entry.erase(0, entry.find_first_not_of(" \t\r\n"));
    entry.erase(entry.find_last_not_of(" \t\r\n") + 1);
    if (entry.empty()) continue;
    api::AccountKeys account;
    size_t pos = 0;
    size_t colon = entry.find(':');
    if (colon == std::string::npos) {
      *error = "entry '" + entry + "' must be name:key1[:key2]";
      return false;
    }
    account.name = entry.substr(0, colon);
    pos = colon + 1;
    while (pos <= entry.size()) {
      size_t next = entry.find(':', pos);
      if (next == std::string::npos) next = entry.size();
      account.keys.push_back(entry.substr(pos, next - pos));
      pos = next + 1;
    }
    parsed.push_back(std::move(account));
  }
  if (!internal::ValidateAccounts(parsed, error)) return false;
  *accounts = std::move(parsed);
  return true;
}

Environment ProcessEnvironment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (name.rfind("TABLESTONE_", 0) == 0 || name == "AZURITE_ACCOUNTS" || name == "AZURITE_SKIP_API_VERSION_CHECK") {
      env.emplace(std::string(name), std::string(entry.substr(eq + 1)));
    }
  }
  return env;
}

http::HttpOptions Config::ToHttpOptions() const {
  http::HttpOptions o;
  o.address = host;
  o.port = port;
  o.threads = static_cast<int>(threads);
  o.header_limit = static_cast<size_t>(max_header_bytes);
  o.body_limit = max_body_bytes;
  o.idle_timeout = std::chrono::milliseconds(idle_timeout_ms);
  o.read_timeout = std::chrono::milliseconds(read_timeout_ms);
  o.drain_timeout = std::chrono::milliseconds(drain_timeout_ms);
  o.max_connections = static_cast<size_t>(max_connections);
  o.max_connections_per_address = static_cast<size_t>(max_connections_per_address);
  o.first_byte_timeout = std::chrono::milliseconds(first_byte_timeout_ms);
  o.handshake_timeout = std::chrono::milliseconds(handshake_timeout_ms);
  o.access_log = logging.access_log;
  if (logging.format == "json") o.access_line = &JsonAccessLine;
  return o;
}

namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// True when `inner`, made absolute and normalised (symbolic links of its
// existing part resolved), is `outer` or below it.
bool IsSameOrInside(const std::string& inner, const std::string& outer) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto normal = [&ec](const std::string& p) {
    std::string s = fs::weakly_canonical(fs::absolute(p, ec), ec).lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  };
  const std::string in = normal(inner);
  const std::string out = normal(outer);
  return in == out || (in.size() > out.size() && in.starts_with(out) && (out == "/" || in[out.size()] == '/'));
}

// The absolute directory a snapshot or trace directory setting names:
// `value`, or "<location><suffix>" when empty (none in memory).
std::string EffectiveDir(const std::string& value, const Config& config, const char* suffix) {
  namespace fs = std::filesystem;
  std::string dir = value;
  if (dir.empty()) {
    if (config.in_memory) return {};
    dir = config.location;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    dir += suffix;
  }
  std::error_code ec;
  dir = fs::absolute(dir, ec).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

bool ResolveAdminSettings(Config* config, std::string* error) {
  namespace fs = std::filesystem;
  if (!config->admin_key.empty()) {
    auto raw = protocol::Base64Decode(config->admin_key);
    if (!raw || raw->size() < 16) {
      *error = "api.adminKey must be base64 of at least 16 bytes";
      return false;
    }
  }
  if (!config->admin_account.empty() &&
      std::none_of(config->accounts.begin(), config->accounts.end(),
                   [&](const api::AccountKeys& a) { return a.name == config->admin_account; })) {
    *error = "api.adminAccount '" + config->admin_account + "' is not a configured account";
    return false;
  }
  std::error_code ec;
  const std::string location = fs::absolute(config->location, ec).lexically_normal().string();
  const std::string snapshots = EffectiveDir(config->snapshot_dir, *config, ".snapshots");
  const std::string traces = EffectiveDir(config->trace_dir, *config, ".traces");
  for (const auto& [dir, setting] : {std::pair{snapshots, "api.snapshotDir"}, std::pair{traces, "api.traceDir"}}) {
    if (!dir.empty() && !config->in_memory && IsSameOrInside(dir, location)) {
      *error = std::string(setting) + " '" + dir + "' must be outside the data directory '" + location + "'";
      return false;
    }
  }
  if (!snapshots.empty() && snapshots == traces) {
    *error = "api.snapshotDir and api.traceDir must be different directories";
    return false;
  }
  if (!config->logging.trace.empty() && !config->in_memory && IsSameOrInside(config->logging.trace, location)) {
    *error = "logging.trace must be outside the data directory '" + location + "'";
    return false;
  }
  return true;
}

bool CheckCosmosSettings(const Config& config, std::string* error) {
  if (config.cosmos_port == 0) return true;
  if (config.cosmos_port == config.port) {
    *error = "cosmos.port " + std::to_string(config.cosmos_port) + " is the main listener's port too";
    return false;
  }
  for (const api::AccountKeys& cosmos : config.CosmosAccounts()) {
    for (const api::AccountKeys& main : config.accounts) {
      if (main.name == cosmos.name) {
        *error = "account '" + cosmos.name + "' is both a cosmos.accounts account and a main listener account; "
                 "an account belongs to one listener";
        return false;
      }
    }
  }
  return true;
}

api::ApiOptions Config::ToApiOptions() const {
  api::ApiOptions o;
  o.accounts = accounts;
  o.loose = loose;
  o.oauth_basic = oauth == "basic";
  o.skip_api_version_check = skip_api_version_check;
  o.disable_product_style_url = disable_product_style_url;
  o.allow_anonymous = allow_anonymous;
  o.admin_api = admin_api;
  o.admin_key = admin_key;
  o.admin_account = admin_account;
  o.snapshot_dir = in_memory ? std::string() : EffectiveDir(snapshot_dir, *this, ".snapshots");
  o.trace_dir = EffectiveDir(trace_dir, *this, ".traces");
  for (size_t start = 0; start <= allowed_hosts.size();) {
    size_t comma = allowed_hosts.find(',', start);
    if (comma == std::string::npos) comma = allowed_hosts.size();
    std::string name = model::ToAsciiLower(Trim(std::string_view(allowed_hosts).substr(start, comma - start)));
    if (!name.empty()) o.allowed_hosts.push_back(std::move(name));
    start = comma + 1;
  }
  o.ui = ui;
  // The published key may open the page without asking only where no one but
  // this machine can reach it: a loopback listener serving that key.
  const bool loopback = host == "localhost" || api::IsLoopbackAddress(host);
  for (const api::AccountKeys& account : accounts) {
    if (account.name != kDevAccountName) continue;
    for (const std::string& key : account.keys) o.ui_dev_key = o.ui_dev_key || (loopback && key == kDevAccountKey);
  }
  o.query_time_budget = std::chrono::milliseconds(query_page_ms);
  o.scan_cpu_burst = std::chrono::microseconds(scan_burst_us);
  o.scan_nice = static_cast<int>(scan_nice);
  o.facts.version = TABLESTONE_VERSION;
  o.facts.data_dir = location;
  o.facts.in_memory = in_memory;
  o.facts.durability = durability;
  if (flavor == "cosmos") o.flavor = protocol::CosmosPolicy(cosmos_shuffle, fault_seed);
  o.ru_per_second = cosmos_ru_per_second;
  o.table_creates_per_minute = cosmos_table_creates_per_minute;
  return o;
}

std::vector<api::AccountKeys> Config::CosmosAccounts() const {
  std::vector<api::AccountKeys> accounts;
  std::string ignored;
  (void)ParseAccountsEnv(cosmos_accounts.empty() ? std::string(kCosmosEmulatorAccounts) : cosmos_accounts, &accounts,
                         &ignored);
  return accounts;
}

api::ApiOptions Config::ToCosmosApiOptions() const {
  api::ApiOptions o = ToApiOptions();
  o.accounts = CosmosAccounts();
  o.flavor = protocol::CosmosPolicy(cosmos_shuffle, fault_seed);
  if (!o.accounts.empty()) o.default_account = o.accounts.front().name;
  o.admin_api = false;
  o.admin_key.clear();
  o.admin_account.clear();
  o.ui = false;
  o.ui_dev_key = false;
  return o;
}

int TableFilesKeptOpen(uint64_t fd_limit) {
  return static_cast<int>(std::clamp<uint64_t>(fd_limit / 2, 256, 16384));
}

storage::EngineOptions Config::ToEngineOptions() const {
  storage::EngineOptions o;
  o.path = location;
  o.in_memory = in_memory;
  o.sync_writes = durability == "fsync";
  o.block_cache_bytes = static_cast<size_t>(block_cache_mb) << 20;
  o.scan_cache_bytes = static_cast<size_t>(scan_cache_mb) << 20;
  // Partitions a load fills are cached once their writes pause this long, so
  // the first query after the load is a cached one: longer than the gap
  // between a loader's batches, shorter than a client's turn to query.
  o.warm_after_write = std::chrono::milliseconds(20);
  o.entity_cache_bytes = static_cast<size_t>(entity_cache_mb) << 20;
  // The admission's builds run at the long lane's priority: the scan that
  // asked for one competes with it on equal terms.
  o.scan_build_nice = ToExecutorOptions().long_nice;
  o.group_commit = group_commit == "rocksdb" ? storage::EngineOptions::GroupCommit::kRocksDb
                                             : storage::EngineOptions::GroupCommit::kEngine;
  return o;
}

exec::ExecutorOptions Config::ToExecutorOptions() const {
  exec::ExecutorOptions o;
  o.short_threads = static_cast<int>(write_threads);
  o.long_threads = static_cast<int>(scan_threads);
  o.max_queued = static_cast<size_t>(queue_limit);
  // The query threads keep the I/O threads' priority: they give way to point
  // requests by ApiOptions::scan_nice instead (docs/architecture.md, "Threads
  // and priorities").
  o.long_nice = 0;
  return o;
}

}  // namespace tablestone::app
