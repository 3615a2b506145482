// Dispatcher's answers to the two read-only status routes outside the Azure
// namespace (docs/observability.md): GET /_tablestone/health?detail=1 and
// GET /_tablestone/metrics. Their routing is server_routes.h and
// Dispatcher::ServeServerRoute; here is only what they report.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "protocol/error_body.h"
#include "server/api/dispatcher.h"
#include "server/api/metrics.h"

namespace tablestone::api {
namespace {

// JSON string literal of `s` (the facts are operator-chosen paths and names).
std::string JsonString(std::string_view s) {
  std::string out;
  protocol::AppendJsonString(out, s);
  return out;
}

}  // namespace

std::string Dispatcher::HealthDetail() {
  const auto started = metrics_ != nullptr ? metrics_->started() : std::chrono::steady_clock::now();
  const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const ServerFacts& facts = options_.facts;
  std::string out = "{\"status\":\"ok\",\"version\":" + JsonString(facts.version);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", uptime);
  out += std::string(",\"uptimeSeconds\":") + buf;
  out += ",\"dataDirectory\":" + JsonString(facts.in_memory ? std::string_view() : facts.data_dir);
  out += std::string(",\"inMemory\":") + (facts.in_memory ? "true" : "false");
  out += ",\"durability\":" + JsonString(facts.durability);
  out += ",\"accounts\":[";
  // The engine keeps each account's table count on every create and delete
  // (Engine::Stats::accounts, exact from open), as /metrics reports it.
  const storage::Engine::Stats stats = engine_.GetStats();
  bool first = true;
  for (const AccountKeys& account : options_.accounts) {
    uint64_t tables = 0;
    for (const auto& usage : stats.accounts) {
      if (usage.account == account.name) tables = usage.tables;
    }
    out += first ? "" : ",";
    first = false;
    out += "{\"name\":" + JsonString(account.name) + ",\"tables\":" + std::to_string(tables) + "}";
  }
  out += "]}";
  return out;
}

std::string Dispatcher::MetricsText() {
  ScrapeInputs inputs;
  const auto add = [&inputs](std::string name, std::string help, std::string type, double value) {
    ScrapeInputs::Gauge g;
    g.name = std::move(name);
    g.help = std::move(help);
    g.type = std::move(type);
    g.value = value;
    inputs.gauges.push_back(std::move(g));
  };
  const ProcessFigures process = ReadProcessFigures();
  add("tablestone_process_resident_memory_bytes", "Resident set size of the server process.", "gauge",
      static_cast<double>(process.resident_bytes));
  add("tablestone_process_open_fds", "Open file descriptors of the server process.", "gauge",
      static_cast<double>(process.open_fds));
  const storage::Engine::Stats stats = engine_.GetStats();
  add("tablestone_storage_live_data_bytes", "Estimated bytes of entity data (SST files and memtables).", "gauge",
      static_cast<double>(stats.live_data_bytes));
  add("tablestone_storage_estimated_entities", "RocksDB's estimate of stored entities (all accounts; approximate).",
      "gauge", static_cast<double>(stats.estimated_entities));
  add("tablestone_storage_entity_cache_entries", "Entities held by the entity cache.", "gauge",
      static_cast<double>(stats.entity_cache_entries));
  add("tablestone_storage_wal_syncs_total", "Log writes made by group commit since open.", "counter",
      static_cast<double>(stats.wal_syncs));
  const struct {
    const char* name;
    const char* help;
    const char* type;
    uint64_t value;
  } storage_figures[] = {
      {"tablestone_storage_memtable_bytes", "Bytes in RocksDB memtables (all column families).", "gauge",
       stats.memtable_bytes},
      {"tablestone_storage_sst_bytes", "Bytes of RocksDB SST files (all column families).", "gauge", stats.sst_bytes},
      {"tablestone_storage_pending_compaction_bytes", "RocksDB's estimate of bytes compaction still has to rewrite.",
       "gauge", stats.pending_compaction_bytes},
      {"tablestone_storage_stalled_column_families", "Column families whose writes RocksDB delays or stops now.",
       "gauge", stats.stalled_column_families},
      {"tablestone_storage_write_stalls_total",
       "Write stalls begun since start (a column family going from normal to delayed or stopped).", "counter",
       stats.write_stalls},
      {"tablestone_storage_entity_cache_hits_total", "Point reads answered by the entity cache.", "counter",
       stats.entity_cache_hits},
      {"tablestone_storage_entity_cache_misses_total", "Point reads the entity cache did not hold.", "counter",
       stats.entity_cache_misses},
      {"tablestone_storage_scan_cache_hits_total", "Partitions scans served from the scan cache.", "counter",
       stats.scan_cache_hits},
      {"tablestone_storage_scan_cache_misses_total",
       "Partitions scans looked up in the scan cache and read from RocksDB.", "counter", stats.scan_cache_misses},
  };
  for (const auto& f : storage_figures) {
    add(f.name, f.help, f.type, static_cast<double>(f.value));
  }
  // Per configured account (label values stay bounded, as everywhere).
  ScrapeInputs::Gauge tables, entities;
  tables.name = "tablestone_tables";
  tables.help = "Tables per account (kept by every table create and delete).";
  entities.name = "tablestone_entities";
  entities.help = "Entities per account (kept by every committed write; see tablestone_entity_counts_complete).";
  tables.type = entities.type = "gauge";
  for (const AccountKeys& account : options_.accounts) {
    uint64_t t = 0, e = 0;
    for (const auto& usage : stats.accounts) {
      if (usage.account == account.name) {
        t = usage.tables;
        e = usage.entities;
      }
    }
    const std::string labels = "account=\"" + EscapeLabelValue(account.name) + "\"";
    tables.samples.emplace_back(labels, static_cast<double>(t));
    entities.samples.emplace_back(labels, static_cast<double>(e));
  }
  if (!tables.samples.empty()) {
    inputs.gauges.push_back(std::move(tables));
    inputs.gauges.push_back(std::move(entities));
  }
  add("tablestone_entity_counts_complete", "0 while the count of existing entities after start still runs, then 1.",
      "gauge", stats.entity_counts_complete ? 1.0 : 0.0);
  if (trace_ != nullptr) {
    add("tablestone_trace_enabled", "1 while the request trace is on.", "gauge", trace_->enabled() ? 1.0 : 0.0);
    add("tablestone_trace_lines_total", "Request trace lines written to the trace file.", "counter",
        static_cast<double>(trace_->written()));
    add("tablestone_trace_dropped_total", "Request trace lines dropped because the writer's queue was full.", "counter",
        static_cast<double>(trace_->dropped()));
  }
  std::string text = metrics_->Render(inputs);
  if (options_.faults != nullptr) {
    // Labelled by rule id, which the operator chose: escaped like every label value.
    text += "# HELP tablestone_faults_injected_total Faults injected, per fault rule (docs/testing-with-faults.md).\n"
            "# TYPE tablestone_faults_injected_total counter\n";
    for (const auto& [rule, count] : options_.faults->Counts()) {
      text += "tablestone_faults_injected_total{rule=\"" + EscapeLabelValue(rule) + "\"} " + std::to_string(count) +
              "\n";
    }
  }
  return text;
}

}  // namespace tablestone::api
