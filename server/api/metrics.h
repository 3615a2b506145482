// Metrics: the counters behind GET /_tablestone/metrics and their rendering
// in the Prometheus text exposition format (version 0.0.4), written directly:
// a strict parser in tests/unit/server/api/metrics_test.cc and in
// tests/e2e/python/test_metrics.py pins the output (docs/observability.md).
//
// Cost on the request path: every Record* call is a few relaxed atomic adds
// into arrays sized at construction (accounts x operations x status class),
// so there is no lock, no allocation and no map lookup. Label sets with a
// zero count are left out of the exposition.
//
// Labels: `account` is one of the configured accounts, or "" for a request
// whose account is unknown (refused before routing, or naming an account the
// server does not have: label values stay bounded whatever clients send).
// `operation` is protocol::OperationName, or "Unknown" before routing.
// `status_class` is "1xx".."5xx".
//
// What is not counted: the admin routes (/_tablestone/...) themselves, so a
// scrape does not change what it reads.
//
// Thread safety: Record* from any thread at any time; Render from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/operation.h"
#include "server/http/transport_counters.h"

namespace tablestone::api {

// Upper bounds of a fixed-bucket histogram plus the +Inf bucket. Counts are
// kept per bucket (not cumulative) and summed when rendered, so an
// observation is one add to one bucket and one to the sum.
class Histogram {
 public:
  // `bounds` ascending; observations are in the same unit as `bounds` times
  // `scale` (the sum is kept as an integer in that finer unit).
  explicit Histogram(const std::vector<double>* bounds) : bounds_(bounds), counts_(bounds->size() + 1) {}
  // `value` in the finer integer unit (e.g. nanoseconds); `scale` converts a
  // bound to that unit.
  void Observe(uint64_t value, double scale) {
    size_t i = 0;
    const double v = static_cast<double>(value);
    while (i < bounds_->size() && v > (*bounds_)[i] * scale) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }
  // Appends the _bucket/_sum/_count lines of one label set; `labels` is the
  // inner label text without braces ("" for none); `scale` divides the sum.
  // Nothing when the histogram is empty.
  void Render(std::string_view name, std::string_view labels, double scale, std::string* out) const;
  uint64_t Count() const;

 private:
  const std::vector<double>* bounds_;
  std::vector<std::atomic<uint64_t>> counts_;
  std::atomic<uint64_t> sum_{0};
};

// Figures the metrics route reads at scrape time from elsewhere (the engine,
// /proc): passed to Render so this class stays free of storage and the OS.
struct ScrapeInputs {
  struct Gauge {
    std::string name;  // full metric name
    std::string help;
    std::string type;  // "gauge" or "counter"
    double value = 0;
    // Labelled samples (inner label text, value); when not empty they are
    // the family's samples and `value` is unused.
    std::vector<std::pair<std::string, double>> samples;
  };
  std::vector<Gauge> gauges;
};

// What tablestone_build_info's labels say: the version, the commit the
// binary was built from (app::BuildCommit, "unknown" when not known) and the flavour
// the server speaks (storage, cosmos, or storage+cosmos with a Cosmos
// listener beside the storage one). Set once by server/app.
struct BuildLabels {
  std::string version = "unknown";
  std::string commit = "unknown";
  std::string flavor = "storage";
};

class Metrics {
 public:
  static constexpr size_t kOperations = protocol::kOperationCount;
  static constexpr size_t kUnknownOperation = kOperations;  // before routing
  static constexpr size_t kStatusClasses = 5;

  // `accounts`: the configured account names (label values).
  explicit Metrics(std::vector<std::string> accounts, BuildLabels build = {});
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Index of a configured account (exact name), or the "" slot.
  size_t AccountIndex(std::string_view account) const;
  static size_t OperationIndex(protocol::Operation op) { return protocol::RowOf(op).metrics_index; }
  // The operation label of a slot: its protocol::OperationName, or "Unknown"
  // (kUnknownOperation). Slots are the rows' dense metrics indexes.
  static std::string_view OperationLabel(size_t operation) {
    return operation < kOperations ? protocol::kOperationTable[operation].name : std::string_view("Unknown");
  }
  // The account label of a slot (AccountIndex): a configured name, or "" for
  // the unknown slot. Valid as long as this Metrics.
  std::string_view AccountLabel(size_t account) const {
    return account < accounts_.size() ? std::string_view(accounts_[account]) : std::string_view();
  }

  // One answered request: its account slot, operation slot (OperationIndex or
  // kUnknownOperation), HTTP status, and the time from its headers' arrival to
  // its answer (negative: unknown, counted but not in the histogram).
  void RecordRequest(size_t account, size_t operation, unsigned status, std::chrono::nanoseconds latency);
  // One page of Query Entities: rows the scan read and rows it returned.
  void RecordQueryPage(size_t account, uint64_t rows_scanned, uint64_t rows_returned);
  // One $batch with `operations` sub-requests (whatever its outcome).
  void RecordBatch(size_t operations);
  // A Query Entities page that outgrew the I/O thread's slice and ran again
  // on the long lane (`overran`), or went there directly because its table's
  // queries outgrew it lately (SliceHints).
  void RecordQuerySlice(bool overran) {
    (overran ? slice_overruns_ : slice_skips_).fetch_add(1, std::memory_order_relaxed);
  }
  // A Get Entity or entity write whose read of the stored entity on the I/O
  // thread would have waited for the disk, and that ran again on the short lane.
  void RecordDiskHandOff() { disk_hand_offs_.fetch_add(1, std::memory_order_relaxed); }

  http::TransportCounters& transport() { return transport_; }
  std::chrono::steady_clock::time_point started() const { return started_; }

  // The whole exposition (ends with a newline).
  std::string Render(const ScrapeInputs& inputs) const;

  // The value of one request counter (tests).
  uint64_t RequestCount(size_t account, size_t operation, size_t status_class) const;

 private:
  size_t Slot(size_t account, size_t operation, size_t status_class) const {
    return (account * (kOperations + 1) + operation) * kStatusClasses + status_class;
  }

  std::vector<std::string> accounts_;  // slot accounts_.size() is ""
  std::string build_info_labels_;      // tablestone_build_info's, rendered once
  std::unique_ptr<std::atomic<uint64_t>[]> requests_;
  std::vector<std::unique_ptr<Histogram>> latency_;  // per operation slot
  Histogram batch_sizes_;
  struct QueryCounters {
    std::atomic<uint64_t> pages{0};
    std::atomic<uint64_t> rows_scanned{0};
    std::atomic<uint64_t> rows_returned{0};
  };
  std::unique_ptr<QueryCounters[]> queries_;  // per account slot
  std::atomic<uint64_t> slice_overruns_{0};
  std::atomic<uint64_t> slice_skips_{0};
  std::atomic<uint64_t> disk_hand_offs_{0};
  http::TransportCounters transport_;
  std::chrono::steady_clock::time_point started_;
};

// Escapes a label value for the exposition (backslash, double quote, newline).
std::string EscapeLabelValue(std::string_view value);

// Process figures from /proc (Linux; zero elsewhere or on error).
struct ProcessFigures {
  uint64_t resident_bytes = 0;
  uint64_t open_fds = 0;
};
ProcessFigures ReadProcessFigures();

}  // namespace tablestone::api
