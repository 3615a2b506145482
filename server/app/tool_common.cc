#include "server/app/tool_common.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <sstream>

#include "protocol/auth/admin_signature.h"
#include "protocol/base64.h"
#include "tools/cli_text.h"

namespace tablestone::app {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) {
  g_interrupted.store(true);
  // A second Ctrl-C ends the process at once.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
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

}  // namespace

std::shared_ptr<CLI::Formatter> NewToolHelpFormatter() { return std::make_shared<ToolHelpFormatter>(); }

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

void PrintError(std::FILE* err, const char* command, const std::string& error) {
  std::fprintf(err, "tablestone %s: %s\n", command, tools::TerminalSafe(error).c_str());
}

int UsageError(std::FILE* err, const std::string& command, const std::string& message) {
  const std::string name = command.empty() ? std::string() : " " + command;
  std::fprintf(err, "tablestone%s: %s\nRun 'tablestone%s --help' for the options.\n", name.c_str(),
               tools::TerminalSafe(message).c_str(), name.c_str());
  return 2;
}

bool ResolveConnection(const std::string& argument, tools::Connection* c, std::string* error) {
  std::string text;
  return tools::ResolveConnectionArgument(argument, &text, error) && tools::ParseConnectionString(text, c, error);
}

bool AdminConnection(const std::string& connection, tools::Connection* c, std::string* where, std::string* own_account,
                     std::string* error) {
  if (!ResolveConnection(connection, c, error)) return false;
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

tools::RemoteOptions AdminEndpoint::Options() const {
  tools::RemoteOptions options;
  options.ca_files = ca_files;
  return options;
}

bool AdminEndpoint::Call(std::FILE* err, const std::string& command, const std::string& method, const std::string& op,
                         const std::string& query, const std::string& request, std::string* answer,
                         std::string* where) const {
  tools::Connection c;
  std::string own_account, error;
  if (!AdminConnection(from, &c, where, &own_account, &error) ||
      !tools::CallAdminRoute(c, Options(), method, op, query, request, answer, &error)) {
    PrintError(err, command.c_str(), error);
    return false;
  }
  return true;
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string Plural(unsigned long long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace tablestone::app
