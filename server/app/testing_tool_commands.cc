#include "server/app/testing_tool_commands.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/auth/admin_signature.h"
#include "server/app/fault_commands.h"
#include "tools/cli_text.h"

namespace tablestone::app {
namespace {

using json = nlohmann::json;

// --from and --caFile, as every `faults` and `trace` command takes them.
void AddSigner(CLI::App& command, AdminEndpoint* admin) {
  command
      .add_option("--from", admin->from,
                  "Connection string of a server started with --adminApi (its account key signs; "
                  "TABLESTONE_ADMIN_KEY in the environment signs as the admin instead)")
      ->required();
  command.add_option("--caFile", admin->ca_files, kCaHelp)->check(CLI::ExistingFile);
}

// "tablestone: LINE" on `err`: what a command did.
void PrintDone(std::FILE* err, const std::string& line) {
  std::fprintf(err, "tablestone: %s\n", tools::TerminalSafe(line).c_str());
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

class FaultsCommand final : public ToolCommand {
 public:
  void Add(CLI::App& command) override {
    command.require_subcommand(1);
    add_ = command.add_subcommand(
        "add", "Add rules: a rule, an array of rules, or the --faults file form ({\"seed\":N,\"rules\":[...]})");
    AddSigner(*add_, &admin_);
    auto* rule = add_->add_option("--rule", rule_, "The rules as JSON text, or @PATH to read them from a file");
    auto* file = add_->add_option("--file", file_, "A file holding the rules as JSON (at most 1 MiB)");
    rule->excludes(file);
    AddFlagsForm(rule, file);
    list_ = command.add_subcommand(
        "list", "Print the rules with their matched and injected counts, and realistic mode, on stdout");
    AddSigner(*list_, &admin_);
    list_->add_flag("--json", json_, "Print the server's JSON answer instead (for scripts)");
    clear_ = command.add_subcommand("clear", "Remove every rule (realistic mode stays), or one");
    AddSigner(*clear_, &admin_);
    clear_->add_option("--id", id_, "Remove only this rule (an id from add or list)");
  }

  int Run(std::FILE* out, std::FILE* err) override {
    std::string method = "GET", query, request;
    if (add_->parsed()) {
      if (const int code = AddRequest(err, &request); code != 0) return code;
      method = "POST";
    } else if (clear_->parsed()) {
      method = "DELETE";
      if (!id_.empty()) query = "id=" + tools::UrlEncode(id_);
    }
    const CLI::App* command = add_->parsed() ? add_ : list_->parsed() ? list_ : clear_;
    std::string answer, where;
    if (!admin_.Call(err, "faults " + command->get_name(), method, "faults", query, request, &answer, &where)) {
      return 1;
    }
    const auto j = json::parse(answer, nullptr, /*allow_exceptions=*/false);
    if (add_->parsed()) {
      std::string ids;
      size_t n = 0;
      if (j.is_object() && j.contains("ids") && j["ids"].is_array()) {
        for (const auto& id : j["ids"]) {
          if (!id.is_string()) continue;
          ids += (ids.empty() ? "" : ", ") + id.get<std::string>();
          ++n;
        }
      }
      PrintDone(err, "added " + Plural(n, "fault rule", "fault rules") + (ids.empty() ? "" : " (" + ids + ")") +
                         " on " + where);
    } else if (list_->parsed()) {
      if (json_ || j.is_discarded()) {
        std::fprintf(out, "%s\n", j.is_discarded() ? answer.c_str() : j.dump(2).c_str());
      } else {
        std::istringstream lines(DescribeFaultListing(j));
        for (std::string text; std::getline(lines, text);) std::fprintf(out, "%s\n", tools::TerminalSafe(text).c_str());
      }
      size_t n = j.is_object() && j.contains("rules") && j["rules"].is_array() ? j["rules"].size() : 0;
      PrintDone(err, Plural(n, "fault rule", "fault rules") + " on " + where);
    } else {
      PrintDone(err,
                id_.empty() ? "cleared every fault rule on " + where : "removed fault rule " + id_ + " on " + where);
    }
    return 0;
  }

 private:
  // The common case without JSON: one rule from flags, scoped to the
  // connection string's account (all an account key may add).
  void AddFlagsForm(CLI::Option* rule, CLI::Option* file) {
    const std::vector<CLI::Option*> flags = {
        add_->add_option("--operation", flags_.operations,
                         "Flags form: an operation name to match (repeat; e.g. InsertEntity, QueryEntities)"),
        add_->add_option("--table", flags_.table, "Flags form: the table to match"),
        add_->add_option("--status", flags_.status, "Flags form: answer with this status (503 or 500)"),
        add_->add_option("--errorCode", flags_.error_code,
                         "Flags form: answer with this error code (ServerBusy, OperationTimedOut, InternalError)"),
        add_->add_option("--action", flags_.action,
                         "Flags form: the rule's action (default serverBusy; timeoutAfter, closeAfter, "
                         "resetMidResponse, latencyBefore, ...: docs/testing-with-faults.md)"),
        add_->add_option("--count", flags_.count, "Flags form: inject at most N times (maxCount)"),
        add_->add_option("--probability", flags_.probability, "Flags form: fire with this probability")
            ->check(CLI::Range(0.0, 1.0))
            ->type_name("P"),
        add_->add_option("--everyNth", flags_.every_nth, "Flags form: fire on every Nth matching request"),
        add_->add_option("--latencyMs", flags_.latency_ms, "Flags form: the delay of a latency action"),
        add_->add_option("--id", flags_.id, "Flags form: the rule's id (default r1, r2, ...)")};
    for (CLI::Option* o : flags) {
      o->excludes(rule);
      o->excludes(file);
    }
  }

  // The body of `faults add`: the rules of --rule, --file or the flags form,
  // checked with the server's own parser, so a typo is refused (with the
  // list of names) before anything is sent. 0 when *request is ready, else
  // the exit code after saying why on `err`.
  int AddRequest(std::FILE* err, std::string* request) {
    bool from_flags = false;
    for (const CLI::Option* o : add_->get_options()) {
      const std::string n = o->get_name();
      from_flags = from_flags || (o->count() > 0 && n != "--from" && n != "--caFile" && n != "--rule" && n != "--file");
    }
    if (rule_.rfind("@", 0) == 0) {  // --rule @PATH is --file PATH
      file_ = rule_.substr(1);
      rule_.clear();
    }
    if (!from_flags && rule_.empty() == file_.empty()) {
      return UsageError(err, "faults add",
                        "give the rules with --rule JSON, --rule @PATH or --file PATH, or one rule in flags "
                        "(--operation, --table, --status, --errorCode, --action, --count, ...)");
    }
    std::string error;
    json parsed;
    if (!file_.empty() && !ReadRuleFile(file_, request, &error)) {
      PrintError(err, "faults add", error);
      return 1;
    }
    if (from_flags) {
      // Scoped to the signer's account: the only rule an account key may
      // add, and the account's own traffic (docs/admin-api.md).
      tools::Connection signer;
      std::string ignored_where, own_account;
      if (!AdminConnection(admin_.from, &signer, &ignored_where, &own_account, &error)) {
        PrintError(err, "faults add", error);
        return 1;
      }
      if (signer.account != protocol::auth::kAdminKeySigner) flags_.account = own_account;
      if (!FaultRuleFromFlags(flags_, &parsed, &error)) return UsageError(err, "faults add", error);
      *request = parsed.dump();
    } else {
      if (file_.empty()) *request = rule_;
      parsed = json::parse(*request, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded() || !(parsed.is_object() || parsed.is_array())) {
        PrintError(err, "faults add",
                   (file_.empty() ? std::string("--rule") : "'" + file_ + "'") +
                       " is not a JSON rule, array of rules or rule file (docs/testing-with-faults.md)");
        return 1;
      }
    }
    if (!CheckFaultRules(parsed, &error)) {
      PrintError(err, "faults add", "the rule is refused before sending: " + error);
      return 1;
    }
    return 0;
  }

  AdminEndpoint admin_;
  CLI::App* add_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* clear_ = nullptr;
  std::string rule_, file_;  // add: --rule, --file
  FaultFlags flags_;         // add: the flags form
  bool json_ = false;        // list --json
  std::string id_;           // clear --id
};

class TraceCommand final : public ToolCommand {
 public:
  void Add(CLI::App& command) override {
    command.require_subcommand(1);
    on_ = command.add_subcommand("on", "Start tracing into a file of the server's --traceDir");
    AddSigner(*on_, &admin_);
    on_->add_option("--file", file_, "A plain file name in the server's --traceDir (appended to)")->required();
    on_->add_flag("--bodies", bodies_, "Also trace headers and bodies (keys and signatures redacted)");
    off_ = command.add_subcommand("off", "Stop tracing (the file is complete when this returns)");
    AddSigner(*off_, &admin_);
    status_ = command.add_subcommand("status", "Say whether the server traces, and into which file");
    AddSigner(*status_, &admin_);
  }

  int Run(std::FILE*, std::FILE* err) override {
    std::string method = "GET", request;
    if (on_->parsed()) {
      method = "POST";
      request = json{{"enabled", true}, {"file", file_}, {"bodies", bodies_}}.dump();
    } else if (off_->parsed()) {
      method = "POST";
      request = R"({"enabled":false})";
    }
    const CLI::App* command = on_->parsed() ? on_ : off_->parsed() ? off_ : status_;
    std::string answer, where;
    if (!admin_.Call(err, "trace " + command->get_name(), method, "trace", "", request, &answer, &where)) return 1;
    const auto j = json::parse(answer, nullptr, /*allow_exceptions=*/false);
    const bool enabled = j.is_object() && j.value("enabled", false);
    const std::string file =
        j.is_object() && j.contains("file") && j["file"].is_string() ? j["file"].get<std::string>() : "";
    const uint64_t written =
        j.is_object() && j.contains("written") && j["written"].is_number_unsigned() ? j["written"].get<uint64_t>() : 0;
    const uint64_t dropped =
        j.is_object() && j.contains("dropped") && j["dropped"].is_number_unsigned() ? j["dropped"].get<uint64_t>() : 0;
    std::string line =
        enabled ? "tracing requests on " + where + " into " + file + (j.value("bodies", false) ? " (with bodies)" : "")
                : "not tracing on " + where;
    line += " (" + Plural(written, "line", "lines") + " written, " + std::to_string(dropped) + " dropped)";
    PrintDone(err, line);
    return 0;
  }

 private:
  AdminEndpoint admin_;
  CLI::App* on_ = nullptr;
  CLI::App* off_ = nullptr;
  CLI::App* status_ = nullptr;
  std::string file_;     // on --file
  bool bodies_ = false;  // on --bodies
};

}  // namespace

std::unique_ptr<ToolCommand> NewFaultsCommand() { return std::make_unique<FaultsCommand>(); }
std::unique_ptr<ToolCommand> NewTraceCommand() { return std::make_unique<TraceCommand>(); }

}  // namespace tablestone::app
