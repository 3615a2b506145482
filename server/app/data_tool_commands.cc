#include "server/app/data_tool_commands.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tools/cli_text.h"
#include "tools/copy_command.h"
#include "tools/data_commands.h"
#include "tools/table_store.h"

namespace tablestone::app {
namespace {

// A store named by a connection string or an offline data directory.
struct Endpoint {
  int retries = 5;           // per request, after the first try
  int retry_delay_ms = 200;  // the first back-off, doubled per retry
  std::string connection;
  std::string location;
  std::string account = std::string(tools::kDevAccount);
  std::vector<std::string> ca_files;  // --caFile: trusted for https://
};

std::unique_ptr<tools::TableStore> OpenStore(const Endpoint& e, bool create, std::string* error) {
  if (!e.location.empty()) return tools::OpenOfflineStore(e.location, e.account, create, error);
  tools::Connection c;
  if (!ResolveConnection(e.connection, &c, error)) return nullptr;
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
  return ResolveConnection(e.connection, &c, &ignored) ? tools::DescribeEndpoint(c) : std::string("the endpoint");
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
  if (!ResolveConnection(a.connection, &ca, &ignored) || !ResolveConnection(b.connection, &cb, &ignored)) return false;
  if (ca.port != cb.port || Lower(ca.account) != Lower(cb.account)) return false;
  if (Lower(ca.host) == Lower(cb.host)) return true;
  std::vector<std::string> x = HostAddresses(ca.host), y = HostAddresses(cb.host);
  return std::any_of(x.begin(), x.end(),
                     [&](const std::string& v) { return std::find(y.begin(), y.end(), v) != y.end(); });
}

// "tablestone: imported 3 entities of 1 table into http://127.0.0.1:10002/devstoreaccount1 in ..."
void PrintSummary(std::FILE* err, const char* verb, const tools::DataSummary& s, const std::string& where) {
  double rate = s.seconds > 0 ? static_cast<double>(s.entities) / s.seconds : 0;
  std::string line = std::string("tablestone: ") + verb + " " + Plural(s.entities, "entity", "entities") + " of " +
                     Plural(s.tables, "table", "tables") + " " + where;
  std::fprintf(err, "%s in %.2f s (%.0f entities/s)", tools::TerminalSafe(line).c_str(), s.seconds, rate);
  // A resumed copy's progress counts the earlier runs too: the summary
  // gives both figures, so the two agree.
  if (s.resumed_entities > 0) {
    std::fprintf(err, "; resumed after %llu entities, %llu in all", static_cast<unsigned long long>(s.resumed_entities),
                 static_cast<unsigned long long>(s.resumed_entities + s.entities));
  }
  std::fputc('\n', err);
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

// An option taking one of `choices`' names (any case) into *target. Unlike
// CLI::CheckedTransformer it accepts the names only (not the enum's numbers)
// and its help reads "{insert,upsert,replace}", not "{insert->0,...}".
template <typename T>
CLI::Option* AddChoice(CLI::App& command, const std::string& name, T* target, std::map<std::string, T> choices,
                       const std::string& help, const std::string& default_name) {
  std::vector<std::string> names;
  for (const auto& [key, value] : choices) names.push_back(key);
  return command
      .add_option_function<std::string>(
          name, [target, choices](const std::string& v) { *target = choices.at(Lower(v)); }, help)
      ->check(CLI::IsMember(names, CLI::ignore_case))
      ->default_str(default_name)
      ->type_name("NAME");
}

std::map<std::string, tools::IfExists> IfExistsNames() {
  return {
      {"fail", tools::IfExists::kFail}, {"append", tools::IfExists::kAppend}, {"replace", tools::IfExists::kReplace}};
}

// --from / --to: a connection string; `role` is "source" or "target".
CLI::Option* AddConnection(CLI::App& command, const char* name, std::string* target, const char* role) {
  return command.add_option(name, *target, std::string("Connection string of the ") + role + " endpoint" + kConnHelp);
}

// Export's and import's endpoint: a connection string or (`location`) a data
// directory, and the retries of the former and account of the latter.
void AddEndpoint(CLI::App& command, Endpoint* e, const char* connection, const char* role, const char* location,
                 const char* location_help) {
  auto* by_connection = AddConnection(command, connection, &e->connection, role);
  command.add_option("--caFile", e->ca_files, kCaHelp)->check(CLI::ExistingFile);
  by_connection->excludes(command.add_option(location, e->location, location_help));
  command.add_option("--retryDelayMs", e->retry_delay_ms,
                     "First retry back-off in ms, doubled per retry (default 200)");
  command.add_option("--retries", e->retries,
                     "Retries of a failed request (503, timeouts, dropped connections; default 5)");
  command.add_option("--account", e->account, std::string("Account in ") + location + " (default devstoreaccount1)");
}

class ExportCommand final : public ToolCommand {
 public:
  void Add(CLI::App& command) override {
    AddEndpoint(command, &from_, "--from", "source", "--fromLocation",
                "Offline data directory of a stopped server as the source");
    command.add_option("--table", options_.tables, "A table to export (repeat; default: every table)");
    command.add_option("--out", options_.out, "Output file, '-' for stdout")->required();
    command.add_option("--compress", compress_, "none, gzip or zstd (default: by the file name, .gz/.zst)")
        ->check(CLI::IsMember({"none", "gzip", "zstd"}));
  }

  int Run(std::FILE*, std::FILE* err) override {
    if (from_.connection.empty() && from_.location.empty()) {
      return UsageError(err, "export", "say where to read: --from CONNECTION_STRING or --fromLocation DIR");
    }
    options_.compression = tools::CompressionForPath(options_.out);
    if (!compress_.empty()) tools::ParseCompression(compress_, &options_.compression);
    std::string error;
    auto store = OpenStore(from_, false, &error);
    tools::DataSummary summary;
    options_.progress = ProgressLine(err, "export");
    options_.interrupted = CatchInterrupts();
    bool ok = store != nullptr && tools::RunExport(*store, options_, &summary, &error);
    ReleaseInterrupts();
    EndProgressLine(err, options_.progress);
    if (!ok) {
      PrintError(err, "export", error);
      return options_.interrupted->load() ? 130 : 1;
    }
    PrintSummary(err, "exported", summary, "from " + Describe(from_) + " to " + options_.out);
    return 0;
  }

 private:
  Endpoint from_;
  tools::ExportOptions options_;
  std::string compress_;
};

class ImportCommand final : public ToolCommand {
 public:
  ImportCommand() { options_.parallel = 4; }

  void Add(CLI::App& command) override {
    AddEndpoint(command, &to_, "--to", "target", "--toLocation",
                "Offline data directory (created if missing) as the target");
    command.add_option("--in", options_.in, "Export file, '-' for stdin (gzip/zstd detected)")->required();
    command
        .add_option("--parallel", options_.parallel,
                    "Batches in flight to an endpoint (default 4; a data directory takes one at a time)")
        ->check(CLI::Range(1, 64));
    command.add_flag("--dryRun", options_.dry_run,
                     "Read and check the whole file (and --ifExists fail against the target) without writing "
                     "anything; run this first for a file you did not write");
    AddChoice(command, "--mode", &options_.mode,
              {{"insert", tools::WriteMode::kInsert},
               {"upsert", tools::WriteMode::kUpsert},
               {"replace", tools::WriteMode::kReplace}},
              "insert (fail on an existing entity), upsert or replace", "insert");
    AddChoice(command, "--ifExists", &options_.if_exists, IfExistsNames(),
              "For a table that exists on the target: fail, append or replace (delete first)", "fail");
  }

  int Run(std::FILE*, std::FILE* err) override {
    if (to_.connection.empty() && to_.location.empty()) {
      return UsageError(err, "import", "say where to write: --to CONNECTION_STRING or --toLocation DIR");
    }
    std::string error;
    auto store = OpenStore(to_, true, &error);
    tools::DataSummary summary;
    std::function<std::unique_ptr<tools::TableStore>()> make_writer;
    if (to_.location.empty()) make_writer = [&]() { return OpenStore(to_, true, &error); };
    options_.progress = ProgressLine(err, "import");
    options_.interrupted = CatchInterrupts();
    bool ok = store != nullptr && tools::RunImport(*store, options_, &summary, &error, make_writer);
    ReleaseInterrupts();
    EndProgressLine(err, options_.progress);
    if (!ok) {
      PrintError(err, "import", error);
      return options_.interrupted->load() ? 130 : 1;
    }
    if (options_.dry_run) {
      PrintSummary(err, "checked", summary, "in " + options_.in + " for " + Describe(to_) + "; nothing was written");
    } else {
      PrintSummary(err, "imported", summary, "into " + Describe(to_));
    }
    return 0;
  }

 private:
  Endpoint to_;
  tools::ImportOptions options_;
};

class CopyCommand final : public ToolCommand {
 public:
  void Add(CLI::App& command) override {
    auto* from = AddConnection(command, "--from", &from_.connection, "source");
    command.add_option("--caFile", to_.ca_files, std::string(kCaHelp) + "; for both endpoints")
        ->check(CLI::ExistingFile);
    from->excludes(command.add_option("--fromLocation", from_.location, "Offline data directory as the source"));
    auto* to = AddConnection(command, "--to", &to_.connection, "target");
    to->excludes(
        command.add_option("--toLocation", to_.location, "Offline data directory (created if missing) as the target"));
    command.add_option("--retryDelayMs", to_.retry_delay_ms,
                       "First retry back-off in ms, doubled per retry (default 200)");
    command.add_option("--retries", to_.retries,
                       "Retries of a failed request, with exponential back-off (503, 500 OperationTimedOut, "
                       "timeouts, dropped connections; default 5)");
    command.add_option("--fromAccount", from_.account, "Account in --fromLocation (default devstoreaccount1)");
    command.add_option("--toAccount", to_.account, "Account in --toLocation (default devstoreaccount1)");
    command.add_option("--table,--tables", options_.tables, "A table to copy (repeat; default: every table)");
    AddChoice(command, "--mode", &options_.mode,
              {{"upsert", tools::WriteMode::kUpsert}, {"replace", tools::WriteMode::kReplace}},
              "replace (default) or upsert", "replace");
    AddChoice(command, "--ifExists", &options_.if_exists, IfExistsNames(),
              "For a table that exists on the target: append (default), fail or replace", "append");
    AddRunOptions(command);
  }

  int Run(std::FILE*, std::FILE* err) override {
    if (from_.connection.empty() == from_.location.empty() || to_.connection.empty() == to_.location.empty()) {
      return UsageError(err, "copy",
                        "say where to read (--from CONNECTION_STRING or --fromLocation DIR) and where to write "
                        "(--to CONNECTION_STRING or --toLocation DIR)");
    }
    options_.progress = progress_ == "bar"     ? tools::ProgressStyle::kBar
                        : progress_ == "lines" ? tools::ProgressStyle::kLines
                        : progress_ == "none"  ? tools::ProgressStyle::kNone
                                               : tools::ProgressStyle::kAuto;
    from_.retries = to_.retries;
    from_.retry_delay_ms = to_.retry_delay_ms;
    from_.ca_files = to_.ca_files;
    // Copying an account onto itself reads what it deletes (--ifExists
    // replace emptied the table and said "copied 0 entities"): refused,
    // whichever way the two connection strings spell the endpoint.
    if (SameAccount(from_, to_)) {
      PrintError(
          err, "copy",
          "--from and --to are the same account of the same server (" + Describe(from_) + "); nothing was copied");
      return 2;
    }
    std::string error;
    auto source = OpenStore(from_, false, &error);
    if (source == nullptr) {
      PrintError(err, "copy", error);
      return 1;
    }
    // A data directory has one engine: one writer thread (it is fast).
    if (!to_.location.empty()) options_.writers = 1;
    std::string open_error;
    auto make_target = [&]() { return OpenStore(to_, true, &open_error); };
    options_.interrupted = CatchInterrupts();
    tools::DataSummary summary;
    bool ok = tools::RunCopy(*source, make_target, options_, &summary, &error);
    ReleaseInterrupts();
    if (!ok) {
      if (!open_error.empty()) error = open_error;
      PrintError(err, "copy", error);
      return options_.interrupted->load() ? 130 : 1;
    }
    PrintSummary(err, "copied", summary, "from " + Describe(from_) + " to " + Describe(to_));
    return 0;
  }

 private:
  // How the copy runs: writers in flight, checkpoint, progress, count.
  void AddRunOptions(CLI::App& command) {
    command.add_option("--parallel", options_.writers, "Batches in flight (default 4)")->check(CLI::Range(1, 64));
    command.add_option("--checkpoint", options_.checkpoint,
                       "Checkpoint file: resume from it if present, deleted when the copy completes");
    command
        .add_option("--checkpointIntervalMs", options_.checkpoint_interval_ms,
                    "How often the checkpoint is saved (default 1000; also at each table's end)")
        ->check(CLI::Range(10, 3600000));
    command.add_option("--progress", progress_, "auto (a bar on a terminal, else lines), bar, lines or none")
        ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
    command.add_option("--progressIntervalMs", options_.progress_interval_ms,
                       "Interval of the plain progress lines (default 5000)");
    AddChoice(
        command, "--count", &options_.count,
        {{"auto", tools::CountMode::kAuto}, {"yes", tools::CountMode::kYes}, {"no", tools::CountMode::kNo}},
        "Count the source's entities first for a percentage and an ETA: auto (with a bar, the default), yes or no",
        "auto");
  }

  Endpoint from_, to_;  // --caFile, --retries and --retryDelayMs are to_'s, for both
  tools::CopyOptions options_;
  std::string progress_ = "auto";
};

}  // namespace

std::unique_ptr<ToolCommand> NewExportCommand() { return std::make_unique<ExportCommand>(); }
std::unique_ptr<ToolCommand> NewImportCommand() { return std::make_unique<ImportCommand>(); }
std::unique_ptr<ToolCommand> NewCopyCommand() { return std::make_unique<CopyCommand>(); }

}  // namespace tablestone::app
