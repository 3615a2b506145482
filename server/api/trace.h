// The request trace (docs/observability.md, "Request trace"): one JSON line
// per answered request, written to a file by one background thread.
//
// TraceWriter owns the file and the thread. The request path only formats its
// line and hands it over (Submit): a push into a bounded queue under a mutex
// held for the push alone, never a wait for the disk. The writer thread wakes
// every kWriteInterval (or when the queue is half full, or on Stop) and writes
// and flushes what is queued, so lines reach the file within ~10 ms. When the queue is full
// the line is dropped and counted (dropped(), exported as
// tablestone_trace_dropped_total), so a slow disk slows nothing but the trace.
//
// RequestTrace is what one request gathers for its line while it runs; the
// dispatcher creates it only when tracing is on, and fills the storage part
// through the engine decorator it puts around that request's handler
// (TracingEngine, trace_engine.h). With tracing off a request pays one relaxed
// load and one branch, and its handler runs against the engine itself.
//
// Redaction: the trace never holds a secret. The URL, every header value and
// both bodies go through protocol::RedactSecrets / RedactHeaderValue
// (protocol/redact.h: SAS signatures in any encoding, credential headers,
// also inside $batch parts, the MAC an error echoes); bodies are capped at
// kMaxTracedBody bytes and marked truncated.
//
// Thread safety: every member of TraceWriter may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "server/http/handler.h"

namespace tablestone::api {

// What one request gathers for its trace line while it runs. The dispatcher
// fills the first part, TracingEngine the second; what nobody set is null in
// the line.
struct RequestTrace {
  std::chrono::steady_clock::time_point received;  // the dispatcher got the whole request
  std::chrono::nanoseconds auth{0};                // routing, x-ms-version and signature checks
  std::chrono::nanoseconds handler{0};             // the operation's handler, start to end
  std::string client;                              // peer address
  std::optional<std::string> account;
  std::optional<std::string_view> operation;  // protocol::OperationName
  std::optional<std::string> table;

  std::chrono::nanoseconds storage{0};    // inside storage::Engine calls (part of `handler`)
  std::optional<uint64_t> rows_scanned;   // Query Entities: rows the scan read
  std::optional<uint64_t> rows_returned;  // ... and rows it answered
  std::optional<std::string> partition_key;
  std::optional<std::string> row_key;
};

inline constexpr size_t kMaxTracedBody = 64 * 1024;
inline constexpr std::chrono::milliseconds kWriteInterval{10};


// Appends `s` as a JSON string literal: quotes, backslashes and control
// characters escaped; invalid UTF-8 replaced by U+FFFD, so any byte string
// (a body) yields valid JSON.
void AppendJsonString(std::string_view s, std::string* out);

// The trace line of one answered request (no newline): `trace` may be null
// (a request refused before the dispatcher knew anything), `start` is when
// its headers arrived, `now` when its answer is ready. With `bodies`, the
// request's and response's headers (Authorization redacted, `sig` values
// redacted everywhere) and bodies (first kMaxTracedBody bytes, marked
// truncated). Fields: docs/observability.md, "Request trace".
std::string FormatTraceLine(const RequestTrace* trace, const http::Request& request, const http::Response& response,
                            std::string_view request_id, std::chrono::steady_clock::time_point start,
                            std::chrono::steady_clock::time_point now, bool bodies);

class TraceWriter {
 public:
  // `queue_limit`: lines waiting for the writer thread before new ones drop.
  explicit TraceWriter(size_t queue_limit = 16384) : queue_limit_(queue_limit) {}
  ~TraceWriter() { Stop(); }
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Opens `path` for appending (created if missing) and starts tracing into
  // it, with headers and bodies when `bodies`. Tracing already on is stopped
  // first (its queued lines written). False with `*error` when the file
  // cannot be opened; tracing is then off.
  bool Start(const std::string& path, bool bodies, std::string* error);
  // The same with a file the caller opened for appending (admin_files.h
  // OpenTraceFile); takes `fd` over, closing it on failure. `path` is what
  // path() reports.
  bool StartOpened(int fd, const std::string& path, bool bodies, std::string* error);
  // Writes what is queued, closes the file; a no-op when off.
  void Stop();

  // The one check the request path makes.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  bool bodies() const { return bodies_.load(std::memory_order_relaxed); }
  std::string path() const;

  // Queues one line (without its newline). Never blocks on the file: a full
  // queue, or tracing off, drops the line (counted in dropped() when full).
  void Submit(std::string line);

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }

 private:
  void Drain();  // the writer thread
  // Stops the writer thread, if any (control_mu_ held).
  void StopLocked();
  // Starts the writer thread on `file` (control_mu_ held, stopped).
  void StartFile(std::FILE* file, const std::string& path, bool bodies);

  const size_t queue_limit_;
  std::atomic<bool> enabled_{false};
  std::atomic<bool> bodies_{false};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> written_{0};

  std::mutex control_mu_;  // serialises Start/Stop
  mutable std::mutex mu_;  // guards the members below
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  bool stopping_ = false;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::thread thread_;
};

}  // namespace tablestone::api
