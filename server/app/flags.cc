// Command line and environment: LoadConfig, --help, --version.
//
// Flag syntax: "--name value", "--name=value", "-x value"; a boolean flag
// alone means true and takes an explicit value only as "--name=false".
// Flags named like Azurite's behave like them (docs/migrating-from-azurite.md):
// its Table, TLS and OAuth flags configure the Table service; --blobHost,
// --blobPort, --queueHost and --queuePort place the Blob and Queue ports when
// the program runs as `azurite` and are ignored with a warning otherwise;
// --disableTelemetry and --extentMemoryLimit are accepted without effect
// (tablestone sends no telemetry and keeps no blob or queue content).
#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "server/app/build_commit.h"
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
      F("--adminKey", "", "api.adminKey"),
      F("--adminAccount", "", "api.adminAccount"),
      F("--snapshotDir", "", "api.snapshotDir"),
      F("--traceDir", "", "api.traceDir"),
      F("--allowedHosts", "", "api.allowedHosts"),
      F("--noUi", "", "api.ui", "false", 1, "Do not serve the data browser at /_tablestone/ui/ (docs/ui.md)."),
      F("--seed", "", "storage.seed"),
      F("--faults", "", "faults.file"),
      F("--faultSeed", "", "faults.seed"),
      F("--realistic", "", "faults.realistic"),
      F("--tableBeingDeletedMs", "", "faults.tableBeingDeletedMs"),
      F("--realisticLatencyMs", "", "faults.latencyMedianMs"),
      F("--flavor", "", "api.flavor"),
      F("--cosmosPort", "", "cosmos.port"),
      F("--cosmosHost", "", "cosmos.host"),
      F("--cosmosAccounts", "", "cosmos.accounts"),
      F("--cosmosShuffle", "", "cosmos.shuffle"),
      F("--cosmosRuPerSecond", "", "cosmos.ruPerSecond"),
      F("--cosmosTableCreatesPerMinute", "", "cosmos.tableCreatesPerMinute"),
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
};

// The Blob and Queue ports' flags, which take effect under Personality::kAzurite
// (and are in kIgnoredFlags otherwise). Values are checked like the Table's
// own --tableHost/--tablePort.
struct SiblingFlag {
  std::string_view name;
  std::string_view like;  // the setting whose checks apply: listen.host or listen.port
  void (*set)(Config& config, const Value& value);
};
const SiblingFlag kSiblingFlags[] = {
    {"--blobHost", "listen.host", [](Config& c, const Value& v) { c.blob_host = std::get<std::string>(v); }},
    {"--blobPort", "listen.port",
     [](Config& c, const Value& v) { c.blob_port = static_cast<uint16_t>(std::get<uint64_t>(v)); }},
    {"--queueHost", "listen.host", [](Config& c, const Value& v) { c.queue_host = std::get<std::string>(v); }},
    {"--queuePort", "listen.port",
     [](Config& c, const Value& v) { c.queue_port = static_cast<uint16_t>(std::get<uint64_t>(v)); }},
};

const SiblingFlag* FindSibling(std::string_view name) {
  for (const auto& f : kSiblingFlags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Azurite's --extentMemoryLimit: megabytes (a decimal number, at least 0) of
// blob and queue content kept in memory. Checked as Azurite checks it; there
// is no such content here, so it changes nothing.
bool ValidExtentMemoryLimit(const std::string& text) {
  if (text.empty() || text.size() > 32) return false;
  size_t digits = 0, dots = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return false;
    }
  }
  return digits > 0 && dots <= 1;
}

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

std::string VersionText() {
  const std::string_view commit = BuildCommit();
  return std::string("tablestone ") + TABLESTONE_VERSION + (commit.empty() ? "" : " (commit " + std::string(commit) + ")") +
         "\n";
}

