// bench_engine_scan: single-thread throughput of a filtered full-table scan,
// to check the >= 1M rows/s/core target. Not a test; run by hand:
//   bench_engine_scan [rows=200000] [dir=/tmp/tablestone-scan-bench] [--in-memory] [--no-cache]
//                     [--rows-per-partition=100]
// --rows-per-partition=1 is the GUID/user-id key layout (one row per
// partition): every row enters a new partition, so the per-partition cost of
// the scan cache (lookup, admission) dominates; such partitions are below
// kMinCachedRows and never cached (docs/benchmarks.md, "One-row partitions").
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/filter/filter.h"
#include "storage/engine.h"

using namespace tablestone;
using model::EdmValue;

namespace {
// CPU time of this thread: the machine may be shared, so wall time overstates
// the cost per core.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Resident set size in MiB (Linux), or -1.
double RssMiB() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmRSS: %lf kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb / 1024;
}
}  // namespace

int main(int argc, char** argv) {
  size_t rows = 200'000;
  std::string dir = "/tmp/tablestone-scan-bench";
  bool in_memory = false;
  bool no_cache = false;
  size_t rows_per_partition = 100;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--in-memory") {
      in_memory = true;
    } else if (a == "--no-cache") {
      no_cache = true;
    } else if (a.starts_with("--rows-per-partition=")) {
      rows_per_partition = std::strtoull(a.c_str() + a.find('=') + 1, nullptr, 10);
      if (rows_per_partition == 0) rows_per_partition = 1;
    } else if (!a.empty() && a[0] >= '0' && a[0] <= '9') {
      rows = std::strtoull(a.c_str(), nullptr, 10);
    } else {
      dir = a;
    }
  }
  std::filesystem::remove_all(dir);
  storage::EngineOptions options;
  options.path = dir;
  options.in_memory = in_memory;
  if (no_cache) options.scan_cache_bytes = 0;
  auto open = [&] {
    auto e = storage::Engine::Open(options);
    if (!e.ok()) {
      std::fprintf(stderr, "open: %s\n", e.status().ToString().c_str());
      std::exit(1);
    }
    return std::move(e).value();
  };
  auto engine = open();
  std::printf("RSS after opening an empty store: %.1f MiB\n", RssMiB());
  auto table = engine->CreateTable("devstoreaccount1", "bench");
  if (!table.ok()) return 1;

  auto load_start = std::chrono::steady_clock::now();
  // One Write() per batch of up to 100 rows of one partition (a batch is
  // single-partition, as an entity group transaction).
  std::vector<model::WriteOp> ops;
  auto flush = [&] {
    if (ops.empty()) return true;
    auto w = engine->Write(*table, ops);
    ops.clear();
    if (!w.status.ok()) {
      std::fprintf(stderr, "write: %s\n", w.status.ToString().c_str());
      return false;
    }
    return true;
  };
  for (size_t j = 0; j < rows; ++j) {
    char pk[32];
    std::snprintf(pk, sizeof pk, "partition%06zu", j / rows_per_partition);
    if (!ops.empty() && (ops.size() == 100 || ops.front().entity.partition_key != pk)) {
      if (!flush()) return 1;
    }
    model::WriteOp op;
    op.kind = model::WriteKind::kInsert;
    op.entity.partition_key = pk;
    char rk[32];
    std::snprintf(rk, sizeof rk, "row%010zu", j);
    op.entity.row_key = rk;
    op.entity.properties = {
        {"Name", EdmValue::String("customer name " + std::to_string(j))},
        {"Age", EdmValue::Int32(static_cast<int32_t>(j % 100))},
        {"Balance", EdmValue::Double(j * 1.5)},
        {"Visits", EdmValue::Int64(static_cast<int64_t>(j))},
        {"Active", EdmValue::Boolean(j % 2 == 0)},
    };
    ops.push_back(std::move(op));
  }
  if (!flush()) return 1;
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::printf("RSS after load: %.1f MiB\n", RssMiB());
  std::printf("loaded %zu entities, %zu per partition, in %.2f s (%.0f entities/s, batches of <= 100)\n", rows,
              rows_per_partition, load_s, rows / load_s);

  if (!in_memory) {
    // Measure from SST files, as after a restart.
    if (!engine->Close().ok()) return 1;
    engine.reset();
    auto t0 = std::chrono::steady_clock::now();
    engine = open();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("reopen with %zu entities: %.1f ms\n", rows, ms);
    std::printf("RSS after reopen: %.1f MiB\n", RssMiB());
    table = engine->GetTable("devstoreaccount1", "bench");
  }

  // The real $filter engine, as a query would use it: keeps ~0.5% of the rows.
  // Round 0 reads RocksDB and fills the partition cache (cold); later rounds
  // filter the cached columnar blocks (warm) unless scan_cache_bytes is 0.
  model::ScanSpec spec;
  auto filter = protocol::filter::Filter::Parse("Age eq 42 and Active eq true");
  if (!filter.ok()) return 1;
  spec.predicate = *filter;
  for (int round = 0; round < 3; ++round) {
    size_t examined = 0, kept = 0, pages = 0;
    model::ScanSpec page = spec;
    auto start = std::chrono::steady_clock::now();
    double cpu_start = ThreadCpuSeconds();
    while (true) {
      auto r = engine->Scan(*table, page);
      if (!r.ok()) {
        std::fprintf(stderr, "scan: %s\n", r.status().ToString().c_str());
        return 1;
      }
      ++pages;
      examined += r->rows_examined;
      kept += r->entities.size();
      if (!r->next) break;
      page.resume_from = *r->next;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double cpu = ThreadCpuSeconds() - cpu_start;
    std::printf("round %d: filtered scan examined %zu rows, kept %zu, %zu pages: wall %.3f s = %.2f M rows/s; "
                "cpu %.3f s = %.2f M rows/s/core\n",
                round, examined, kept, pages, s, examined / s / 1e6, cpu, examined / cpu / 1e6);
  }
  // Unfiltered paging (1000 entities per page, every row copied out).
  {
    size_t examined = 0, pages = 0;
    model::ScanSpec page;
    auto start = std::chrono::steady_clock::now();
    double cpu_start = ThreadCpuSeconds();
    while (true) {
      auto r = engine->Scan(*table, page);
      if (!r.ok()) return 1;
      ++pages;
      examined += r->rows_examined;
      if (!r->next) break;
      page.resume_from = *r->next;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double cpu = ThreadCpuSeconds() - cpu_start;
    std::printf("unfiltered paged scan: %zu rows, %zu pages: wall %.3f s = %.2f M rows/s; cpu %.3f s = %.2f M rows/s/core\n",
                examined, pages, s, examined / s / 1e6, cpu, examined / cpu / 1e6);
  }
  std::printf("RSS after scans: %.1f MiB\n", RssMiB());
  auto stats = engine->GetStats();
  std::printf("stats: ~%llu entities, ~%llu bytes\n", static_cast<unsigned long long>(stats.estimated_entities),
              static_cast<unsigned long long>(stats.live_data_bytes));
  if (!engine->Close().ok()) return 1;
  if (!in_memory) std::filesystem::remove_all(dir);
  return 0;
}
