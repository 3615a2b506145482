#include "server/api/metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tablestone::api {
namespace {

// Seconds. From 50 µs (a point read served from the entity cache) to 10 s
// (a query page near its time budget).
const std::vector<double> kLatencyBounds = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                            0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,    5, 10};
// Sub-requests per $batch (the service allows at most 100).
const std::vector<double> kBatchBounds = {1, 2, 5, 10, 20, 50, 100};

constexpr double kNanosPerSecond = 1e9;

// Integers print as integers; other values with enough digits to round-trip.
void AppendNumber(double v, std::string* out) {
  char buf[64];
  if (v == static_cast<double>(static_cast<int64_t>(v)) && v < 9e15 && v > -9e15) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    // The shortest of 15 or 17 significant digits that reads back exactly.
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  out->append(buf);
}

void AppendHeader(std::string_view name, std::string_view type, std::string_view help, std::string* out) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void AppendSample(std::string_view name, std::string_view labels, double value, std::string* out) {
  out->append(name);
  if (!labels.empty()) out->append("{").append(labels).append("}");
  out->append(" ");
  AppendNumber(value, out);
  out->append("\n");
}

const char* const kStatusClassNames[Metrics::kStatusClasses] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

// What the process_* family needs beyond ProcessFigures.
struct StandardProcessFigures {
  uint64_t virtual_bytes = 0;
  uint64_t max_fds = 0;           // the soft limit; 0 = unlimited
  double cpu_seconds = 0;         // user + system, every thread
  double start_time_seconds = 0;  // Unix time
};
StandardProcessFigures ReadStandardProcessFigures();

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

uint64_t Histogram::Count() const {
  uint64_t n = 0;
  for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
  return n;
}

void Histogram::Render(std::string_view name, std::string_view labels, double scale, std::string* out) const {
  // Loaded once each, so the cumulative buckets, +Inf and _count agree even
  // while requests keep adding.
  std::vector<uint64_t> counts(counts_.size());
  uint64_t total = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    counts[i] = counts_[i].load(std::memory_order_relaxed);
    total += counts[i];
  }
  if (total == 0) return;
  const std::string prefix = labels.empty() ? std::string() : std::string(labels) + ",";
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    std::string le;
    if (i < bounds_->size()) {
      AppendNumber((*bounds_)[i], &le);
    } else {
      le = "+Inf";
    }
    AppendSample(bucket, prefix + "le=\"" + le + "\"", static_cast<double>(cumulative), out);
  }
  AppendSample(std::string(name) + "_sum", labels, static_cast<double>(sum_.load(std::memory_order_relaxed)) / scale,
               out);
  AppendSample(std::string(name) + "_count", labels, static_cast<double>(total), out);
}

Metrics::Metrics(std::vector<std::string> accounts, BuildLabels build)
    : accounts_(std::move(accounts)),
      build_info_labels_("version=\"" + EscapeLabelValue(build.version) + "\",commit=\"" +
                         EscapeLabelValue(build.commit) + "\",flavor=\"" + EscapeLabelValue(build.flavor) + "\""),
      requests_(new std::atomic<uint64_t>[(accounts_.size() + 1) * (kOperations + 1) * kStatusClasses]),
      batch_sizes_(&kBatchBounds),
      queries_(new QueryCounters[accounts_.size() + 1]),
      started_(std::chrono::steady_clock::now()) {
  const size_t n = (accounts_.size() + 1) * (kOperations + 1) * kStatusClasses;
  for (size_t i = 0; i < n; ++i) requests_[i].store(0, std::memory_order_relaxed);
  for (size_t i = 0; i <= kOperations; ++i) latency_.push_back(std::make_unique<Histogram>(&kLatencyBounds));
}

size_t Metrics::AccountIndex(std::string_view account) const {
  for (size_t i = 0; i < accounts_.size(); ++i) {
    if (accounts_[i] == account) return i;
  }
  return accounts_.size();
}

void Metrics::RecordRequest(size_t account, size_t operation, unsigned status, std::chrono::nanoseconds latency) {
  if (account > accounts_.size()) account = accounts_.size();
  if (operation > kOperations) operation = kUnknownOperation;
  size_t status_class = status / 100;
  status_class = status_class >= 1 && status_class <= kStatusClasses ? status_class - 1 : kStatusClasses - 1;
  requests_[Slot(account, operation, status_class)].fetch_add(1, std::memory_order_relaxed);
  const int64_t nanos = latency.count();
  if (nanos >= 0) latency_[operation]->Observe(static_cast<uint64_t>(nanos), kNanosPerSecond);
}