namespace {

constexpr size_t kHelpWidth = 100;  // columns of --help, wrapped at word boundaries
constexpr size_t kHelpIndent = 36;  // where a flag's description starts

// Appends `units` (words, or "Config: path" kept whole) to `out`, wrapped to
// kHelpWidth with continuation lines indented to kHelpIndent.
void AppendWrapped(std::ostringstream& out, size_t column, const std::vector<std::string>& units) {
  bool first = true;
  for (const std::string& unit : units) {
    if (!first && column + 1 + unit.size() > kHelpWidth) {
      out << "\n" << std::string(kHelpIndent, ' ');
      column = kHelpIndent;
      first = true;
    }
    if (!first) {
      out << ' ';
      ++column;
    }
    out << unit;
    column += unit.size();
    first = false;
  }
  out << "\n";
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Help groups, by the first part of a setting's path, in the order shown.
struct HelpGroup {
  std::string_view prefix;
  std::string_view title;
};
constexpr HelpGroup kHelpGroups[] = {
    {"listen", "Listening and HTTPS"}, {"storage", "Data and storage"},  {"limits", "Limits"},
    {"threads", "Limits"},             {"timeouts", "Timeouts"},         {"logging", "Logging"},
    {"api", "Requests and the admin routes"}, {"faults", "Fault injection (docs/testing-with-faults.md)"},
    {"cosmos", "Cosmos DB for Table mode (docs/cosmos-mode.md)"},
};

std::string_view GroupOf(std::string_view path) {
  std::string_view prefix = path.substr(0, path.find('.'));
  if (prefix == "api" && path == "api.oauth") return "listen";  // --oauth works only over HTTPS
  return prefix;
}

}  // namespace

std::string HelpText() {
  std::ostringstream out;
  out << "tablestone " << TABLESTONE_VERSION
      << ": a local server for the Azure Table storage REST API.\n\n"
         "Usage: tablestone [flags]                 run the server\n"
         "       tablestone COMMAND [options]       a data tool: export, import, copy, snapshot, reset,\n"
         "                                          faults, trace, health\n"
         "       tablestone help [COMMAND]          this help, or a command's (tablestone COMMAND --help)\n"
         "       tablestone version | -v | --version\n"
         "       tablestone --help-all              this help and every command's\n\n"
         "Precedence: built-in defaults < config file < environment < flags.\n";
  auto line = [&out](const std::string& left, std::vector<std::string> units) {
    out << "  " << left;
    size_t column = 2 + left.size();
    if (column + 2 <= kHelpIndent) {
      out << std::string(kHelpIndent - column, ' ');
    } else {
      out << "\n" << std::string(kHelpIndent, ' ');
    }
    AppendWrapped(out, kHelpIndent, units);
  };
  auto with = [](std::vector<std::string> words, std::initializer_list<std::string> units) {
    words.insert(words.end(), units.begin(), units.end());
    return words;
  };
  out << "\nGeneral:\n";
  line("--config FILE", with(Words("Read settings from this JSON file (see config/README.md)."),
                             {"Default: none.", "Env: TABLESTONE_CONFIG"}));
  line("--help, -h", Words("Print this help and exit (--help-all: with every command's)."));
  line("--version, -v", Words("Print the version and exit."));
  std::string_view shown_title;
  for (const HelpGroup& group : kHelpGroups) {
    for (const auto& f : Flags()) {
      if (GroupOf(f.path) != group.prefix) continue;
      if (group.title != shown_title) {
        out << "\n" << group.title << ":\n";
        shown_title = group.title;
      }
      const Setting* s = internal::FindSettingByPath(f.path);
      std::string left(f.short_name.empty() ? std::string(f.name)
                                            : std::string(f.short_name) + ", " + std::string(f.name));
      if (f.fixed.empty()) left += f.scale != 1 ? " SECONDS" : ValuePlaceholder(*s);
      std::vector<std::string> units = Words(f.help.empty() ? s->help : f.help);
      if (!f.fixed.empty()) {
        // A flag with an implied value has no default of its own.
        units.push_back("Env: " + std::string(s->env) + "=" + std::string(f.fixed) + ".");
        units.push_back("Config: " + std::string(s->path) + " = " + std::string(f.fixed));
      } else {
        std::string shown = f.scale != 1 ? std::to_string(std::stoull(ShowDefault(*s)) / f.scale) : ShowDefault(*s);
        units.push_back("Default: " + shown + ".");
        units.push_back("Env: " + std::string(s->env) + ".");
        units.push_back("Config: " + std::string(s->path));
      }
      line(left, units);
    }
  }
  out << "\nAccounts:\n";
  out << "  AZURITE_ACCOUNTS=\"name:key1[:key2];name2:key1\" replaces the account list\n  (default: "
      << kDevAccountName << " with the well-known emulator key). Config: accounts\n";
  out << "\nAzurite's Blob and Queue ports: started as `azurite` (a link to tablestone, or a first\n"
         "argument `azurite`), tablestone also listens on them; they answer only the empty container\n"
         "and queue listings of readiness checks (docs/migrating-from-azurite.md):\n";
  line("--blobHost HOST, --blobPort N", Words("Blob port. Default: 127.0.0.1, 10000."));
  line("--queueHost HOST, --queuePort N", Words("Queue port. Default: 127.0.0.1, 10001."));
  out << "Started as `tablestone` or `azurite-table`, those four flags are ignored with a warning.\n";
  out << "\nAccepted for Azurite compatibility without effect: --disableTelemetry (tablestone sends no\n"
         "telemetry), --extentMemoryLimit MB (there is no blob or queue content to hold).\n"
         "Env: AZURITE_SKIP_API_VERSION_CHECK=true is --skipApiVersionCheck, as in Azurite.\n";
  out << "\nAccepted for Azurite compatibility and ignored (with a warning):\n ";
  for (const auto& f : kIgnoredFlags) out << " " << f.name;
  out << "\n";
  return out.str();
}

LoadResult LoadConfig(const std::vector<std::string>& args, const Environment& env, Personality personality) {
  LoadResult result;
  std::vector<FlagUse> uses;
  std::vector<std::pair<const SiblingFlag*, std::string>> sibling_uses;
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
    // `tablestone version` and `-v` as other tools spell it; only alone, so
    // a value that happens to read "version" is still a value.
    if (name == "--version" || name == "-v" || (name == "version" && args.size() == 1)) {
      result.action = LoadResult::Action::kExit;
      result.exit_code = 0;
      result.output = VersionText();
      return result;
    }
    if (name == "--config") {
      if (!take_value(&config_path)) return Fail("flag --config needs a value (a JSON file)");
      continue;
    }
    if (name == "--disableTelemetry") {
      if (inline_value) return Fail("flag " + name + " takes no value");
      continue;
    }
    if (name == "--extentMemoryLimit") {
      std::optional<std::string> limit;
      if (!take_value(&limit)) return Fail("flag " + name + " needs a value");
      if (!ValidExtentMemoryLimit(*limit)) {
        return Fail("flag " + name + " '" + *limit + "' must be a number of megabytes, 0 or more");
      }
      continue;
    }
    if (const SiblingFlag* sibling = FindSibling(name); sibling != nullptr && personality == Personality::kAzurite) {
      std::optional<std::string> value;
      if (!take_value(&value)) return Fail("flag " + name + " needs a value");
      sibling_uses.emplace_back(sibling, *value);
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
    if (name == "AZURITE_SKIP_API_VERSION_CHECK") {
      // Azurite's reading: exactly "true" turns the check off; anything else leaves it.
      if (value == "true") config.skip_api_version_check = true;
      continue;
    }
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

  for (const auto& [flag, text] : sibling_uses) {
    Value parsed;
    std::string why;
    if (!internal::ParseText(*internal::FindSettingByPath(flag->like), text, &parsed, &why)) {
      return Fail("flag " + std::string(flag->name) + " '" + text + "' " + why);
    }
    flag->set(config, parsed);
  }
  config.sibling_ports = personality == Personality::kAzurite;

  if (std::string why; !ResolveAdminSettings(&config, &why)) return Fail(why);
  if (std::string why; !CheckCosmosSettings(config, &why)) return Fail(why);
  result.config = std::move(config);
  return result;
}

Personality DetectPersonality(std::string_view argv0, std::vector<std::string>* args, std::string* refused) {
  auto personality_of = [refused](std::string_view name, Personality* out) {
    if (name == "azurite") {
      *out = Personality::kAzurite;
    } else if (name == "azurite-table") {
      *out = Personality::kAzuriteTable;
    } else if (name == "tablestone") {
      *out = Personality::kTablestone;
    } else if (name == "azurite-blob" || name == "azurite-queue") {
      *refused = "tablestone: '" + std::string(name) +
                 "' is not available: tablestone provides the Azure Table service only. Run Azurite's own "
                 "image (mcr.microsoft.com/azure-storage/azurite) for Blob and Queue storage, or start "
                 "`azurite` or `azurite-table` here for the Table service.";
      *out = Personality::kTablestone;
    } else {
      return false;
    }
    return true;
  };
  refused->clear();
  Personality personality = Personality::kTablestone;
  size_t slash = argv0.rfind('/');
  std::string_view base = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  personality_of(base, &personality);
  if (refused->empty() && !args->empty() && personality_of((*args)[0], &personality)) {
    args->erase(args->begin());
  }
  return personality;
}

}  // namespace tablestone::app
