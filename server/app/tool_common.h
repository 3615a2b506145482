// What the `tablestone` tool commands (tool_commands.h) share: the
// ToolCommand interface each command implements, the help formatter, the
// error and usage lines, connection strings and admin routes, and
// SIGINT/SIGTERM while a command runs.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tools/connection_string.h"
#include "tools/table_store.h"

namespace tablestone::app {

// One command (`export`) or family of nested commands (`faults add|list|clear`).
// RunToolCommand creates its CLI11 subcommand (the name and summary are the
// command table's, tool_commands.cc), Add declares its options there, bound
// to the command's own fields, and Run runs it after a parse that selected
// it. Exit codes as tool_commands.h says (and 130 when interrupted).
class ToolCommand {
 public:
  virtual ~ToolCommand() = default;
  virtual void Add(CLI::App& command) = 0;
  virtual int Run(std::FILE* out, std::FILE* err) = 0;
};

// The help text of the options that take a connection string or a CA file.
inline constexpr const char* kConnHelp =
    " (or env:NAME / file:PATH to read it from an environment variable or a file, keeping the key off the "
    "command line)";
inline constexpr const char* kCaHelp =
    "PEM certificate(s) to trust for https:// besides the system's (a private CA, a self-signed server; repeat)";

// Help of at most 100 columns, as the server's --help (flags.cc): see
// tool_common.cc.
std::shared_ptr<CLI::Formatter> NewToolHelpFormatter();

// From here to ReleaseInterrupts, SIGINT/SIGTERM set the returned flag, so
// the running command stops where it can say what it left (export, import,
// copy); a second one ends the process at once.
const std::atomic<bool>* CatchInterrupts();
void ReleaseInterrupts();

// "tablestone COMMAND: why" on `err` (terminal-safe).
void PrintError(std::FILE* err, const char* command, const std::string& error);

// A bad command line: the message and where the options are, on `err`; 2.
int UsageError(std::FILE* err, const std::string& command, const std::string& message);

// The connection string an argument names (itself, or env:NAME / file:PATH),
// parsed.
bool ResolveConnection(const std::string& argument, tools::Connection* c, std::string* error);

// The connection an admin route is signed with: the connection string's
// account key, or the server's admin credential when TABLESTONE_ADMIN_KEY is
// set in the environment (never on the command line, docs/admin-api.md).
// `where` names the endpoint for the summary, `own_account` the string's account.
bool AdminConnection(const std::string& connection, tools::Connection* c, std::string* where, std::string* own_account,
                     std::string* error);

// --from and --caFile of a command that signs an admin route (snapshot,
// reset, faults, trace).
struct AdminEndpoint {
  std::string from;
  std::vector<std::string> ca_files;

  tools::RemoteOptions Options() const;

  // Sends one signed request and returns the server's answer; false after
  // printing "tablestone COMMAND: why".
  bool Call(std::FILE* err, const std::string& command, const std::string& method, const std::string& op,
            const std::string& query, const std::string& request, std::string* answer, std::string* where) const;
};

std::string Lower(std::string s);

// "1 table", "2 tables".
std::string Plural(unsigned long long n, const char* one, const char* many);

}  // namespace tablestone::app
