#include "server/app/tool_commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "server/app/config.h"
#include "server/app/fault_commands.h"
#include "tools/cli_text.h"
#include "protocol/auth/admin_signature.h"
#include "protocol/base64.h"
#include "tools/connection_string.h"
#include "tools/copy_command.h"
#include "tools/data_commands.h"
#include "tools/table_store.h"

namespace tablestone::app {
namespace {

constexpr const char* kCommands[] = {"export", "import", "copy", "snapshot", "reset", "faults", "trace", "health"};

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) {
  g_interrupted.store(true);
  // A second Ctrl-C ends the process at once.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

// From here to ReleaseInterrupts, SIGINT/SIGTERM ask the running command to
// stop where it can say what it left (export, import, copy).
const std::atomic<bool>* CatchInterrupts() {
  g_interrupted.store(false);
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  return &g_interrupted;
}

void ReleaseInterrupts() {
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

// The connection an admin route is signed with: the connection string's
// account key, or the server's admin credential when TABLESTONE_ADMIN_KEY is
// set in the environment (never on the command line, docs/admin-api.md).
// `where` names the endpoint for the summary, `own_account` the string's account.
bool AdminConnection(const std::string& connection, tools::Connection* c, std::string* where,
                     std::string* own_account, std::string* error) {
  Endpoint named;
  named.connection = connection;
  if (!ResolveConnection(named, c, error)) return false;
  *own_account = c->account;
  *where = tools::DescribeEndpoint(*c);
  if (const char* admin_key = std::getenv("TABLESTONE_ADMIN_KEY"); admin_key != nullptr && *admin_key) {
    auto raw = protocol::Base64Decode(admin_key);
    if (!raw) {
      *error = "TABLESTONE_ADMIN_KEY is not base64";
      return false;
    }
    c->account = std::string(protocol::auth::kAdminKeySigner);
    c->key = *raw;
    c->sas.clear();
  }
  return true;
}

// The largest rule file `tablestone faults add --file` sends: the server's
// cap on an admin request body (docs/admin-api.md).
constexpr uintmax_t kMaxRuleFileBytes = 1u << 20;

// Reads and checks a rule file before anything is sent: a directory, an
// oversized file or one that is not JSON is named with its path.
bool ReadRuleFile(const std::string& path, std::string* json, std::string* error) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    *error = "cannot read '" + path + "': " + (ec ? ec.message() : std::string("no such file"));
    return false;
  }
  if (!std::filesystem::is_regular_file(status)) {
    *error = "'" + path + "' is not a regular file";
    return false;
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxRuleFileBytes) {
    *error = "'" + path + "' is larger than 1 MiB, the most a server takes in one admin request";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    *error = "cannot read '" + path + "'";
    return false;
  }
  *json = text.str();
  return true;
}

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
  if (c->host.size() > 2 && c->host.front() == '[' && c->host.back() == ']') c->host = c->host.substr(1, c->host.size() - 2);
  c->port = std::to_string(config.port);
  if (!config.cert.empty() && options->ca_files.empty() && options->server_cert.empty()) {
    options->server_cert = config.cert;
    options->server_cert_password = config.pwd;
  }
  return true;
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
  std::fprintf(err, "%s in %.2f s (%.0f entities/s)", tools::TerminalSafe(line).c_str(), s.seconds, rate);
  // A resumed copy's progress counts the earlier runs too: the summary
  // gives both figures, so the two agree.
  if (s.resumed_entities > 0) {
    std::fprintf(err, "; resumed after %llu entities, %llu in all", static_cast<unsigned long long>(s.resumed_entities),
                 static_cast<unsigned long long>(s.resumed_entities + s.entities));
  }
  std::fputc('\n', err);
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

// Levenshtein distance, for "did you mean" on a mistyped option (short names only).
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// An argument as a message may show it: never a key or a signature (a
// connection string given where an option name was expected), at most 60
// characters.
std::string Shown(const std::string& arg) {
  for (const char* secret : {"accountkey=", "sharedaccesssignature=", "sig="}) {
    if (Lower(arg).find(secret) != std::string::npos) return "(a connection string, not shown)";
  }
  return "'" + (arg.size() > 60 ? arg.substr(0, 60) + "..." : arg) + "'";
}

// "unknown option '--frm' (did you mean --from?)", "unexpected argument 'x'",
// "no command 'ad' (the commands are add, list, clear)" for the first
// argument a command did not take, instead of CLI11's "The following
// arguments were not expected: x --frm" (which also echoed every value).
std::string DescribeExtras(const CLI::App& command, const std::vector<std::string>& extras) {
  const std::string& extra = extras.front();
  if (extra.rfind("-", 0) != 0) {
    const std::vector<const CLI::App*> subcommands = command.get_subcommands([](const CLI::App*) { return true; });
    if (!subcommands.empty()) {
      std::string names;
      for (const CLI::App* sub : subcommands) names += (names.empty() ? "" : ", ") + sub->get_name();
      return "no command " + Shown(extra) + " (the commands are " + names + ")";
    }
    return "unexpected argument " + Shown(extra) + " (options take the form --name VALUE)";
  }
  const std::string name = extra.substr(0, extra.find('='));
  std::string text = "unknown option " + Shown(name);
  std::string best;
  size_t best_distance = 3;  // suggest only close spellings
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& long_name : option->get_lnames()) {
      size_t d = EditDistance(Lower(name), Lower("--" + long_name));
      if (d < best_distance) {
        best_distance = d;
        best = "--" + long_name;
      }
    }
  }
  if (!best.empty()) text += " (did you mean " + best + "?)";
  return text;
}

