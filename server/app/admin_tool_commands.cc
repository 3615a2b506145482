#include "server/app/admin_tool_commands.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/app/config.h"
#include "tools/cli_text.h"
#include "tools/table_store.h"

namespace tablestone::app {
namespace {

using json = nlohmann::json;

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

class SnapshotCommand final : public ToolCommand {
 public:
  void Add(CLI::App& command) override {
    auto* location = command.add_option("--location", location_, "Data directory of a stopped server");
    location->excludes(
        command.add_option("--from", admin_.from, "Connection string of a running server started with --adminApi"));
    command
        .add_option("--to", to_,
                    "Snapshot directory to create (must not exist; a server starts on it as is); with --from, a "
                    "name in the server's --snapshotDir (or a path inside it)")
        ->required();
    command.add_flag("--json", json_, "Also print the server's JSON answer on stdout");
    command.add_option("--caFile", admin_.ca_files, kCaHelp)->check(CLI::ExistingFile);
  }

  int Run(std::FILE* out, std::FILE* err) override {
    if (location_.empty() == admin_.from.empty()) {
      return UsageError(err, "snapshot", "say what to snapshot: --location DIR or --from CONNECTION_STRING");
    }
    const auto start = std::chrono::steady_clock::now();
    if (!location_.empty()) {
      std::string error;
      if (!tools::SnapshotDataDirectory(location_, to_, &error)) {
        PrintError(err, "snapshot", error);
        return 1;
      }
      std::fprintf(err, "tablestone: snapshot of %s written to %s in %.1f ms\n", location_.c_str(), to_.c_str(),
                   MillisecondsSince(start));
      return 0;
    }
    // A plain name goes into the server's --snapshotDir; a path is sent
    // absolute, and the server accepts it only inside that directory.
    std::string to = to_;
    if (to.find('/') != std::string::npos) {
      std::error_code ec;
      to = std::filesystem::absolute(to_, ec).lexically_normal().string();
    }
    std::string body, where;
    if (!admin_.Call(err, "snapshot", "POST", "snapshot", "to=" + tools::UrlEncode(to), "", &body, &where)) return 1;
    const double ms = MillisecondsSince(start);
    if (json_ && !body.empty()) std::fprintf(out, "%s\n", body.c_str());
    const auto answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
    const auto* path = answer.is_object() && answer.contains("snapshot") && answer["snapshot"].is_string()
                           ? &answer["snapshot"]
                           : nullptr;
    const std::string line = "snapshot of " + where + " written to " + (path ? path->get<std::string>() : to_);
    std::fprintf(err, "tablestone: %s in %.1f ms\n", tools::TerminalSafe(line).c_str(), ms);
    return 0;
  }

 private:
  std::string location_, to_;
  AdminEndpoint admin_;
  bool json_ = false;  // the admin route's JSON answer on stdout too, for scripts
};

class ResetCommand final : public ToolCommand {
 public:
  void Add(CLI::App& command) override {
    command.add_option("--from", admin_.from, "Connection string (its account key signs the request)")->required();
    command.add_flag("--all", all_, "Every configured account, not only the connection string's");
    command.add_flag("--yes,-y", yes_, "Do not ask on a terminal before deleting");
    command.add_option("--caFile", admin_.ca_files, kCaHelp)->check(CLI::ExistingFile);
    command.add_flag("--json", json_, "Also print the server's JSON answer on stdout");
  }

  int Run(std::FILE* out, std::FILE* err) override {
    const auto start = std::chrono::steady_clock::now();
    tools::Connection c;
    std::string where, own_account, error;
    if (!AdminConnection(admin_.from, &c, &where, &own_account, &error)) {
      PrintError(err, "reset", error);
      return 1;
    }
    if (!Confirmed(err, where, own_account)) return 1;
    std::string body;
    if (!tools::CallAdminRoute(c, admin_.Options(), "reset",
                               all_ ? std::string() : "account=" + tools::UrlEncode(own_account), &body, &error)) {
      PrintError(err, "reset", error);
      return 1;
    }
    const double ms = MillisecondsSince(start);
    if (json_ && !body.empty()) std::fprintf(out, "%s\n", body.c_str());
    const auto answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
    std::string accounts;
    uint64_t deleted = 0;
    if (answer.is_object()) {
      if (answer.contains("tablesDeleted") && answer["tablesDeleted"].is_number_unsigned()) {
        deleted = answer["tablesDeleted"].get<uint64_t>();
      }
      if (answer.contains("accounts") && answer["accounts"].is_array()) {
        for (const auto& a : answer["accounts"]) {
          if (a.is_string()) accounts += (accounts.empty() ? "" : ", ") + a.get<std::string>();
        }
      }
    }
    const std::string line = "reset deleted " + Plural(deleted, "table", "tables") + " of " +
                             (accounts.empty() ? std::string("no account") : accounts) + " on " + where;
    std::fprintf(err, "tablestone: %s in %.1f ms\n", tools::TerminalSafe(line).c_str(), ms);
    return 0;
  }

