// Command line and environment: LoadConfig, --help, --version.
//
// Flag syntax: "--name value", "--name=value", "-x value"; a boolean flag
// alone means true and takes an explicit value only as "--name=false".
// Flags named like Azurite's table flags behave like them; Azurite flags for
// the blob/queue services, TLS, OAuth and telemetry are accepted with a
// warning and ignored, so existing launch scripts keep working.
#include <algorithm>
#include <optional>
#include <sstream>

#include "server/app/config.h"
#include "server/app/settings.h"

#ifndef TABLESTONE_VERSION
#define TABLESTONE_VERSION "0.1.0"
#endif

namespace tablestone::app {
namespace {

using internal::Kind;
using internal::Setting;
using internal::Value;

struct Flag {
  std::string_view name;        // "--tablePort"
  std::string_view short_name;  // "-l" or empty
  std::string_view path;        // setting it writes
  std::string_view fixed;       // value implied by the flag alone (e.g. --silent -> "false")
  uint64_t scale = 1;           // multiplies an integer value (seconds -> ms)
  std::string_view help;        // overrides the setting's help when not empty
};

Flag F(std::string_view name, std::string_view short_name, std::string_view path, std::string_view fixed = {},
       uint64_t scale = 1, std::string_view help = {}) {
  return Flag{name, short_name, path, fixed, scale, help};
}

// Flags that set settings. Order = order in --help.
const std::vector<Flag>& Flags() {
  static const std::vector<Flag> kFlags = {
      F("--tableHost", "", "listen.host"),
      F("--cert", "", "listen.cert"),
      F("--key", "", "listen.key"),
      F("--pwd", "", "listen.pwd"),
      F("--oauth", "", "api.oauth"),
      F("--tablePort", "", "listen.port"),
      F("--location", "-l", "storage.location"),
      F("--inMemoryPersistence", "", "storage.inMemory"),
      F("--durability", "", "storage.durability"),
      F("--blockCacheMB", "", "storage.blockCacheMB"),
      F("--scanCacheMB", "", "storage.scanCacheMB"),
      F("--entityCacheMB", "", "storage.entityCacheMB"),
      F("--writeThreads", "", "storage.writeThreads"),
      F("--scanThreads", "", "storage.scanThreads"),
      F("--scanNice", "", "storage.scanNice"),
      F("--scanBurstUs", "", "storage.scanBurstUs"),
      F("--groupCommit", "", "storage.groupCommit"),
      F("--queuedRequests", "", "limits.queuedRequests"),
      F("--maxBodyBytes", "", "limits.maxBodyBytes"),
      F("--maxHeaderBytes", "", "limits.maxHeaderBytes"),
      F("--maxConnections", "", "limits.maxConnections"),
      F("--maxConnectionsPerAddress", "", "limits.maxConnectionsPerAddress"),
      F("--firstByteTimeoutMs", "", "timeouts.firstByteMs"),
      F("--handshakeTimeoutMs", "", "timeouts.handshakeMs"),
      F("--idleTimeoutMs", "", "timeouts.idleMs"),
      F("--tableKeepAliveTimeout", "", "timeouts.idleMs", "", 1000,
       "Azurite's keep-alive timeout in SECONDS; same setting as --idleTimeoutMs."),
      F("--readTimeoutMs", "", "timeouts.readMs"),
      F("--drainTimeoutMs", "", "timeouts.drainMs"),
      F("--queryPageMs", "", "timeouts.queryPageMs"),
      F("--threads", "", "threads"),
      F("--logLevel", "", "logging.level"),
      F("--logFormat", "", "logging.format"),
      F("--accessLog", "", "logging.accessLog"),
      F("--silent", "-s", "logging.accessLog", "false", 1, "No access log (same as --accessLog=false)."),
      F("--debug", "-d", "logging.debugFile"),
      F("--trace", "", "logging.trace"),
      F("--traceBodies", "", "logging.traceBodies"),
      F("--loose", "-L", "api.loose"),
      F("--skipApiVersionCheck", "", "api.skipApiVersionCheck"),
      F("--disableProductStyleUrl", "", "api.disableProductStyleUrl"),
      F("--allowAnonymous", "", "api.allowAnonymous"),
      F("--adminApi", "", "api.adminApi"),
      F("--noUi", "", "api.ui", "false", 1, "Do not serve the data browser at /_tablestone/ui/ (docs/ui.md)."),
      F("--seed", "", "storage.seed"),
      F("--faults", "", "faults.file"),
      F("--faultSeed", "", "faults.seed"),
      F("--realistic", "", "faults.realistic"),
      F("--tableBeingDeletedMs", "", "faults.tableBeingDeletedMs"),
      F("--realisticLatencyMs", "", "faults.latencyMedianMs"),
  };
  return kFlags;
}

// Azurite flags that make no sense here: accepted, warned about, ignored.
struct IgnoredFlag {
  std::string_view name;
  bool takes_value;
};
constexpr IgnoredFlag kIgnoredFlags[] = {
    {"--blobHost", true},          {"--blobPort", true},
    {"--queueHost", true},         {"--queuePort", true},
    {"--blobKeepAliveTimeout", true}, {"--queueKeepAliveTimeout", true},
    {"--extentMemoryLimit", true}, {"--disableTelemetry", false},
};

const Flag* FindFlag(std::string_view name) {
  for (const auto& f : Flags()) {
    if (f.name == name || (!f.short_name.empty() && f.short_name == name)) return &f;
  }
  return nullptr;
}

const IgnoredFlag* FindIgnored(std::string_view name) {
  for (const auto& f : kIgnoredFlags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string ShowDefault(const Setting& s) {
  std::string shown = s.show(Config{});
  return shown.empty() ? "\"\"" : shown;
}

std::string ValuePlaceholder(const Setting& s) {
  switch (s.kind) {
    case Kind::kUint:
      return " N";
    case Kind::kChoice:
      return " " + std::string(s.choices);
    case Kind::kString:
      return s.path == "listen.host" ? " HOST" : " PATH";
    case Kind::kBool:
      return "";
  }
  return "";
}

LoadResult Fail(std::string message) {
  LoadResult r;
  r.action = LoadResult::Action::kExit;
  r.exit_code = 2;
  r.output = "tablestone: " + std::move(message) + "\nRun 'tablestone --help' for the list of flags.";
  return r;
}

// One flag occurrence with its (already separated) value.
struct FlagUse {
  const Flag* flag;
  std::string spelled;  // as typed, for messages
  std::optional<std::string> value;
};

}  // namespace

std::string VersionText() { return std::string("tablestone ") + TABLESTONE_VERSION + "\n"; }

std::string HelpText() {
  std::ostringstream out;
  out << "tablestone " << TABLESTONE_VERSION
      << ": a local server for the Azure Table storage REST API.\n\n"
         "Usage: tablestone [flags]\n"
         "       tablestone export|import|copy|snapshot|reset [options]  data tools (tablestone export --help)\n\n"
         "Precedence: built-in defaults < config file < environment < flags.\n\n"
         "Flags:\n";
  auto line = [&out](const std::string& left, const std::string& text) {
    out << "  " << left;
    if (left.size() < 34) {
      out << std::string(34 - left.size(), ' ');
    } else {
      out << "\n" << std::string(36, ' ');
    }
    out << text << "\n";
  };
  line("--config FILE", "Read settings from this JSON file (see config/README.md). "
                        "Default: none. Env: TABLESTONE_CONFIG");
  for (const auto& f : Flags()) {
    const Setting* s = internal::FindSettingByPath(f.path);
    std::string left(f.short_name.empty() ? std::string(f.name)
                                          : std::string(f.short_name) + ", " + std::string(f.name));
    if (f.fixed.empty()) left += f.scale != 1 ? " SECONDS" : ValuePlaceholder(*s);
    std::string text = f.help.empty() ? std::string(s->help) : std::string(f.help);
    if (!f.fixed.empty()) {
      // A flag with an implied value has no default of its own.
      text += " Env: " + std::string(s->env) + "=" + std::string(f.fixed) + ". Config: " + std::string(s->path) +
              " = " + std::string(f.fixed);
    } else {
      std::string shown = f.scale != 1 ? std::to_string(std::stoull(ShowDefault(*s)) / f.scale) : ShowDefault(*s);
      text += " Default: " + shown + ". Env: " + std::string(s->env) + ". Config: " + std::string(s->path);
    }
    line(left, text);
  }
  line("--help, -h", "Print this help and exit.");
  line("--version", "Print the version and exit.");
  out << "\nAccounts: AZURITE_ACCOUNTS=\"name:key1[:key2];name2:key1\" replaces the account list "
         "(default: "
      << kDevAccountName << " with the well-known emulator key). Config: accounts\n";
  out << "\nAccepted for Azurite compatibility and ignored (with a warning):";
  for (const auto& f : kIgnoredFlags) out << " " << f.name;
  out << "\n";
  return out.str();
}

LoadResult LoadConfig(const std::vector<std::string>& args, const Environment& env) {
  LoadResult result;
  std::vector<FlagUse> uses;
  std::optional<std::string> config_path;

  // Pass 1: split the command line. Nothing is applied yet because the
  // config file (named here or in the environment) must go first.
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
      }
    }
    auto take_value = [&](std::optional<std::string>* out) -> bool {
      if (inline_value) {
        *out = inline_value;
        return true;
      }
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    if (name == "--help" || name == "-h") {
      result.action = LoadResult::Action::kExit;
      result.exit_code = 0;
      result.output = HelpText();
      return result;
    }
    if (name == "--version") {
      result.action = LoadResult::Action::kExit;
      result.exit_code = 0;
      result.output = VersionText();
      return result;
    }
    if (name == "--config") {
      if (!take_value(&config_path)) return Fail("flag --config needs a value (a JSON file)");
      continue;
    }
    if (const IgnoredFlag* ignored = FindIgnored(name)) {
      std::optional<std::string> unused;
      if (ignored->takes_value && !take_value(&unused)) return Fail("flag " + name + " needs a value");
      result.warnings.push_back("flag " + name + " is an Azurite option that does not apply to tablestone; ignored");
      continue;
    }
    const Flag* flag = FindFlag(name);
    if (flag == nullptr) {
      if (arg.rfind("-", 0) == 0) return Fail("unknown flag '" + name + "'");
      return Fail("unexpected argument '" + arg + "'");
    }
    const Setting* setting = internal::FindSettingByPath(flag->path);
    FlagUse use{flag, name, std::nullopt};
    if (!flag->fixed.empty()) {
      if (inline_value) return Fail("flag " + name + " takes no value");
    } else if (setting->kind == Kind::kBool) {
      use.value = inline_value;  // "--loose" alone means true
    } else if (!take_value(&use.value)) {
      return Fail("flag " + name + " needs a value");
    }
    uses.push_back(std::move(use));
  }

