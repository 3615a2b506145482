// TracingEngine: what one traced request's handler sees as the engine
// (docs/observability.md, "Request trace"). The dispatcher puts it around the
// engine only for a request it traces, so handlers neither time their storage
// calls nor know whether tracing is on; an untraced request runs against the
// engine itself.
//
// Into the request's RequestTrace it adds the time spent inside CreateTable,
// DeleteTable, ListTables, GetEntity, Write and Scan (`storage`), and it
// records what only those calls see: the table a Create Table names in its
// body, the keys of a single-entity write (an insert's are in its body; a
// $batch's are not recorded), and the rows the last Scan read and returned.
//
// Not thread-safe: one request's handler runs on one thread at a time.
#pragma once

#include <span>
#include <string_view>

#include "protocol/operation.h"
#include "server/api/forwarding_engine.h"
#include "server/api/trace.h"

namespace tablestone::api {

class TracingEngine final : public ForwardingEngine {
 public:
  // `trace` must outlive the TracingEngine; `operation` is the request's.
  TracingEngine(storage::Engine& inner, RequestTrace& trace, protocol::Operation operation)
      : ForwardingEngine(inner), trace_(trace), operation_(operation) {}

  StatusOr<storage::TableInfo> CreateTable(std::string_view account, std::string_view name) override;
  Status DeleteTable(std::string_view account, std::string_view name) override;
  StatusOr<storage::TableListResult> ListTables(std::string_view account,
                                                const storage::TableListSpec& spec) override;
  using storage::Engine::GetEntity;
  StatusOr<model::Entity> GetEntity(const storage::TableInfo& table, std::string_view partition_key,
                                    std::string_view row_key, ReadWait wait) override;
  using storage::Engine::Write;
  storage::WriteResult Write(const storage::TableInfo& table, std::span<const model::WriteOp> ops,
                             ReadWait wait) override;
  using storage::Engine::Scan;
  StatusOr<model::ScanResult> Scan(const storage::TableInfo& table, const model::ScanSpec& spec,
                                   const model::ScanRun& run) override;

 private:
  RequestTrace& trace_;
  const protocol::Operation operation_;
};

}  // namespace tablestone::api