// Help of at most kHelpWidth columns, as the server's --help (flags.cc):
// descriptions wrapped at word boundaries under their column, and without
// CLI11's "Excludes: ..." lists (the usage error names a conflict when it
// happens).
// --help-all indents each level of subcommand by 2 more columns (`faults
// add` by 4), hence the margin.
constexpr size_t kHelpWidth = 100 - 4;

std::string WrapWords(const std::string& text, size_t width) {
  std::string out;
  size_t column = 0;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (column > 0 && column + 1 + word.size() > width) {
      out += '\n';
      column = 0;
    } else if (column > 0) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out;
}

class ToolHelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    std::string opts = CLI::Formatter::make_option_opts(option);
    return opts.substr(0, std::min(opts.find(" Excludes:"), opts.find(" Needs:")));
  }
  std::string make_option_desc(const CLI::Option* option) const override {
    return WrapWords(option->get_description(), kHelpWidth - get_column_width());
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true),
                             WrapWords(sub->get_description(), kHelpWidth - get_column_width()), get_column_width());
    return out.str();
  }
  // --help-all expands every level (`faults add`'s options too), not only
  // the first.
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    return CLI::Formatter::make_subcommands(app, mode == CLI::AppFormatMode::Sub ? CLI::AppFormatMode::All : mode);
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string text = CLI::Formatter::make_description(app);
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) out += WrapWords(line, kHelpWidth) + "\n";
    return out;
  }
};

int UsageError(std::FILE* err, const std::string& command, const std::string& message) {
  const std::string name = command.empty() ? std::string() : " " + command;
  std::fprintf(err, "tablestone%s: %s\nRun 'tablestone%s --help' for the options.\n", name.c_str(),
               tools::TerminalSafe(message).c_str(), name.c_str());
  return 2;
}

}  // namespace

