#include "server/app/tool_commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "tools/cli_text.h"
#include "protocol/auth/admin_signature.h"
#include "protocol/base64.h"
#include "tools/connection_string.h"
#include "tools/copy_command.h"
#include "tools/data_commands.h"
#include "tools/table_store.h"

namespace tablestone::app {
namespace {

constexpr const char* kCommands[] = {"export", "import", "copy", "snapshot", "reset"};

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) {
  g_interrupted.store(true);
  // A second Ctrl-C ends the process at once.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

// A store named by a connection string or an offline data directory.
struct Endpoint {
  int retries = 5;  // per request, after the first try
  int retry_delay_ms = 200;  // the first back-off, doubled per retry
  std::string connection;
  std::string location;
  std::string account = std::string(tools::kDevAccount);
  std::vector<std::string> ca_files;  // --caFile: trusted for https://
};

// The connection string of `e` (from env:NAME or file:PATH when so named).
bool ResolveConnection(const Endpoint& e, tools::Connection* c, std::string* error) {
  std::string text;
  return tools::ResolveConnectionArgument(e.connection, &text, error) &&
         tools::ParseConnectionString(text, c, error);
}

std::unique_ptr<tools::TableStore> OpenStore(const Endpoint& e, bool create, std::string* error) {
  if (!e.location.empty()) return tools::OpenOfflineStore(e.location, e.account, create, error);
  tools::Connection c;
  if (!ResolveConnection(e, &c, error)) return nullptr;
  tools::RemoteOptions options;
  options.attempts = 1 + e.retries;
  options.first_backoff_ms = e.retry_delay_ms;
  options.ca_files = e.ca_files;
  return tools::OpenRemoteStore(c, options);
}

// Where an endpoint is, for the summary line: its URL (never a key) or its
// data directory.
std::string Describe(const Endpoint& e) {
  if (!e.location.empty()) return "data directory " + e.location + " (account " + e.account + ")";
  tools::Connection c;
  std::string ignored;
  return ResolveConnection(e, &c, &ignored) ? tools::DescribeEndpoint(c) : std::string("the endpoint");
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The addresses `host` resolves to; loopback and unspecified ones as one
// "this machine" entry (a server on 0.0.0.0 answers on every one of them).
std::vector<std::string> HostAddresses(const std::string& host) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, "", ec);
  std::vector<std::string> out;
  if (ec) return {Lower(host)};
  for (const auto& r : results) {
    asio::ip::address a = r.endpoint().address();
    if (a.is_v6() && a.to_v6().is_v4_mapped()) a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
    out.push_back(a.is_loopback() || a.is_unspecified() ? "this machine" : a.to_string());
  }
  return out;
}

// True when `a` and `b` are the same account of the same server, whatever
// the spelling: localhost, 127.0.0.1 and [::1]; a host name and its address;
// UseDevelopmentStorage=true and its URL; the same data directory.
bool SameAccount(const Endpoint& a, const Endpoint& b) {
  if (!a.location.empty() || !b.location.empty()) {
    if (a.location.empty() || b.location.empty() || Lower(a.account) != Lower(b.account)) return false;
    std::error_code ec;
    if (std::filesystem::equivalent(a.location, b.location, ec)) return true;
    return std::filesystem::weakly_canonical(a.location, ec) == std::filesystem::weakly_canonical(b.location, ec);
  }
  tools::Connection ca, cb;
  std::string ignored;
  if (!ResolveConnection(a, &ca, &ignored) || !ResolveConnection(b, &cb, &ignored)) return false;
  if (ca.port != cb.port || Lower(ca.account) != Lower(cb.account)) return false;
  if (Lower(ca.host) == Lower(cb.host)) return true;
  std::vector<std::string> x = HostAddresses(ca.host), y = HostAddresses(cb.host);
  return std::any_of(x.begin(), x.end(), [&](const std::string& v) { return std::find(y.begin(), y.end(), v) != y.end(); });
}

std::string Plural(unsigned long long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "tablestone: imported 3 entities of 1 table into http://127.0.0.1:10002/devstoreaccount1 in ..."
void PrintSummary(std::FILE* err, const char* verb, const tools::DataSummary& s, const std::string& where) {
  double rate = s.seconds > 0 ? static_cast<double>(s.entities) / s.seconds : 0;
  std::string line = std::string("tablestone: ") + verb + " " + Plural(s.entities, "entity", "entities") + " of " +
                     Plural(s.tables, "table", "tables") + " " + where;
  std::fprintf(err, "%s in %.2f s (%.0f entities/s)\n", tools::TerminalSafe(line).c_str(), s.seconds, rate);
}

// An option taking one of `choices`' names (any case) into *target. Unlike
// CLI::CheckedTransformer it accepts the names only (not the enum's numbers)
// and its help reads "{insert,upsert,replace}", not "{insert->0,...}".
template <typename T>
CLI::Option* AddChoice(CLI::App* command, const std::string& name, T* target, std::map<std::string, T> choices,
                       const std::string& help, const std::string& default_name) {
  std::vector<std::string> names;
  for (const auto& [key, value] : choices) names.push_back(key);
  return command
      ->add_option_function<std::string>(
          name, [target, choices](const std::string& v) { *target = choices.at(Lower(v)); }, help)
      ->check(CLI::IsMember(names, CLI::ignore_case))
      ->default_str(default_name)
      ->type_name("NAME");
}

// A progress line for export and import on a terminal (copy has its own),
// redrawn at most 4 times a second; nothing when `err` is not a terminal.
tools::ProgressFn ProgressLine(std::FILE* err, const char* verb) {
  if (::isatty(::fileno(err)) != 1) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [err, verb, last](const tools::DataSummary& s) {
    auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(250)) return;
    *last = now;
    double rate = s.seconds > 0 ? static_cast<double>(s.entities) / s.seconds : 0;
    std::fprintf(err, "\r\033[K%s: %llu entities, %llu tables done, %.0f entities/s", verb,
                 static_cast<unsigned long long>(s.entities), static_cast<unsigned long long>(s.tables), rate);
    std::fflush(err);
  };
}

// Ends a progress line before the summary or an error.
void EndProgressLine(std::FILE* err, const tools::ProgressFn& progress) {
  if (progress) std::fputs("\r\033[K", err);
}

void PrintError(std::FILE* err, const char* command, const std::string& error) {
  std::fprintf(err, "tablestone %s: %s\n", command, tools::TerminalSafe(error).c_str());
}

}  // namespace

