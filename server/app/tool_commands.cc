#include "server/app/tool_commands.h"

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <csignal>
#include <cstdlib>
#include <map>
#include <sstream>

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
};

std::unique_ptr<tools::TableStore> OpenStore(const Endpoint& e, bool create, std::string* error) {
  if (!e.location.empty()) return tools::OpenOfflineStore(e.location, e.account, create, error);
  tools::Connection c;
  if (!tools::ParseConnectionString(e.connection, &c, error)) return nullptr;
  tools::RemoteOptions options;
  options.attempts = 1 + e.retries;
  options.first_backoff_ms = e.retry_delay_ms;
  return tools::OpenRemoteStore(c, options);
}

void PrintSummary(std::FILE* err, const char* verb, const tools::DataSummary& s) {
  double rate = s.seconds > 0 ? static_cast<double>(s.entities) / s.seconds : 0;
  std::fprintf(err, "tablestone: %s %llu entities of %llu tables in %.2f s (%.0f entities/s)\n", verb,
               static_cast<unsigned long long>(s.entities), static_cast<unsigned long long>(s.tables), s.seconds,
               rate);
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
  auto* from_conn = export_cmd->add_option("--from", from.connection, "Connection string of the source endpoint");
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
  auto* to_conn = import_cmd->add_option("--to", to.connection, "Connection string of the target endpoint");
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
  import_cmd->add_option("--mode", import_options.mode, "insert (fail on an existing entity), upsert or replace")
      ->transform(CLI::CheckedTransformer(modes, CLI::ignore_case));
  import_cmd->add_option("--ifExists", import_options.if_exists,
                         "For a table that exists on the target: fail, append or replace (delete first)")
      ->transform(CLI::CheckedTransformer(if_exists, CLI::ignore_case));

  // ---- copy ----
  Endpoint copy_from, copy_to;
  tools::CopyOptions copy_options;
  std::string progress = "auto";
  CLI::App* copy_cmd = app.add_subcommand(
      "copy", "Stream tables from one endpoint or data directory to another (resumable with --checkpoint)");
  auto* cf = copy_cmd->add_option("--from", copy_from.connection, "Connection string of the source endpoint");
  auto* cfl = copy_cmd->add_option("--fromLocation", copy_from.location, "Offline data directory as the source");
  cf->excludes(cfl);
  auto* ct = copy_cmd->add_option("--to", copy_to.connection, "Connection string of the target endpoint");
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
  copy_cmd->add_option("--mode", copy_options.mode, "replace (default) or upsert")
      ->transform(CLI::CheckedTransformer(copy_modes, CLI::ignore_case));
  copy_cmd->add_option("--ifExists", copy_options.if_exists,
                       "For a table that exists on the target: append (default), fail or replace")
      ->transform(CLI::CheckedTransformer(if_exists, CLI::ignore_case));
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
  copy_cmd->add_option("--count", copy_options.count,
                       "Count the source's entities first for a percentage and an ETA: auto (with a bar, the "
                       "default), yes or no")
      ->transform(CLI::CheckedTransformer(count_modes, CLI::ignore_case));

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

  std::vector<std::string> argv_storage;
  argv_storage.push_back("tablestone");
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : argv_storage) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    if (export_cmd->parsed() && from.connection.empty() && from.location.empty()) {
      throw CLI::RequiredError("export needs --from CONN or --fromLocation DIR");
    }
    if (import_cmd->parsed() && to.connection.empty() && to.location.empty()) {
      throw CLI::RequiredError("import needs --to CONN or --toLocation DIR");
    }
    if (copy_cmd->parsed() && (copy_from.connection.empty() == copy_from.location.empty() ||
                               copy_to.connection.empty() == copy_to.location.empty())) {
      throw CLI::RequiredError("copy needs --from CONN or --fromLocation DIR, and --to CONN or --toLocation DIR");
    }
    if (snap_cmd->parsed() && snap_location.empty() == snap_from.empty()) {
      throw CLI::RequiredError("snapshot needs --location DIR or --from CONN");
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
    if (store == nullptr || !tools::RunExport(*store, export_options, &summary, &error)) {
      std::fprintf(err, "tablestone export: %s\n", error.c_str());
      return 1;
    }
    PrintSummary(err, "exported", summary);
    return 0;
  }
  if (import_cmd->parsed()) {
    auto store = OpenStore(to, true, &error);
    tools::DataSummary summary;
    std::function<std::unique_ptr<tools::TableStore>()> make_writer;
    if (to.location.empty()) make_writer = [&]() { return OpenStore(to, true, &error); };
    if (store == nullptr || !tools::RunImport(*store, import_options, &summary, &error, make_writer)) {
      std::fprintf(err, "tablestone import: %s\n", error.c_str());
      return 1;
    }
    PrintSummary(err, "imported", summary);
    return 0;
  }
  if (copy_cmd->parsed()) {
    copy_options.progress = progress == "bar"     ? tools::ProgressStyle::kBar
                            : progress == "lines" ? tools::ProgressStyle::kLines
                            : progress == "none"  ? tools::ProgressStyle::kNone
                                                  : tools::ProgressStyle::kAuto;
    copy_from.retries = copy_to.retries;
    copy_from.retry_delay_ms = copy_to.retry_delay_ms;
    auto source = OpenStore(copy_from, false, &error);
    if (source == nullptr) {
      std::fprintf(err, "tablestone copy: %s\n", error.c_str());
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
      std::fprintf(err, "tablestone copy: %s\n", error.c_str());
      return g_interrupted.load() ? 130 : 1;
    }
    PrintSummary(err, "copied", summary);
    return 0;
  }
  if (snap_cmd->parsed() || reset_cmd->parsed()) {
    const char* name = snap_cmd->parsed() ? "snapshot" : "reset";
    auto start = std::chrono::steady_clock::now();
    bool ok = false;
    std::string body;
    if (snap_cmd->parsed() && !snap_location.empty()) {
      ok = tools::SnapshotDataDirectory(snap_location, snap_to, &error);
    } else {
      tools::Connection c;
      ok = tools::ParseConnectionString(snap_cmd->parsed() ? snap_from : reset_from, &c, &error);
      const std::string own_account = c.account;
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
      std::fprintf(err, "tablestone %s: %s\n", name, error.c_str());
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (body.empty()) {
      std::fprintf(err, "tablestone: snapshot of %s written to %s in %.1f ms\n", snap_location.c_str(),
                   snap_to.c_str(), ms);
    } else {
      std::fprintf(out, "%s\n", body.c_str());
    }
    return 0;
  }
  return 2;
}

}  // namespace tablestone::app
