#include "server/api/trace.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include <unistd.h>

#include "protocol/error_body.h"
#include "protocol/redact.h"

namespace tablestone::api {
namespace {

// Bodies, headers and targets are traced as received: invalid UTF-8 becomes
// U+FFFD so every line is valid JSON.
constexpr auto kAnyBytes = protocol::InvalidUtf8::kReplace;

void AppendTracedBody(std::string_view prefix, std::string_view body, std::string* out) {
  const bool truncated = body.size() > kMaxTracedBody;
  out->append(",\"");
  out->append(prefix);
  out->append("Body\":");
  protocol::AppendJsonString(*out, protocol::RedactSecrets(truncated ? body.substr(0, kMaxTracedBody) : body),
                             kAnyBytes);
  out->append(",\"");
  out->append(prefix);
  out->append(truncated ? "BodyTruncated\":true" : "BodyTruncated\":false");
}

template <typename Fields>
void AppendTracedHeaders(std::string_view name, const Fields& fields, std::string* out) {
  out->append(",\"");
  out->append(name);
  out->append("\":{");
  bool first = true;
  for (const auto& field : fields) {
    const std::string_view n(field.name_string().data(), field.name_string().size());
    const std::string_view v(field.value().data(), field.value().size());
    if (!first) out->push_back(',');
    first = false;
    protocol::AppendJsonString(*out, n, kAnyBytes);
    out->push_back(':');
    protocol::AppendJsonString(*out, protocol::RedactHeaderValue(n, v), kAnyBytes);
  }
  out->push_back('}');
}

void AppendKey(std::string_view name, std::string* out) {
  out->append(",\"");
  out->append(name);
  out->append("\":");
}

void AppendOptionalString(std::string_view name, const std::optional<std::string>& value, std::string* out) {
  AppendKey(name, out);
  if (value) {
    protocol::AppendJsonString(*out, *value, kAnyBytes);
  } else {
    out->append("null");
  }
}

void AppendNumber(uint64_t value, std::string* out) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out->append(buf, static_cast<size_t>(end - buf));
}

void AppendOptionalNumber(std::string_view name, std::optional<uint64_t> value, std::string* out) {
  AppendKey(name, out);
  if (value) {
    AppendNumber(*value, out);
  } else {
    out->append("null");
  }
}

uint64_t Micros(std::chrono::nanoseconds d) {
  return d.count() < 0 ? 0 : static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

// Appends `value` as `width` decimal digits (zero-padded).
void AppendDigits(unsigned value, int width, std::string* out) {
  char buf[8];
  for (int i = width - 1; i >= 0; --i) {
    buf[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out->append(buf, static_cast<size_t>(width));
}

// RFC 3339 UTC with milliseconds, e.g. 2026-11-26T12:34:56.789Z.
void AppendRfc3339Millis(std::chrono::system_clock::time_point t, std::string* out) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  AppendDigits(static_cast<unsigned>(tm.tm_year + 1900), 4, out);
  out->push_back('-');
  AppendDigits(static_cast<unsigned>(tm.tm_mon + 1), 2, out);
  out->push_back('-');
  AppendDigits(static_cast<unsigned>(tm.tm_mday), 2, out);
  out->push_back('T');
  AppendDigits(static_cast<unsigned>(tm.tm_hour), 2, out);
  out->push_back(':');
  AppendDigits(static_cast<unsigned>(tm.tm_min), 2, out);
  out->push_back(':');
  AppendDigits(static_cast<unsigned>(tm.tm_sec), 2, out);
  out->push_back('.');
  AppendDigits(static_cast<unsigned>(ms % 1000), 3, out);
  out->push_back('Z');
}

}  // namespace

std::string FormatTraceLine(const RequestTrace* trace, const http::Request& request, const http::Response& response,
                            std::string_view request_id, std::chrono::steady_clock::time_point start,
                            std::chrono::steady_clock::time_point now, bool bodies) {
  static const RequestTrace kNothing;
  const RequestTrace& t = trace != nullptr ? *trace : kNothing;
  std::string out;
  out.reserve(bodies ? 1024 + request.body().size() + response.body().size() : 512);
  out.append("{\"time\":\"");
  AppendRfc3339Millis(std::chrono::system_clock::now(), &out);
  out.append("\",\"requestId\":");
  protocol::AppendJsonString(out, request_id, kAnyBytes);
  AppendKey("client", &out);
  if (t.client.empty()) {
    out.append("null");
  } else {
    protocol::AppendJsonString(out, t.client, kAnyBytes);
  }
  AppendKey("method", &out);
  protocol::AppendJsonString(out, std::string_view(request.method_string().data(), request.method_string().size()),
                             kAnyBytes);
  AppendKey("url", &out);
  const std::string_view target(request.target().data(), request.target().size());
  protocol::AppendJsonString(out, protocol::RedactSecrets(target), kAnyBytes);
  AppendOptionalString("account", t.account, &out);
  AppendKey("operation", &out);
  if (t.operation) {
    protocol::AppendJsonString(out, *t.operation, kAnyBytes);
  } else {
    out.append("null");
  }
  AppendOptionalString("table", t.table, &out);
  AppendOptionalString("partitionKey", t.partition_key, &out);
  AppendOptionalString("rowKey", t.row_key, &out);
  AppendKey("status", &out);
  AppendNumber(response.result_int(), &out);
  const auto error = response.find("x-ms-error-code");
  AppendKey("errorCode", &out);
  if (error == response.end()) {
    out.append("null");
  } else {
    protocol::AppendJsonString(out, std::string_view(error->value().data(), error->value().size()), kAnyBytes);
  }
  const bool dispatched = t.received != std::chrono::steady_clock::time_point();
  const auto total = now - start;
  const auto parse = dispatched ? t.received - start : std::chrono::nanoseconds(0);
  const auto serialise = t.handler - t.storage;
  const auto wait = total - parse - t.auth - t.handler;
  const struct {
    std::string_view name;
    std::chrono::nanoseconds value;
  } latencies[] = {{"totalUs", total},       {"parseUs", parse},         {"authUs", t.auth},
                   {"storageUs", t.storage}, {"serialiseUs", serialise}, {"waitUs", wait}};
  for (const auto& l : latencies) {
    AppendKey(l.name, &out);
    AppendNumber(Micros(l.value), &out);
  }
  AppendOptionalNumber("rowsScanned", t.rows_scanned, &out);
  AppendOptionalNumber("rowsReturned", t.rows_returned, &out);
  if (bodies) {
    AppendTracedHeaders("requestHeaders", request, &out);
    AppendTracedBody("request", request.body(), &out);
    AppendTracedHeaders("responseHeaders", response, &out);
    AppendTracedBody("response", response.body(), &out);
  }
  out.push_back('}');
  return out;
}

bool TraceWriter::Start(const std::string& path, bool bodies, std::string* error) {
  std::lock_guard control(control_mu_);
  StopLocked();
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    *error = "cannot open trace file '" + path + "': " + std::strerror(errno);
    return false;
  }
  StartFile(file, path, bodies);
  return true;
}

bool TraceWriter::StartOpened(int fd, const std::string& path, bool bodies, std::string* error) {
  std::lock_guard control(control_mu_);
  StopLocked();
  std::FILE* file = ::fdopen(fd, "a");
  if (file == nullptr) {
    *error = "cannot open trace file '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  StartFile(file, path, bodies);
  return true;
}

void TraceWriter::StartFile(std::FILE* file, const std::string& path, bool bodies) {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
    path_ = path;
    file_ = file;
  }
  bodies_.store(bodies, std::memory_order_relaxed);
  thread_ = std::thread([this] { Drain(); });
  enabled_.store(true, std::memory_order_relaxed);
}

void TraceWriter::Stop() {
  std::lock_guard control(control_mu_);
  StopLocked();
}

void TraceWriter::StopLocked() {
  enabled_.store(false, std::memory_order_relaxed);
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

std::string TraceWriter::path() const {
  std::lock_guard lock(mu_);
  return path_;
}

void TraceWriter::Submit(std::string line) {
  {
    std::lock_guard lock(mu_);
    if (file_ == nullptr || stopping_) return;
    if (queue_.size() >= queue_limit_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queue_.push_back(std::move(line));
    // The writer wakes by itself every kWriteInterval; a wake-up per line
    // would cost a futex call per request. Only a queue filling up calls it.
    if (queue_.size() != queue_limit_ / 2) return;
  }
  wake_.notify_one();
}

void TraceWriter::Drain() {
  std::deque<std::string> batch;
  std::unique_lock lock(mu_);
  std::FILE* file = file_;
  for (;;) {
    wake_.wait_for(lock, kWriteInterval,
                   [this] { return stopping_ || (queue_limit_ > 1 && queue_.size() >= queue_limit_ / 2); });
    batch.swap(queue_);
    const bool last = stopping_;
    lock.unlock();
    if (!batch.empty()) {
      for (std::string& line : batch) {
        line.push_back('\n');
        std::fwrite(line.data(), 1, line.size(), file);
      }
      // Flushed per batch, so `tail -f` sees a line within kWriteInterval.
      std::fflush(file);
      written_.fetch_add(batch.size(), std::memory_order_relaxed);
      batch.clear();
    }
    lock.lock();
    if (last && queue_.empty()) break;
  }
  std::fclose(file);
  file_ = nullptr;
  path_.clear();
}

}  // namespace tablestone::api
