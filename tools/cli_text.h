// What the data tools read from and print to the user's terminal, beyond
// their command-line parsing (server/app/tool_commands.cc): connection
// strings kept off the command line, and text from files or servers made
// safe to print.
#pragma once

#include <string>
#include <string_view>

namespace tablestone::tools {

// The connection string an argument names. "env:NAME" reads the environment
// variable NAME and "file:PATH" the file PATH (at most 64 KiB; surrounding
// whitespace, e.g. the final newline, dropped), so that an account key need
// not appear in the command line (/proc/PID/cmdline, shell history). Any
// other argument is the connection string itself. False with a reason that
// never quotes the value read.
bool ResolveConnectionArgument(std::string_view argument, std::string* connection, std::string* error);

// `text` with every control character (C0, DEL, C1) and every byte that is
// not part of valid UTF-8 written as an escape (\n, \t, \xNN, \u0085), so a
// table name or a server's message can print neither terminal escape
// sequences (ESC [ ...) nor line breaks that forge output.
std::string TerminalSafe(std::string_view text);

}  // namespace tablestone::tools