bool IsToolCommand(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  for (const char* c : kCommands) {
    if (args[0] == c) return true;
  }
  return false;
}

int RunToolCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  CLI::App app{"tablestone data tools", "tablestone"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help of every subcommand");

  // ---- export ----
  Endpoint from;
  tools::ExportOptions export_options;
  std::string export_compress;
  CLI::App* export_cmd = app.add_subcommand("export", "Write tables to an export file (docs/export-format.md)");
  constexpr const char* kConnHelp =
      " (or env:NAME / file:PATH to read it from an environment variable or a file, keeping the key off the "
      "command line)";
  constexpr const char* kCaHelp =
      "PEM certificate(s) to trust for https:// besides the system's (a private CA, a self-signed server; repeat)";
  auto* from_conn = export_cmd->add_option("--from", from.connection,
                                           std::string("Connection string of the source endpoint") + kConnHelp);
  export_cmd->add_option("--caFile", from.ca_files, kCaHelp)->check(CLI::ExistingFile);
  auto* from_loc = export_cmd->add_option("--fromLocation", from.location,
                                          "Offline data directory of a stopped server as the source");
  from_conn->excludes(from_loc);
  export_cmd->add_option("--retryDelayMs", from.retry_delay_ms, "First retry back-off in ms, doubled per retry (default 200)");
  export_cmd->add_option("--retries", from.retries, "Retries of a failed request (503, timeouts, dropped connections; default 5)");
  export_cmd->add_option("--account", from.account, "Account in --fromLocation (default devstoreaccount1)");
  export_cmd->add_option("--table", export_options.tables, "A table to export (repeat; default: every table)");
  export_cmd->add_option("--out", export_options.out, "Output file, '-' for stdout")->required();
  export_cmd->add_option("--compress", export_compress, "none, gzip or zstd (default: by the file name, .gz/.zst)")
      ->check(CLI::IsMember({"none", "gzip", "zstd"}));

  // ---- import ----
  Endpoint to;
  tools::ImportOptions import_options;
  std::map<std::string, tools::WriteMode> modes = {
      {"insert", tools::WriteMode::kInsert}, {"upsert", tools::WriteMode::kUpsert},
      {"replace", tools::WriteMode::kReplace}};
  std::map<std::string, tools::IfExists> if_exists = {
      {"fail", tools::IfExists::kFail}, {"append", tools::IfExists::kAppend},
      {"replace", tools::IfExists::kReplace}};
  CLI::App* import_cmd = app.add_subcommand("import", "Load an export file into an endpoint or a data directory");
  auto* to_conn = import_cmd->add_option("--to", to.connection,
                                         std::string("Connection string of the target endpoint") + kConnHelp);
  import_cmd->add_option("--caFile", to.ca_files, kCaHelp)->check(CLI::ExistingFile);
  auto* to_loc = import_cmd->add_option("--toLocation", to.location,
                                        "Offline data directory (created if missing) as the target");
  to_conn->excludes(to_loc);
  import_cmd->add_option("--retryDelayMs", to.retry_delay_ms, "First retry back-off in ms, doubled per retry (default 200)");
  import_cmd->add_option("--retries", to.retries, "Retries of a failed request (503, timeouts, dropped connections; default 5)");
  import_cmd->add_option("--account", to.account, "Account in --toLocation (default devstoreaccount1)");
  import_cmd->add_option("--in", import_options.in, "Export file, '-' for stdin (gzip/zstd detected)")->required();
  import_options.parallel = 4;
  import_cmd->add_option("--parallel", import_options.parallel,
                         "Batches in flight to an endpoint (default 4; a data directory takes one at a time)")
      ->check(CLI::Range(1, 64));
  AddChoice(import_cmd, "--mode", &import_options.mode, modes,
            "insert (fail on an existing entity), upsert or replace", "insert");
  AddChoice(import_cmd, "--ifExists", &import_options.if_exists, if_exists,
            "For a table that exists on the target: fail, append or replace (delete first)", "fail");

  // ---- copy ----
  Endpoint copy_from, copy_to;
  tools::CopyOptions copy_options;
  std::string progress = "auto";
  CLI::App* copy_cmd = app.add_subcommand(
      "copy", "Stream tables from one endpoint or data directory to another (resumable with --checkpoint)");
  auto* cf = copy_cmd->add_option("--from", copy_from.connection,
                                  std::string("Connection string of the source endpoint") + kConnHelp);
  copy_cmd->add_option("--caFile", copy_to.ca_files, std::string(kCaHelp) + "; for both endpoints")
      ->check(CLI::ExistingFile);
  auto* cfl = copy_cmd->add_option("--fromLocation", copy_from.location, "Offline data directory as the source");
  cf->excludes(cfl);
  auto* ct = copy_cmd->add_option("--to", copy_to.connection,
                                  std::string("Connection string of the target endpoint") + kConnHelp);
  auto* ctl = copy_cmd->add_option("--toLocation", copy_to.location,
                                   "Offline data directory (created if missing) as the target");
  ct->excludes(ctl);
  copy_cmd->add_option("--retryDelayMs", copy_to.retry_delay_ms, "First retry back-off in ms, doubled per retry (default 200)");
  copy_cmd->add_option("--retries", copy_to.retries,
                       "Retries of a failed request, with exponential back-off (503, 500 OperationTimedOut, "
                       "timeouts, dropped connections; default 5)");
  copy_cmd->add_option("--fromAccount", copy_from.account, "Account in --fromLocation (default devstoreaccount1)");
  copy_cmd->add_option("--toAccount", copy_to.account, "Account in --toLocation (default devstoreaccount1)");
  copy_cmd->add_option("--table,--tables", copy_options.tables, "A table to copy (repeat; default: every table)");
  std::map<std::string, tools::WriteMode> copy_modes = {{"upsert", tools::WriteMode::kUpsert},
                                                         {"replace", tools::WriteMode::kReplace}};
  AddChoice(copy_cmd, "--mode", &copy_options.mode, copy_modes, "replace (default) or upsert", "replace");
  AddChoice(copy_cmd, "--ifExists", &copy_options.if_exists, if_exists,
            "For a table that exists on the target: append (default), fail or replace", "append");
  copy_cmd->add_option("--parallel", copy_options.writers, "Batches in flight (default 4)")
      ->check(CLI::Range(1, 64));
  copy_cmd->add_option("--checkpoint", copy_options.checkpoint,
                       "Checkpoint file: resume from it if present, deleted when the copy completes");
  copy_cmd->add_option("--checkpointIntervalMs", copy_options.checkpoint_interval_ms,
                       "How often the checkpoint is saved (default 1000; also at each table's end)")
      ->check(CLI::Range(10, 3600000));
  copy_cmd->add_option("--progress", progress, "auto (a bar on a terminal, else lines), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  copy_cmd->add_option("--progressIntervalMs", copy_options.progress_interval_ms,
                       "Interval of the plain progress lines (default 5000)");
  std::map<std::string, tools::CountMode> count_modes = {
      {"auto", tools::CountMode::kAuto}, {"yes", tools::CountMode::kYes}, {"no", tools::CountMode::kNo}};
  AddChoice(copy_cmd, "--count", &copy_options.count, count_modes,
            "Count the source's entities first for a percentage and an ETA: auto (with a bar, the default), yes or no",
            "auto");

  // ---- snapshot ----
  std::string snap_location, snap_to, snap_from;
  CLI::App* snap_cmd = app.add_subcommand(
      "snapshot", "Instant consistent snapshot of a data directory (RocksDB checkpoint, hard links)");
  auto* sl = snap_cmd->add_option("--location", snap_location, "Data directory of a stopped server");
  auto* sf = snap_cmd->add_option("--from", snap_from,
                                  "Connection string of a running server started with --adminApi");
  sl->excludes(sf);
  snap_cmd->add_option("--to", snap_to,
                       "Snapshot directory to create (must not exist; a server starts on it as is); with --from, a "
                       "name in the server's --snapshotDir (or a path inside it)")
      ->required();

  // ---- reset ----
  std::string reset_from, reset_account;
  bool reset_all = false;
  CLI::App* reset_cmd = app.add_subcommand("reset", "Delete every table of an account on a running server (--adminApi)");
  reset_cmd->add_option("--from", reset_from, "Connection string (its account key signs the request)")->required();
  reset_cmd->add_flag("--all", reset_all, "Every configured account, not only the connection string's");
  bool reset_yes = false;
  reset_cmd->add_flag("--yes,-y", reset_yes, "Do not ask on a terminal before deleting");

  std::vector<std::string> argv_storage;
  argv_storage.push_back("tablestone");
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : argv_storage) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    if (export_cmd->parsed() && from.connection.empty() && from.location.empty()) {
      throw CLI::RequiredError("export needs --from CONN or --fromLocation DIR", CLI::ExitCodes::RequiredError);
    }
    if (import_cmd->parsed() && to.connection.empty() && to.location.empty()) {
      throw CLI::RequiredError("import needs --to CONN or --toLocation DIR", CLI::ExitCodes::RequiredError);
    }
    if (copy_cmd->parsed() && (copy_from.connection.empty() == copy_from.location.empty() ||
                               copy_to.connection.empty() == copy_to.location.empty())) {
      throw CLI::RequiredError("copy needs --from CONN or --fromLocation DIR, and --to CONN or --toLocation DIR",
                               CLI::ExitCodes::RequiredError);
    }
    if (snap_cmd->parsed() && snap_location.empty() == snap_from.empty()) {
      throw CLI::RequiredError("snapshot needs --location DIR or --from CONN", CLI::ExitCodes::RequiredError);
    }
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, e_out;
    int code = app.exit(e, o, e_out);
    std::fputs(o.str().c_str(), out);
    std::fputs(e_out.str().c_str(), err);
    return code == 0 ? 0 : 2;
  }

  std::string error;
  if (export_cmd->parsed()) {
    export_options.compression = tools::CompressionForPath(export_options.out);
    if (!export_compress.empty()) tools::ParseCompression(export_compress, &export_options.compression);
    auto store = OpenStore(from, false, &error);
    tools::DataSummary summary;
    export_options.progress = ProgressLine(err, "export");
    bool ok = store != nullptr && tools::RunExport(*store, export_options, &summary, &error);
    EndProgressLine(err, export_options.progress);
    if (!ok) {
      PrintError(err, "export", error);
      return 1;
    }
    PrintSummary(err, "exported", summary, "from " + Describe(from) + " to " + export_options.out);
    return 0;
  }
  if (import_cmd->parsed()) {
    auto store = OpenStore(to, true, &error);
    tools::DataSummary summary;
    std::function<std::unique_ptr<tools::TableStore>()> make_writer;
    if (to.location.empty()) make_writer = [&]() { return OpenStore(to, true, &error); };
    import_options.progress = ProgressLine(err, "import");
    bool ok = store != nullptr && tools::RunImport(*store, import_options, &summary, &error, make_writer);
    EndProgressLine(err, import_options.progress);
    if (!ok) {
      PrintError(err, "import", error);
      return 1;
    }
    PrintSummary(err, "imported", summary, "into " + Describe(to));
    return 0;
  }
  if (copy_cmd->parsed()) {
    copy_options.progress = progress == "bar"     ? tools::ProgressStyle::kBar
                            : progress == "lines" ? tools::ProgressStyle::kLines
                            : progress == "none"  ? tools::ProgressStyle::kNone
                                                  : tools::ProgressStyle::kAuto;
    copy_from.retries = copy_to.retries;
    copy_from.retry_delay_ms = copy_to.retry_delay_ms;
    copy_from.ca_files = copy_to.ca_files;
    // Copying an account onto itself reads what it deletes (--ifExists
    // replace emptied the table and said "copied 0 entities"): refused,
    // whichever way the two connection strings spell the endpoint.
    if (SameAccount(copy_from, copy_to)) {
      PrintError(err, "copy", "--from and --to are the same account of the same server (" + Describe(copy_from) +
                                  "); nothing was copied");
      return 2;
    }
    auto source = OpenStore(copy_from, false, &error);
    if (source == nullptr) {
      PrintError(err, "copy", error);
      return 1;
    }
    // A data directory has one engine: one writer thread (it is fast).
    if (!copy_to.location.empty()) copy_options.writers = 1;
    std::string open_error;
    auto make_target = [&]() { return OpenStore(copy_to, true, &open_error); };
    g_interrupted.store(false);
    copy_options.interrupted = &g_interrupted;
    std::signal(SIGINT, OnInterrupt);
    std::signal(SIGTERM, OnInterrupt);
    tools::DataSummary summary;
    bool ok = tools::RunCopy(*source, make_target, copy_options, &summary, &error);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!ok) {
      if (!open_error.empty()) error = open_error;
      PrintError(err, "copy", error);
      return g_interrupted.load() ? 130 : 1;
    }
    PrintSummary(err, "copied", summary, "from " + Describe(copy_from) + " to " + Describe(copy_to));
    return 0;
  }
  if (snap_cmd->parsed() || reset_cmd->parsed()) {
    const char* name = snap_cmd->parsed() ? "snapshot" : "reset";
    auto start = std::chrono::steady_clock::now();
    bool ok = false;
    std::string body;
    std::string where;  // the endpoint, named on stderr
    if (snap_cmd->parsed() && !snap_location.empty()) {
      ok = tools::SnapshotDataDirectory(snap_location, snap_to, &error);
    } else {
      tools::Connection c;
      Endpoint named;
      named.connection = snap_cmd->parsed() ? snap_from : reset_from;
      ok = ResolveConnection(named, &c, &error);
      const std::string own_account = c.account;
      if (ok) where = tools::DescribeEndpoint(c);
      // On a terminal, reset asks first: it deletes every table, on whatever
      // server the connection string names. Scripts (no terminal) and --yes
      // do not ask.
      if (ok && reset_cmd->parsed() && !reset_yes && ::isatty(STDIN_FILENO) == 1) {
        std::string what = reset_all ? "every account" : "account " + own_account;
        std::fprintf(err, "Delete every table of %s on %s? Type 'yes' to confirm: ",
                     tools::TerminalSafe(what).c_str(), tools::TerminalSafe(where).c_str());
        std::fflush(err);
        char answer[16] = {};
        if (std::fgets(answer, sizeof answer, stdin) == nullptr || std::string(answer).rfind("yes", 0) != 0) {
          std::fprintf(err, "tablestone reset: not confirmed; nothing was deleted\n");
          return 1;
        }
      }
      // The server's admin credential, when set in the environment (never on
      // the command line, docs/admin-api.md), signs instead of the account key.
      if (const char* admin_key = std::getenv("TABLESTONE_ADMIN_KEY"); ok && admin_key != nullptr && *admin_key) {
        auto raw = protocol::Base64Decode(admin_key);
        if (!raw) {
          ok = false;
          error = "TABLESTONE_ADMIN_KEY is not base64";
        } else {
          c.account = std::string(protocol::auth::kAdminKeySigner);
          c.key = *raw;
          c.sas.clear();
        }
      }
      if (ok && snap_cmd->parsed()) {
        // A plain name goes into the server's --snapshotDir; a path is sent
        // absolute, and the server accepts it only inside that directory.
        std::string to = snap_to;
        if (to.find('/') != std::string::npos) {
          std::error_code ec;
          to = std::filesystem::absolute(snap_to, ec).lexically_normal().string();
        }
        ok = tools::CallAdminRoute(c, tools::RemoteOptions{}, "snapshot", "to=" + tools::UrlEncode(to), &body,
                                   &error);
      } else if (ok) {
        ok = tools::CallAdminRoute(c, tools::RemoteOptions{}, "reset",
                                   reset_all ? std::string() : "account=" + tools::UrlEncode(own_account), &body,
                                   &error);
      }
    }
    if (!ok) {
      PrintError(err, name, error);
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (body.empty()) {
      std::fprintf(err, "tablestone: snapshot of %s written to %s in %.1f ms\n", snap_location.c_str(),
                   snap_to.c_str(), ms);
    } else {
      std::fprintf(out, "%s\n", body.c_str());
      std::fprintf(err, "tablestone: %s done on %s in %.1f ms\n", name, tools::TerminalSafe(where).c_str(), ms);
    }
    return 0;
  }
  return 2;
}

}  // namespace tablestone::app