  Config config;
  // 2. Config file.
  if (!config_path) {
    auto it = env.find("TABLESTONE_CONFIG");
    if (it != env.end() && !it->second.empty()) config_path = it->second;
  }
  if (config_path) {
    std::string error;
    if (!internal::ApplyConfigFile(*config_path, &config, &error)) return Fail(error);
  }

  // 3. Environment.
  for (const auto& [name, value] : env) {
    if (name == "TABLESTONE_CONFIG") continue;
    if (name == "AZURITE_ACCOUNTS") {
      if (value.empty()) continue;
      std::string error;
      if (!ParseAccountsEnv(value, &config.accounts, &error)) {
        return Fail("environment variable AZURITE_ACCOUNTS: " + error);
      }
      continue;
    }
    const Setting* setting = internal::FindSettingByEnv(name);
    if (setting == nullptr) {
      if (name.rfind("TABLESTONE_", 0) == 0) {
        result.warnings.push_back("environment variable " + name + " is not a tablestone setting; ignored");
      }
      continue;
    }
    if (value.empty()) continue;  // set-but-empty (docker-compose) = unset
    Value parsed;
    std::string why;
    if (!internal::ParseText(*setting, value, &parsed, &why)) {
      return Fail("environment variable " + name + "='" + value + "' " + why);
    }
    setting->set(config, parsed);
  }

  // 4. Flags, in command-line order (the last one wins).
  for (const auto& use : uses) {
    const Setting* setting = internal::FindSettingByPath(use.flag->path);
    std::string text = !use.flag->fixed.empty() ? std::string(use.flag->fixed)
                       : use.value            ? *use.value
                                              : std::string("true");
    Value parsed;
    std::string why;
    if (use.flag->scale != 1) {
      // Scaled flags (seconds) are checked against the scaled range.
      Setting unscaled = *setting;
      unscaled.min = (setting->min + use.flag->scale - 1) / use.flag->scale;
      unscaled.max = setting->max / use.flag->scale;
      if (!internal::ParseText(unscaled, text, &parsed, &why)) {
        return Fail("flag " + use.spelled + " '" + text + "' " + why);
      }
      parsed = std::get<uint64_t>(parsed) * use.flag->scale;
    } else if (!internal::ParseText(*setting, text, &parsed, &why)) {
      return Fail("flag " + use.spelled + " '" + text + "' " + why);
    }
    setting->set(config, parsed);
  }

  result.config = std::move(config);
  return result;
}

}  // namespace tablestone::app
