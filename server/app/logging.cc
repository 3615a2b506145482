#include "server/app/logging.h"

#include <spdlog/async.h>
#include <spdlog/async_logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/error_body.h"
#include "server/http/handler.h"

namespace tablestone::app {
namespace {

constexpr const char* kNamedLoggers[] = {"app", "http", "api", "storage"};
constexpr size_t kAccessQueueLines = 8192;

// Appends `text` as a JSON string literal (with its quotes) through the
// project's one escaper; a log line may carry any bytes, so invalid UTF-8 is
// replaced and every line stays parseable whatever a request target holds.
void AppendJsonEscaped(std::string_view text, spdlog::memory_buf_t& dest) {
  std::string literal;
  literal.reserve(text.size() + 2);
  protocol::AppendJsonString(literal, text, protocol::InvalidUtf8::kReplace);
  dest.append(std::string_view(literal));
}

// %j: the message as a JSON string literal.
class JsonEscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    AppendJsonEscaped(std::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonEscapedMessage>(); }
};

// %F: an access line's payload as the object's remaining members. With
// --logFormat json the sessions format it (JsonAccessLine, through
// HttpOptions::access_line) as members already; anything else (a line from a
// listener without the hook) becomes "msg".
class JsonAccessFields : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string_view line(msg.payload.data(), msg.payload.size());
    if (line.starts_with("\"peer\":")) {
      dest.append(line);
      return;
    }
    dest.append(std::string_view("\"msg\":"));
    AppendJsonEscaped(line, dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonAccessFields>(); }
};

std::unique_ptr<spdlog::formatter> MakeFormatter(const std::string& format) {
  if (format == "json") {
    auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    f->add_flag<JsonEscapedMessage>('j').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","msg":%j})");
    return f;
  }
  return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%d %H:%M:%S.%e [%n] %l: %v");
}

// The access log's console format: with json, one member per field.
std::unique_ptr<spdlog::formatter> MakeAccessFormatter(const std::string& format) {
  if (format != "json") return MakeFormatter(format);
  auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  f->add_flag<JsonAccessFields>('F').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n",%F})");
  return f;
}

// What LogStartupFailure needs of the last SetupLogging.
std::string g_format = "text";
spdlog::sink_ptr g_debug_file;

}  // namespace

std::string JsonAccessLine(const http::AccessRecord& r) {
  std::string out;
  out.reserve(256 + r.target.size());
  // A string member, null when empty; every value goes through the
  // project's one JSON escaper (a target may hold any bytes).
  auto member = [&out](std::string_view name, std::string_view value) {
    if (!out.empty()) out += ',';
    out += '"';
    out += name;
    out += "\":";
    if (value.empty()) {
      out += "null";
    } else {
      protocol::AppendJsonString(out, value, protocol::InvalidUtf8::kReplace);
    }
  };
  member("peer", r.peer);
  member("method", r.method);
  member("path", r.target);
  out += ",\"status\":" + std::to_string(r.status);
  member("errorCode", r.error_code);
  char duration[64];
  const int64_t micros = r.micros < 0 ? 0 : r.micros;
  std::snprintf(duration, sizeof duration, ",\"durationMs\":%lld.%03lld", static_cast<long long>(micros / 1000),
                static_cast<long long>(micros % 1000));
  out += duration;
  out += ",\"bytes\":" + std::to_string(r.bytes);
  member("account", r.account);
  member("operation", r.operation);
  member("requestId", r.request_id);
  return out;
}

bool SetupLogging(const LoggingConfig& config, std::string* error) {
  auto console_level = spdlog::level::from_str(config.level);
  std::vector<spdlog::sink_ptr> sinks;
  spdlog::sink_ptr console;
  if (config.format == "json") {
    console = std::make_shared<spdlog::sinks::stdout_sink_mt>();
  } else {
    console = std::make_shared<spdlog::sinks::stdout_color_sink_mt>();
  }
  console->set_formatter(MakeFormatter(config.format));
  console->set_level(console_level);
  sinks.push_back(console);

  auto logger_level = console_level;
  spdlog::sink_ptr debug_file;
  if (!config.debug_file.empty()) {
    try {
      // spdlog reports a file it cannot open by throwing; caught here once.
      debug_file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(config.debug_file, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex& e) {
      *error = "cannot open debug log file '" + config.debug_file + "': " + e.what();
      return false;
    }
    debug_file->set_formatter(MakeFormatter("text"));
    debug_file->set_level(spdlog::level::debug);
    sinks.push_back(debug_file);
    logger_level = std::min(logger_level, spdlog::level::debug);
  }

  g_format = config.format;
  g_debug_file = debug_file;
  spdlog::drop_all();
  for (const char* name : kNamedLoggers) {
    auto logger = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
    logger->set_level(logger_level);
    logger->flush_on(debug_file ? spdlog::level::debug : spdlog::level::warn);
    spdlog::register_logger(logger);
  }
  spdlog::set_default_logger(spdlog::get("app"));

  if (config.access_log) {
    // The access log has its own console sink at info level: it is not
    // silenced by logging.level (use -s), and shares the debug file.
    spdlog::sink_ptr access_console;
    if (config.format == "json") {
      access_console = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    } else {
      access_console = std::make_shared<spdlog::sinks::stdout_color_sink_mt>();
    }
    access_console->set_formatter(MakeAccessFormatter(config.format));
    std::vector<spdlog::sink_ptr> access_sinks{access_console};
    if (debug_file) access_sinks.push_back(debug_file);
    spdlog::init_thread_pool(kAccessQueueLines, 1);
    // overrun_oldest: under overload an I/O thread drops old lines rather
    // than waiting for a slow terminal or pipe; requests matter more.
    auto access = std::make_shared<spdlog::async_logger>("access", access_sinks.begin(), access_sinks.end(),
                                                         spdlog::thread_pool(),
                                                         spdlog::async_overflow_policy::overrun_oldest);
    access->set_level(spdlog::level::info);
    spdlog::register_logger(access);
  }
  return true;
}

namespace {

// One line on stderr (and the debug file) in the console's format, outside
// the console loggers, whose stdout carries the log.
void LogToStderr(spdlog::level::level_enum level, const std::string& message) {
  spdlog::sink_ptr console;
  if (g_format == "json") {
    console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  } else {
    console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  }
  console->set_formatter(MakeFormatter(g_format));
  std::vector<spdlog::sink_ptr> sinks{console};
  if (g_debug_file) sinks.push_back(g_debug_file);
  spdlog::logger logger("app", sinks.begin(), sinks.end());
  logger.log(level, "{}", message);
  logger.flush();
}

}  // namespace

void LogStartupFailure(const std::string& message) { LogToStderr(spdlog::level::err, message); }

void LogStartupWarning(const std::string& message) { LogToStderr(spdlog::level::warn, message); }

void ShutdownLogging() {
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& logger) { logger->flush(); });
  spdlog::shutdown();
}

}  // namespace tablestone::app
