#include "server/app/tool_commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <sstream>

#include "server/app/admin_tool_commands.h"
#include "server/app/data_tool_commands.h"
#include "server/app/testing_tool_commands.h"
#include "server/app/tool_common.h"

namespace tablestone::app {
namespace {

// Every command, in the order of --help-all. A new command is a ToolCommand
// (tool_common.h) in the file of its family, and a row here.
struct CommandRow {
  const char* name;
  const char* summary;
  std::unique_ptr<ToolCommand> (*make)();
};
constexpr CommandRow kCommands[] = {
    {"export", "Write tables to an export file (docs/export-format.md)", NewExportCommand},
    {"import", "Load an export file into an endpoint or a data directory", NewImportCommand},
    {"copy", "Stream tables from one endpoint or data directory to another (resumable with --checkpoint)",
     NewCopyCommand},
    {"snapshot", "Instant consistent snapshot of a data directory (RocksDB checkpoint, hard links)",
     NewSnapshotCommand},
    {"reset", "Delete every table of an account on a running server (--adminApi)", NewResetCommand},
    {"faults", "Add, list or clear fault rules on a running server (docs/testing-with-faults.md)", NewFaultsCommand},
    {"trace", "Turn the request trace of a running server on or off (docs/observability.md, Request trace)",
     NewTraceCommand},
    {"health", "Ask a running server whether it serves (GET /_tablestone/health, no credential); exit 0 if so",
     NewHealthCommand},
};

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

// A command line CLI11 refused, or --help: the help on `out` (0), else one
// usage error on `err` (2).
int ReportParseError(CLI::App& app, const CLI::ParseError& e, std::FILE* out, std::FILE* err) {
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

}  // namespace

std::string ToolCommandList() {
  std::string out;
  for (const CommandRow& c : kCommands) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

bool IsToolCommand(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  for (const CommandRow& c : kCommands) {
    if (args[0] == c.name) return true;
  }
  return false;
}

int RunToolCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  CLI::App app{"tablestone data tools", "tablestone"};
  app.require_subcommand(1);
  // Before the commands: each subcommand copies its parent's help flags and
  // formatter when it is created.
  app.set_help_all_flag("--help-all", "Help of every subcommand");
  app.formatter(NewToolHelpFormatter());
  std::vector<std::unique_ptr<ToolCommand>> commands;
  std::vector<CLI::App*> subcommands;
  for (const CommandRow& row : kCommands) {
    commands.push_back(row.make());
    subcommands.push_back(app.add_subcommand(row.name, row.summary));
    commands.back()->Add(*subcommands.back());
  }

  std::vector<std::string> argv_storage;
  argv_storage.push_back("tablestone");
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : argv_storage) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e, out, err);
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    if (subcommands[i]->parsed()) return commands[i]->Run(out, err);
  }
  return 2;
}

}  // namespace tablestone::app
