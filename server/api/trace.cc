#include "server/api/trace.h"

#include <cerrno>
#include <ctime>
#include <cstring>
#include <utility>
#include <vector>

#include "storage/model/ascii.h"

namespace tablestone::api {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
    return 0;
  }
  return n;
}

bool IsSigParamStart(std::string_view text, size_t i) {
  if (i != 0 && text[i - 1] != '?' && text[i - 1] != '&') return false;
  if (i + 4 > text.size() || text[i + 3] != '=') return false;
  return (text[i] | 0x20) == 's' && (text[i + 1] | 0x20) == 'i' && (text[i + 2] | 0x20) == 'g';
}

}  // namespace

std::string RedactSig(std::string_view text) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 4 <= text.size(); ++i) {
    if (!IsSigParamStart(text, i)) continue;
    const size_t value = i + 4;
    size_t end = text.find('&', value);
    if (end == std::string_view::npos) end = text.size();
    out.append(text.substr(copied, value - copied));
    out.append(kRedacted);
    copied = end;
    i = end;
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    if (s[i] == '"' || s[i] == '\\') {
      out->push_back('\\');
      out->push_back(s[i]);
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 0xF]);
    } else {
      out->push_back(s[i]);
    }
    ++i;
  }
  out->push_back('"');
}

namespace {

void AppendTracedBody(std::string_view prefix, std::string_view body, std::string* out) {
  const bool truncated = body.size() > kMaxTracedBody;
  out->append(",\"");
  out->append(prefix);
  out->append("Body\":");
  AppendJsonString(RedactSig(truncated ? body.substr(0, kMaxTracedBody) : body), out);
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
    AppendJsonString(n, out);
    out->push_back(':');
    AppendJsonString(model::EqualsIgnoreCase(n, "Authorization") ? std::string(kRedacted) : RedactSig(v), out);
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
    AppendJsonString(*value, out);
  } else {
    out->append("null");
  }
}

void AppendOptionalNumber(std::string_view name, std::optional<uint64_t> value, std::string* out) {
  AppendKey(name, out);
  out->append(value ? std::to_string(*value) : std::string("null"));
}

int64_t Micros(std::chrono::nanoseconds d) {
  return d.count() < 0 ? 0 : std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// RFC 3339 UTC with milliseconds, e.g. 2026-11-26T12:34:56.789Z.
std::string Rfc3339Millis(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
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
  out.append(Rfc3339Millis(std::chrono::system_clock::now()));
  out.append("\",\"requestId\":");
  AppendJsonString(request_id, &out);
  AppendKey("client", &out);
  if (t.client.empty()) {
    out.append("null");
  } else {
    AppendJsonString(t.client, &out);
  }
  AppendKey("method", &out);
  AppendJsonString(std::string_view(request.method_string().data(), request.method_string().size()), &out);
  AppendKey("url", &out);
  AppendJsonString(RedactSig(std::string_view(request.target().data(), request.target().size())), &out);
  AppendOptionalString("account", t.account, &out);
  AppendKey("operation", &out);
  if (t.operation) {
    AppendJsonString(*t.operation, &out);
  } else {
    out.append("null");
  }
  AppendOptionalString("table", t.table, &out);
  AppendOptionalString("partitionKey", t.partition_key, &out);
  AppendOptionalString("rowKey", t.row_key, &out);
  AppendKey("status", &out);
  out.append(std::to_string(response.result_int()));
  const auto error = response.find("x-ms-error-code");
  AppendKey("errorCode", &out);
  if (error == response.end()) {
    out.append("null");
  } else {
    AppendJsonString(std::string_view(error->value().data(), error->value().size()), &out);
  }
  const bool dispatched = t.received != std::chrono::steady_clock::time_point();
  const auto total = now - start;
  const auto parse = dispatched ? t.received - start : std::chrono::nanoseconds(0);
  const auto serialise = t.handler - t.storage;
  const auto wait = total - parse - t.auth - t.handler;
  const struct {
    std::string_view name;
    std::chrono::nanoseconds value;
  } latencies[] = {{"totalUs", total},  {"parseUs", parse}, {"authUs", t.auth},
                   {"storageUs", t.storage}, {"serialiseUs", serialise}, {"waitUs", wait}};
  for (const auto& l : latencies) {
    AppendKey(l.name, &out);
    out.append(std::to_string(Micros(l.value)));
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
  if (thread_.joinable()) {
    enabled_.store(false, std::memory_order_relaxed);
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    *error = "cannot open trace file '" + path + "': " + std::strerror(errno);
    return false;
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
    path_ = path;
    file_ = file;
  }
  bodies_.store(bodies, std::memory_order_relaxed);
  thread_ = std::thread([this] { Drain(); });
  enabled_.store(true, std::memory_order_relaxed);
  return true;
}

void TraceWriter::Stop() {
  std::lock_guard control(control_mu_);
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
  }
  wake_.notify_one();
}

void TraceWriter::Drain() {
  std::deque<std::string> batch;
  std::unique_lock lock(mu_);
  std::FILE* file = file_;
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    batch.swap(queue_);
    const bool last = stopping_;
    lock.unlock();
    for (std::string& line : batch) {
      line.push_back('\n');
      std::fwrite(line.data(), 1, line.size(), file);
    }
    // Flushed per batch, so `tail -f` and a test reading after the suite see
    // every line that was queued before they looked.
    std::fflush(file);
    written_.fetch_add(batch.size(), std::memory_order_relaxed);
    batch.clear();
    lock.lock();
    if (last && queue_.empty()) break;
  }
  std::fclose(file);
  file_ = nullptr;
  path_.clear();
}

}  // namespace tablestone::api
