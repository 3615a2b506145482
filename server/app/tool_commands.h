// The data subcommands of the tablestone binary, parsed with CLI11:
//   tablestone export   --from CONN | --fromLocation DIR  [--table NAME]... --out FILE
//   tablestone import   --to CONN   | --toLocation DIR    --in FILE [--mode M] [--ifExists E]
//   tablestone copy, snapshot, reset, faults, trace, health (see --help-all)
// Each is a ToolCommand (tool_common.h): export, import and copy in
// data_tool_commands.h, snapshot, reset and health in admin_tool_commands.h,
// faults and trace in testing_tool_commands.h; tool_commands.cc holds the
// table of them, the parse and the usage errors.
// Any other command line (no subcommand name first) is the server's
// (flags.cc), unchanged, so `tablestone --tablePort 10002` still starts the
// server.
//
// Exit codes: 0 done, 1 the command failed (one line "tablestone <cmd>: why"
// on stderr), 2 a bad command line.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tablestone::app {

// "export, import, ...": the data subcommands' names, for messages.
std::string ToolCommandList();

// True when args[0] names a data subcommand.
bool IsToolCommand(const std::vector<std::string>& args);

// Parses and runs the subcommand in args (args[0] is its name). Usage and
// help go to `out`, errors and the final summary to `err`.
int RunToolCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace tablestone::app