std::string ToolCommandList() {
  std::string out;
  for (const char* c : kCommands) out += (out.empty() ? "" : ", ") + std::string(c);
  return out;
}

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
  app.formatter(std::make_shared<ToolHelpFormatter>());

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
  import_cmd->add_flag("--dryRun", import_options.dry_run,
                       "Read and check the whole file (and --ifExists fail against the target) without writing "
                       "anything; run this first for a file you did not write");
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
  // The admin route's JSON answer on stdout, for scripts; the summary line on
  // stderr is there either way, as every other command's.
  bool admin_json = false;
  std::vector<std::string> admin_ca_files;  // --caFile of the admin commands
  snap_cmd->add_flag("--json", admin_json, "Also print the server's JSON answer on stdout");
  snap_cmd->add_option("--caFile", admin_ca_files, kCaHelp)->check(CLI::ExistingFile);
  reset_cmd->add_option("--caFile", admin_ca_files, kCaHelp)->check(CLI::ExistingFile);
  reset_cmd->add_flag("--json", admin_json, "Also print the server's JSON answer on stdout");

  // ---- faults, trace (admin routes signed for the user, docs/admin-api.md) ----
  constexpr const char* kAdminFromHelp =
      "Connection string of a server started with --adminApi (its account key signs; TABLESTONE_ADMIN_KEY in "
      "the environment signs as the admin instead)";
  std::string admin_from, fault_rule, fault_file, fault_id, trace_file;
  bool trace_bodies = false;
  FaultFlags fault_flags;
  // --caFile for every admin command (a server started with --cert).
  auto admin_from_option = [&](CLI::App* command) {
    command->add_option("--from", admin_from, kAdminFromHelp)->required();
    command->add_option("--caFile", admin_ca_files, kCaHelp)->check(CLI::ExistingFile);
  };
  CLI::App* faults_cmd = app.add_subcommand(
      "faults", "Add, list or clear fault rules on a running server (docs/testing-with-faults.md)");
  faults_cmd->require_subcommand(1);
  CLI::App* faults_add = faults_cmd->add_subcommand(
      "add", "Add rules: a rule, an array of rules, or the --faults file form ({\"seed\":N,\"rules\":[...]})");
  admin_from_option(faults_add);
  auto* rule_opt =
      faults_add->add_option("--rule", fault_rule, "The rules as JSON text, or @PATH to read them from a file");
  auto* file_opt = faults_add->add_option("--file", fault_file, "A file holding the rules as JSON (at most 1 MiB)");
  rule_opt->excludes(file_opt);
  // The common case without JSON: one rule from flags, scoped to the
  // connection string's account (all an account key may add).
  std::vector<CLI::Option*> flag_opts = {
      faults_add->add_option("--operation", fault_flags.operations,
                             "Flags form: an operation name to match (repeat; e.g. InsertEntity, QueryEntities)"),
      faults_add->add_option("--table", fault_flags.table, "Flags form: the table to match"),
      faults_add->add_option("--status", fault_flags.status, "Flags form: answer with this status (503 or 500)"),
      faults_add->add_option("--errorCode", fault_flags.error_code,
                             "Flags form: answer with this error code (ServerBusy, OperationTimedOut, InternalError)"),
      faults_add->add_option("--action", fault_flags.action,
                             "Flags form: the rule's action (default serverBusy; timeoutAfter, closeAfter, "
                             "resetMidResponse, latencyBefore, ...: docs/testing-with-faults.md)"),
      faults_add->add_option("--count", fault_flags.count, "Flags form: inject at most N times (maxCount)"),
      faults_add->add_option("--probability", fault_flags.probability, "Flags form: fire with this probability")
          ->check(CLI::Range(0.0, 1.0))
          ->type_name("P"),
      faults_add->add_option("--everyNth", fault_flags.every_nth, "Flags form: fire on every Nth matching request"),
      faults_add->add_option("--latencyMs", fault_flags.latency_ms, "Flags form: the delay of a latency action"),
      faults_add->add_option("--id", fault_flags.id, "Flags form: the rule's id (default r1, r2, ...)")};
  for (CLI::Option* o : flag_opts) {
    o->excludes(rule_opt);
    o->excludes(file_opt);
  }
  bool faults_json = false;
  CLI::App* faults_list = faults_cmd->add_subcommand(
      "list", "Print the rules with their matched and injected counts, and realistic mode, on stdout");
  admin_from_option(faults_list);
  faults_list->add_flag("--json", faults_json, "Print the server's JSON answer instead (for scripts)");
  CLI::App* faults_clear = faults_cmd->add_subcommand("clear", "Remove every rule (realistic mode stays), or one");
  admin_from_option(faults_clear);
  faults_clear->add_option("--id", fault_id, "Remove only this rule (an id from add or list)");
  CLI::App* trace_cmd = app.add_subcommand(
      "trace", "Turn the request trace of a running server on or off (docs/observability.md, Request trace)");
  trace_cmd->require_subcommand(1);
  CLI::App* trace_on = trace_cmd->add_subcommand("on", "Start tracing into a file of the server's --traceDir");
  admin_from_option(trace_on);
  trace_on->add_option("--file", trace_file, "A plain file name in the server's --traceDir (appended to)")
      ->required();
  trace_on->add_flag("--bodies", trace_bodies, "Also trace headers and bodies (keys and signatures redacted)");
  CLI::App* trace_off = trace_cmd->add_subcommand("off", "Stop tracing (the file is complete when this returns)");
  admin_from_option(trace_off);
  CLI::App* trace_status = trace_cmd->add_subcommand("status", "Say whether the server traces, and into which file");
  admin_from_option(trace_status);

  // ---- health ----
  std::string health_url;
  std::vector<std::string> health_server_args;
  tools::RemoteOptions health_options;
  health_options.attempts = 1;
  health_options.timeout_ms = 5000;
  CLI::App* health_cmd = app.add_subcommand(
      "health", "Ask a running server whether it serves (GET /_tablestone/health, no credential); exit 0 if so");
  health_cmd->add_option("--url", health_url,
                         "The listener, http[s]://HOST:PORT (default: the one the server settings after -- name, "
                         "with the environment and their --config file)");
  health_cmd->add_option("--caFile", health_options.ca_files, kCaHelp)->check(CLI::ExistingFile);
  health_cmd->add_option("--serverCert", health_options.server_cert,
                         "Trust exactly this server certificate (PEM) whatever names it carries (default without "
                         "--url and --caFile: the server's own --cert)")
      ->check(CLI::ExistingFile);
  health_cmd->add_option("--timeoutMs", health_options.timeout_ms, "Give up after this long (default 5000)")
      ->check(CLI::Range(100, 600000));
  health_cmd->add_option("serverFlags", health_server_args,
                         "After --: the server's flags (e.g. a container's PID 1 arguments) whose listener to probe")
      ->type_name("");

  std::vector<std::string> argv_storage;
  argv_storage.push_back("tablestone");
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : argv_storage) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, e_out;
    int code = app.exit(e, o, e_out);
    // Name what was not understood first: a mistyped option also leaves a
    // required one missing, and "--out is required" hides the typo; and
    // `faults ad --help` is a mistyped command, not a request for faults' help.
    std::string name;
    for (CLI::App* command = &app; command != nullptr;) {
      if (command != &app) name += (name.empty() ? "" : " ") + command->get_name();
      if (!command->remaining().empty()) {
        return UsageError(err, name, DescribeExtras(*command, command->remaining()));
      }
      const std::vector<CLI::App*> parsed = command->get_subcommands();
      command = parsed.empty() ? nullptr : parsed.front();
    }
    if (code == 0) {  // --help, --help-all
      std::fputs(o.str().c_str(), out);
      return 0;
    }
    std::string what = e.what();
    if (what.empty()) what = e_out.str();
    return UsageError(err, name, what);
  }
  if (export_cmd->parsed() && from.connection.empty() && from.location.empty()) {
    return UsageError(err, "export", "say where to read: --from CONNECTION_STRING or --fromLocation DIR");
  }
  if (import_cmd->parsed() && to.connection.empty() && to.location.empty()) {
    return UsageError(err, "import", "say where to write: --to CONNECTION_STRING or --toLocation DIR");
  }
  if (copy_cmd->parsed() && (copy_from.connection.empty() == copy_from.location.empty() ||
                             copy_to.connection.empty() == copy_to.location.empty())) {
    return UsageError(err, "copy",
                      "say where to read (--from CONNECTION_STRING or --fromLocation DIR) and where to write "
                      "(--to CONNECTION_STRING or --toLocation DIR)");
  }
  if (snap_cmd->parsed() && snap_location.empty() == snap_from.empty()) {
    return UsageError(err, "snapshot", "say what to snapshot: --location DIR or --from CONNECTION_STRING");
  }

  std::string error;
  tools::RemoteOptions admin_options;
  admin_options.ca_files = admin_ca_files;
  if (health_cmd->parsed()) {
    tools::Connection c;
    if (!health_url.empty() && !health_server_args.empty()) {
      return UsageError(err, "health", "give --url or the server's flags after --, not both");
    }
    const bool ok = health_url.empty() ? ListenerOfServer(health_server_args, &c, &health_options, &error)
                                       : tools::ParseEndpointUrl(health_url, &c, &error);
    if (!ok) {
      PrintError(err, "health", error);
      return 1;
    }
    const std::string where = c.scheme + "://" + (c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host) +
                              ":" + c.port;
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    std::string body;
    if (!tools::GetHealth(c, health_options, &status, &body, &error)) {
      PrintError(err, "health", "unhealthy: " + error);
      return 1;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
  if (export_cmd->parsed()) {
    export_options.compression = tools::CompressionForPath(export_options.out);
    if (!export_compress.empty()) tools::ParseCompression(export_compress, &export_options.compression);
    auto store = OpenStore(from, false, &error);
    tools::DataSummary summary;
    export_options.progress = ProgressLine(err, "export");
    export_options.interrupted = CatchInterrupts();
    bool ok = store != nullptr && tools::RunExport(*store, export_options, &summary, &error);
    ReleaseInterrupts();
    EndProgressLine(err, export_options.progress);
    if (!ok) {
      PrintError(err, "export", error);
      return g_interrupted.load() ? 130 : 1;
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
    import_options.interrupted = CatchInterrupts();
    bool ok = store != nullptr && tools::RunImport(*store, import_options, &summary, &error, make_writer);
    ReleaseInterrupts();
    EndProgressLine(err, import_options.progress);
    if (!ok) {
      PrintError(err, "import", error);
      return g_interrupted.load() ? 130 : 1;
    }
    if (import_options.dry_run) {
      PrintSummary(err, "checked", summary, "in " + import_options.in + " for " + Describe(to) + "; nothing was written");
    } else {
      PrintSummary(err, "imported", summary, "into " + Describe(to));
    }
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
    copy_options.interrupted = CatchInterrupts();
    tools::DataSummary summary;
    bool ok = tools::RunCopy(*source, make_target, copy_options, &summary, &error);
    ReleaseInterrupts();
    if (!ok) {
      if (!open_error.empty()) error = open_error;
      PrintError(err, "copy", error);
      return g_interrupted.load() ? 130 : 1;
    }
    PrintSummary(err, "copied", summary, "from " + Describe(copy_from) + " to " + Describe(copy_to));
    return 0;
  }
  if (faults_cmd->parsed() || trace_cmd->parsed()) {
    const std::string name = faults_cmd->parsed() ? "faults" : "trace";
    std::string method = "GET", op = name, query, request, answer, where, own_account;
    if (faults_add->parsed()) {
      bool from_flags = false;
      for (const CLI::Option* o : faults_add->get_options()) {
        const std::string n = o->get_name();
        from_flags = from_flags || (o->count() > 0 && n != "--from" && n != "--caFile" && n != "--rule" && n != "--file");
      }
      if (fault_rule.rfind("@", 0) == 0) {  // --rule @PATH is --file PATH
        fault_file = fault_rule.substr(1);
        fault_rule.clear();
      }
      if (!from_flags && fault_rule.empty() == fault_file.empty()) {
        return UsageError(err, "faults add",
                          "give the rules with --rule JSON, --rule @PATH or --file PATH, or one rule in flags "
                          "(--operation, --table, --status, --errorCode, --action, --count, ...)");
      }
      if (!fault_file.empty() && !ReadRuleFile(fault_file, &request, &error)) {
        PrintError(err, "faults add", error);
        return 1;
      }
      nlohmann::json parsed;
      if (from_flags) {
        // Scoped to the signer's account: the only rule an account key may
        // add, and the account's own traffic (docs/admin-api.md).
        tools::Connection signer;
        std::string ignored_where, own_account;
        if (!AdminConnection(admin_from, &signer, &ignored_where, &own_account, &error)) {
          PrintError(err, "faults add", error);
          return 1;
        }
        if (signer.account != protocol::auth::kAdminKeySigner) fault_flags.account = own_account;
        if (!FaultRuleFromFlags(fault_flags, &parsed, &error)) return UsageError(err, "faults add", error);
        request = parsed.dump();
      } else {
        if (fault_file.empty()) request = fault_rule;
        parsed = nlohmann::json::parse(request, nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded() || !(parsed.is_object() || parsed.is_array())) {
          PrintError(err, "faults add",
                     (fault_file.empty() ? std::string("--rule") : "'" + fault_file + "'") +
                         " is not a JSON rule, array of rules or rule file (docs/testing-with-faults.md)");
          return 1;
        }
      }
      // Checked here with the server's own parser: a typo is refused (with
      // the list of names) before anything is sent.
      if (!CheckFaultRules(parsed, &error)) {
        PrintError(err, "faults add", "the rule is refused before sending: " + error);
        return 1;
      }
      method = "POST";
    } else if (faults_clear->parsed()) {
      method = "DELETE";
      if (!fault_id.empty()) query = "id=" + tools::UrlEncode(fault_id);
    } else if (trace_on->parsed()) {
      method = "POST";
      request = nlohmann::json{{"enabled", true}, {"file", trace_file}, {"bodies", trace_bodies}}.dump();
    } else if (trace_off->parsed()) {
      method = "POST";
      request = R"({"enabled":false})";
    }
    const std::string full_name = name + " " + (faults_cmd->parsed() ? faults_cmd : trace_cmd)->get_subcommands().front()->get_name();
    tools::Connection c;
    if (!AdminConnection(admin_from, &c, &where, &own_account, &error) ||
        !tools::CallAdminRoute(c, admin_options, method, op, query, request, &answer, &error)) {
      PrintError(err, full_name.c_str(), error);
      return 1;
    }
    const auto j = nlohmann::json::parse(answer, nullptr, /*allow_exceptions=*/false);
    std::string line;
    if (faults_add->parsed()) {
      std::string ids;
      size_t n = 0;
      if (j.is_object() && j.contains("ids") && j["ids"].is_array()) {
        for (const auto& id : j["ids"]) {
          if (!id.is_string()) continue;
          ids += (ids.empty() ? "" : ", ") + id.get<std::string>();
          ++n;
        }
      }
      line = "added " + Plural(n, "fault rule", "fault rules") + (ids.empty() ? "" : " (" + ids + ")") + " on " + where;
    } else if (faults_list->parsed()) {
      if (faults_json || j.is_discarded()) {
        std::fprintf(out, "%s\n", j.is_discarded() ? answer.c_str() : j.dump(2).c_str());
      } else {
        std::istringstream lines(DescribeFaultListing(j));
        for (std::string text; std::getline(lines, text);) std::fprintf(out, "%s\n", tools::TerminalSafe(text).c_str());
      }
      size_t n = j.is_object() && j.contains("rules") && j["rules"].is_array() ? j["rules"].size() : 0;
      line = Plural(n, "fault rule", "fault rules") + " on " + where;
    } else if (faults_clear->parsed()) {
      line = fault_id.empty() ? "cleared every fault rule on " + where : "removed fault rule " + fault_id + " on " + where;
    } else {
      const bool enabled = j.is_object() && j.value("enabled", false);
      const std::string file = j.is_object() && j.contains("file") && j["file"].is_string() ? j["file"].get<std::string>() : "";
      const uint64_t written = j.is_object() && j.contains("written") && j["written"].is_number_unsigned()
                                   ? j["written"].get<uint64_t>() : 0;
      const uint64_t dropped = j.is_object() && j.contains("dropped") && j["dropped"].is_number_unsigned()
                                   ? j["dropped"].get<uint64_t>() : 0;
      line = enabled ? "tracing requests on " + where + " into " + file + (j.value("bodies", false) ? " (with bodies)" : "")
                     : "not tracing on " + where;
      line += " (" + Plural(written, "line", "lines") + " written, " + std::to_string(dropped) + " dropped)";
    }
    std::fprintf(err, "tablestone: %s\n", tools::TerminalSafe(line).c_str());
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
      std::string own_account;
      ok = AdminConnection(snap_cmd->parsed() ? snap_from : reset_from, &c, &where, &own_account, &error);
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
      if (ok && snap_cmd->parsed()) {
        // A plain name goes into the server's --snapshotDir; a path is sent
        // absolute, and the server accepts it only inside that directory.
        std::string to = snap_to;
        if (to.find('/') != std::string::npos) {
          std::error_code ec;
          to = std::filesystem::absolute(snap_to, ec).lexically_normal().string();
        }
        ok = tools::CallAdminRoute(c, admin_options, "snapshot", "to=" + tools::UrlEncode(to), &body,
                                   &error);
      } else if (ok) {
        ok = tools::CallAdminRoute(c, admin_options, "reset",
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
      if (admin_json) std::fprintf(out, "%s\n", body.c_str());
      const auto answer = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
      std::string line;
      if (snap_cmd->parsed()) {
        const auto* path = answer.is_object() && answer.contains("snapshot") && answer["snapshot"].is_string()
                               ? &answer["snapshot"] : nullptr;
        line = "snapshot of " + where + " written to " + (path ? path->get<std::string>() : snap_to);
      } else {
        std::string accounts;
        uint64_t deleted = 0;
        if (answer.is_object()) {
          if (answer.contains("tablesDeleted") && answer["tablesDeleted"].is_number_unsigned()) {
            deleted = answer["tablesDeleted"].get<uint64_t>();
          }
          if (answer.contains("accounts") && answer["accounts"].is_array()) {
            for (const auto& a : answer["accounts"]) {
              if (!a.is_string()) continue;
              accounts += (accounts.empty() ? "" : ", ") + a.get<std::string>();
            }
          }
        }
        line = "reset deleted " + Plural(deleted, "table", "tables") + " of " +
               (accounts.empty() ? std::string("no account") : accounts) + " on " + where;
      }
      std::fprintf(err, "tablestone: %s in %.1f ms\n", tools::TerminalSafe(line).c_str(), ms);
    }
    return 0;
  }
  return 2;
}

}  // namespace tablestone::app