void Metrics::RecordQueryPage(size_t account, uint64_t rows_scanned, uint64_t rows_returned) {
  if (account > accounts_.size()) account = accounts_.size();
  QueryCounters& q = queries_[account];
  q.pages.fetch_add(1, std::memory_order_relaxed);
  q.rows_scanned.fetch_add(rows_scanned, std::memory_order_relaxed);
  q.rows_returned.fetch_add(rows_returned, std::memory_order_relaxed);
}

void Metrics::RecordBatch(size_t operations) { batch_sizes_.Observe(operations, 1); }

uint64_t Metrics::RequestCount(size_t account, size_t operation, size_t status_class) const {
  return requests_[Slot(account, operation, status_class)].load(std::memory_order_relaxed);
}

std::string Metrics::Render(const ScrapeInputs& inputs) const {
  std::string out;
  out.reserve(8192);
  auto op_name = [](size_t op) { return OperationLabel(op); };
  auto account_name = [this](size_t a) { return a < accounts_.size() ? EscapeLabelValue(accounts_[a]) : std::string(); };

  AppendHeader("tablestone_requests_total", "counter",
               "Requests answered, by account, operation and status class (admin routes not counted).", &out);
  for (size_t a = 0; a <= accounts_.size(); ++a) {
    for (size_t op = 0; op <= kOperations; ++op) {
      for (size_t sc = 0; sc < kStatusClasses; ++sc) {
        const uint64_t n = RequestCount(a, op, sc);
        if (n == 0) continue;
        std::string labels = "account=\"" + account_name(a) + "\",operation=\"" + std::string(op_name(op)) +
                             "\",status_class=\"" + kStatusClassNames[sc] + "\"";
        AppendSample("tablestone_requests_total", labels, static_cast<double>(n), &out);
      }
    }
  }

  AppendHeader("tablestone_request_duration_seconds", "histogram",
               "Time from a request's headers arriving to its answer being ready to send, by operation.", &out);
  for (size_t op = 0; op <= kOperations; ++op) {
    latency_[op]->Render("tablestone_request_duration_seconds", "operation=\"" + std::string(op_name(op)) + "\"",
                         kNanosPerSecond, &out);
  }

  AppendHeader("tablestone_batch_operations", "histogram", "Sub-requests per entity group transaction ($batch).",
               &out);
  batch_sizes_.Render("tablestone_batch_operations", "", 1, &out);

  struct QueryMetric {
    const char* name;
    const char* help;
    std::atomic<uint64_t> QueryCounters::*field;
  };
  const QueryMetric query_metrics[] = {
      {"tablestone_query_pages_total", "Query Entities pages answered, by account.", &QueryCounters::pages},
      {"tablestone_query_rows_scanned_total", "Rows Query Entities read from storage (kept or not), by account.",
       &QueryCounters::rows_scanned},
      {"tablestone_query_rows_returned_total", "Rows Query Entities returned, by account.",
       &QueryCounters::rows_returned},
  };
  for (const QueryMetric& m : query_metrics) {
    AppendHeader(m.name, "counter", m.help, &out);
    for (size_t a = 0; a <= accounts_.size(); ++a) {
      const uint64_t pages = queries_[a].pages.load(std::memory_order_relaxed);
      if (pages == 0) continue;
      AppendSample(m.name, "account=\"" + account_name(a) + "\"",
                   static_cast<double>((queries_[a].*(m.field)).load(std::memory_order_relaxed)), &out);
    }
  }

  AppendHeader("tablestone_query_slice_overruns_total", "counter",
               "Query Entities pages that outgrew the I/O thread's slice and ran again on the long lane.", &out);
  AppendSample("tablestone_query_slice_overruns_total", "",
               static_cast<double>(slice_overruns_.load(std::memory_order_relaxed)), &out);
  AppendHeader("tablestone_query_slice_skips_total", "counter",
               "Query Entities pages sent to the long lane directly: their table's queries outgrew the slice lately.",
               &out);
  AppendSample("tablestone_query_slice_skips_total", "", static_cast<double>(slice_skips_.load(std::memory_order_relaxed)),
               &out);
  AppendHeader("tablestone_disk_hand_offs_total", "counter",
               "Get Entity requests and entity writes whose stored entity was not in memory: run on the short lane, "
               "not the I/O thread.",
               &out);
  AppendSample("tablestone_disk_hand_offs_total", "",
               static_cast<double>(disk_hand_offs_.load(std::memory_order_relaxed)), &out);

  const uint64_t opened = transport_.connections_opened.load(std::memory_order_relaxed);
  const uint64_t closed = transport_.connections_closed.load(std::memory_order_relaxed);
  AppendHeader("tablestone_http_request_bytes_total", "counter", "Request bytes read (start line, headers, body).",
               &out);
  AppendSample("tablestone_http_request_bytes_total", "",
               static_cast<double>(transport_.bytes_in.load(std::memory_order_relaxed)), &out);
  AppendHeader("tablestone_http_response_bytes_total", "counter", "Response bytes written (head and body).", &out);
  AppendSample("tablestone_http_response_bytes_total", "",
               static_cast<double>(transport_.bytes_out.load(std::memory_order_relaxed)), &out);
  AppendHeader("tablestone_http_connections_total", "counter", "Connections accepted and served.", &out);
  AppendSample("tablestone_http_connections_total", "", static_cast<double>(opened), &out);
  AppendHeader("tablestone_http_connections_active", "gauge", "Connections open now.", &out);
  AppendSample("tablestone_http_connections_active", "", static_cast<double>(opened >= closed ? opened - closed : 0),
               &out);

  const double uptime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  AppendHeader("tablestone_uptime_seconds", "gauge", "Seconds since the server started.", &out);
  AppendSample("tablestone_uptime_seconds", "", uptime, &out);
  AppendHeader("tablestone_build_info", "gauge", "Always 1; the labels name the build.", &out);
  AppendSample("tablestone_build_info", build_info_labels_, 1, &out);

  // The process collector's standard names (as the Prometheus client
  // libraries export them), so stock dashboards and alerts work unchanged.
  const ProcessFigures process = ReadProcessFigures();
  const StandardProcessFigures standard = ReadStandardProcessFigures();
  AppendHeader("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", &out);
  AppendSample("process_cpu_seconds_total", "", standard.cpu_seconds, &out);
  AppendHeader("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", &out);
  AppendSample("process_resident_memory_bytes", "", static_cast<double>(process.resident_bytes), &out);
  AppendHeader("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", &out);
  AppendSample("process_virtual_memory_bytes", "", static_cast<double>(standard.virtual_bytes), &out);
  AppendHeader("process_open_fds", "gauge", "Number of open file descriptors.", &out);
  AppendSample("process_open_fds", "", static_cast<double>(process.open_fds), &out);
  AppendHeader("process_max_fds", "gauge", "Maximum number of open file descriptors.", &out);
  AppendSample("process_max_fds", "", static_cast<double>(standard.max_fds), &out);
  AppendHeader("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
               &out);
  AppendSample("process_start_time_seconds", "", standard.start_time_seconds, &out);

  for (const ScrapeInputs::Gauge& g : inputs.gauges) {
    AppendHeader(g.name, g.type, g.help, &out);
    if (g.samples.empty()) AppendSample(g.name, "", g.value, &out);
    for (const auto& [labels, value] : g.samples) AppendSample(g.name, labels, value, &out);
  }
  return out;
}