 private:
  // On a terminal, reset asks first: it deletes every table, on whatever
  // server the connection string names. Scripts (no terminal) and --yes do
  // not ask. False (said on `err`) unless confirmed.
  bool Confirmed(std::FILE* err, const std::string& where, const std::string& own_account) const {
    if (yes_ || ::isatty(STDIN_FILENO) != 1) return true;
    const std::string what = all_ ? "every account" : "account " + own_account;
    std::fprintf(err, "Delete every table of %s on %s? Type 'yes' to confirm: ", tools::TerminalSafe(what).c_str(),
                 tools::TerminalSafe(where).c_str());
    std::fflush(err);
    char answer[16] = {};
    if (std::fgets(answer, sizeof answer, stdin) == nullptr || std::string(answer).rfind("yes", 0) != 0) {
      std::fprintf(err, "tablestone reset: not confirmed; nothing was deleted\n");
      return false;
    }
    return true;
  }

  AdminEndpoint admin_;
  bool all_ = false;
  bool yes_ = false;
  bool json_ = false;
};

// `tablestone health` without --url: the listener the server's settings
// name (its flags in `args`, the environment, the config file they name),
// read by the server's own LoadConfig. A wildcard address is reached on
// loopback. Over TLS the server's own certificate is trusted exactly
// (RemoteOptions::server_cert) unless --caFile or --serverCert says otherwise.
bool ListenerOfServer(std::vector<std::string> args, tools::Connection* c, tools::RemoteOptions* options,
                      std::string* error) {
  std::string refused;
  const Personality personality = DetectPersonality("tablestone", &args, &refused);
  if (!refused.empty()) {
    *error = refused;
    return false;
  }
  LoadResult loaded = LoadConfig(args, ProcessEnvironment(), personality);
  if (loaded.action != LoadResult::Action::kRun) {
    std::string why = loaded.output;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    *error = "the server settings do not load: " + (why.size() > 300 ? why.substr(0, 300) + "..." : why);
    return false;
  }
  const Config& config = loaded.config;
  c->scheme = config.cert.empty() ? "http" : "https";
  c->host = config.host;
  if (c->host.empty() || c->host == "0.0.0.0") c->host = "127.0.0.1";
  if (c->host == "::" || c->host == "[::]") c->host = "::1";
  if (c->host.size() > 2 && c->host.front() == '[' && c->host.back() == ']')
    c->host = c->host.substr(1, c->host.size() - 2);
  c->port = std::to_string(config.port);
  if (!config.cert.empty() && options->ca_files.empty() && options->server_cert.empty()) {
    options->server_cert = config.cert;
    options->server_cert_password = config.pwd;
  }
  return true;
}

class HealthCommand final : public ToolCommand {
 public:
  HealthCommand() {
    options_.attempts = 1;  // a probe: no retries
    options_.timeout_ms = 5000;
  }

  void Add(CLI::App& command) override {
    command.add_option("--url", url_,
                       "The listener, http[s]://HOST:PORT (default: the one the server settings after -- name, "
                       "with the environment and their --config file)");
    command.add_option("--caFile", options_.ca_files, kCaHelp)->check(CLI::ExistingFile);
    command
        .add_option("--serverCert", options_.server_cert,
                    "Trust exactly this server certificate (PEM) whatever names it carries (default without "
                    "--url and --caFile: the server's own --cert)")
        ->check(CLI::ExistingFile);
    command.add_option("--timeoutMs", options_.timeout_ms, "Give up after this long (default 5000)")
        ->check(CLI::Range(100, 600000));
    command
        .add_option("serverFlags", server_args_,
                    "After --: the server's flags (e.g. a container's PID 1 arguments) whose listener to probe")
        ->type_name("");
  }

  int Run(std::FILE* out, std::FILE* err) override {
    tools::Connection c;
    std::string error;
    if (!url_.empty() && !server_args_.empty()) {
      return UsageError(err, "health", "give --url or the server's flags after --, not both");
    }
    const bool ok = url_.empty() ? ListenerOfServer(server_args_, &c, &options_, &error)
                                 : tools::ParseEndpointUrl(url_, &c, &error);
    if (!ok) {
      PrintError(err, "health", error);
      return 1;
    }
    const std::string where =
        c.scheme + "://" + (c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host) + ":" + c.port;
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    std::string body;
    if (!tools::GetHealth(c, options_, &status, &body, &error)) {
      PrintError(err, "health", "unhealthy: " + error);
      return 1;
    }
    const double ms = MillisecondsSince(start);
    if (status != 200) {
      // A TLS listener answers a plain request with 400 (docs/compatibility.md).
      const bool maybe_tls = status == 400 && c.scheme == "http";
      PrintError(err, "health",
                 "unhealthy: " + where + " answered HTTP " + std::to_string(status) +
                     (maybe_tls ? " (an HTTPS listener answers plain HTTP so: use https://, or give the server's "
                                  "--cert among its flags)"
                                : ""));
      return 1;
    }
    std::fprintf(out, "healthy: %s answered in %.1f ms\n", tools::TerminalSafe(where).c_str(), ms);
    return 0;
  }

 private:
  std::string url_;
  std::vector<std::string> server_args_;  // after --
  tools::RemoteOptions options_;
};

}  // namespace

std::unique_ptr<ToolCommand> NewSnapshotCommand() { return std::make_unique<SnapshotCommand>(); }
std::unique_ptr<ToolCommand> NewResetCommand() { return std::make_unique<ResetCommand>(); }
std::unique_ptr<ToolCommand> NewHealthCommand() { return std::make_unique<HealthCommand>(); }

}  // namespace tablestone::app
