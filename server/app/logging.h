// Logging setup: the named spdlog loggers every layer that logs looks up
// ("app", "http", "api", "storage", "access"), their level, format and sinks.
//
//   console  stdout, level = logging.level, text or JSON lines;
//   debug    logging.debugFile (if set): every logger at debug level;
//   access   its own asynchronous logger (one background thread, queue of
//            8192 lines, oldest dropped when full) so an I/O thread only
//            formats into a small inline buffer and never waits on stdout.
//            Its level is info regardless of logging.level; -s turns it off.
//
// Thread safety: call SetupLogging once at startup before any server thread
// starts, ShutdownLogging once after they are joined.
#pragma once

#include <string>

#include "server/app/config.h"

namespace tablestone::http {
struct AccessRecord;  // server/http/handler.h
}

namespace tablestone::app {

// Creates/replaces the named loggers. On failure (e.g. the debug file cannot
// be opened) returns false and sets `error`.
bool SetupLogging(const LoggingConfig& config, std::string* error);

// Writes the error that stopped the server from starting (port in use, data
// directory locked, bad certificate) to stderr, in the console's format, and
// to the debug file if one is set: stdout carries the log, stderr what failed.
// Call after SetupLogging succeeded.
void LogStartupFailure(const std::string& message);

// The same for a warning the operator must see at startup even when stdout
// goes nowhere (a data directory that holds Azurite's data, not ours).
void LogStartupWarning(const std::string& message);

// The access line of --logFormat json (HttpOptions::access_line): the JSON
// members after "time", "level" and "logger", in this order: "peer",
// "method", "path" (the target as LogSafeTarget shows it: no SAS signature),
// "status", "errorCode", "durationMs" (headers read to answer written, in
// milliseconds with microsecond digits), "bytes", "account", "operation",
// "requestId"; a string that is not known is null. docs/observability.md,
// "Logging"; LoggingTest.JsonAccessLineHasEveryField.
std::string JsonAccessLine(const http::AccessRecord& record);

// Flushes and drops every logger (drains the access log queue).
void ShutdownLogging();

}  // namespace tablestone::app