namespace {

StandardProcessFigures ReadStandardProcessFigures() {
  StandardProcessFigures f;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    f.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    f.max_fds = files.rlim_cur == RLIM_INFINITY ? 0 : static_cast<uint64_t>(files.rlim_cur);
  }
#ifdef __linux__
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0;
    if (std::fscanf(statm, "%llu", &size) == 1) f.virtual_bytes = size * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    std::fclose(statm);
  }
  // The start time: field 22 of /proc/self/stat (clock ticks after boot),
  // read after the command name's closing parenthesis (the name may hold
  // spaces), plus the boot time (btime in /proc/stat).
  unsigned long long start_ticks = 0, boot_time = 0;
  if (std::FILE* stat = std::fopen("/proc/self/stat", "r")) {
    char buf[1024] = {};
    const size_t n = std::fread(buf, 1, sizeof buf - 1, stat);
    std::fclose(stat);
    buf[n] = '\0';
    if (const char* after = std::strrchr(buf, ')')) {
      // Fields 3..21 are skipped: the state, then 18 numbers.
      if (std::sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                      &start_ticks) != 1) {
        start_ticks = 0;
      }
    }
  }
  if (std::FILE* stat = std::fopen("/proc/stat", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, stat) != nullptr) {
      if (std::sscanf(line, "btime %llu", &boot_time) == 1) break;
    }
    std::fclose(stat);
  }
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (boot_time > 0 && ticks_per_second > 0) {
    f.start_time_seconds = static_cast<double>(boot_time) + static_cast<double>(start_ticks) / ticks_per_second;
  }
#endif
  return f;
}

}  // namespace

ProcessFigures ReadProcessFigures() {
  ProcessFigures f;
#ifdef __linux__
  // statm: size resident shared ... in pages.
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0, resident = 0;
    if (std::fscanf(statm, "%llu %llu", &size, &resident) == 2) {
      f.resident_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    }
    std::fclose(statm);
  }
  if (DIR* dir = opendir("/proc/self/fd")) {
    uint64_t n = 0;
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(dir);
    f.open_fds = n > 0 ? n - 1 : 0;  // less the descriptor of the listing itself
  }
#endif
  return f;
}

}  // namespace tablestone::api
