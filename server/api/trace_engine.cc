#include "server/api/trace_engine.h"

#include <chrono>
#include <utility>

namespace tablestone::api {
namespace {

// Runs `call`, adding its time to trace.storage.
template <typename Call>
auto Timed(RequestTrace& trace, Call&& call) {
  const auto begin = std::chrono::steady_clock::now();
  auto result = std::forward<Call>(call)();
  trace.storage += std::chrono::steady_clock::now() - begin;
  return result;
}

bool IsSingleEntityWrite(protocol::Operation op) {
  switch (op) {
    case protocol::Operation::kInsertEntity:
    case protocol::Operation::kUpdateEntity:
    case protocol::Operation::kMergeEntity:
    case protocol::Operation::kInsertOrReplaceEntity:
    case protocol::Operation::kInsertOrMergeEntity:
    case protocol::Operation::kDeleteEntity: return true;
    default: return false;
  }
}

}  // namespace

StatusOr<storage::TableInfo> TracingEngine::CreateTable(std::string_view account, std::string_view name) {
  if (operation_ == protocol::Operation::kCreateTable) trace_.table = std::string(name);  // in the body, not the URL
  return Timed(trace_, [&] { return inner_.CreateTable(account, name); });
}

Status TracingEngine::DeleteTable(std::string_view account, std::string_view name) {
  return Timed(trace_, [&] { return inner_.DeleteTable(account, name); });
}

StatusOr<storage::TableListResult> TracingEngine::ListTables(std::string_view account,
                                                             const storage::TableListSpec& spec) {
  return Timed(trace_, [&] { return inner_.ListTables(account, spec); });
}

StatusOr<model::Entity> TracingEngine::GetEntity(const storage::TableInfo& table, std::string_view partition_key,
                                                 std::string_view row_key, ReadWait wait) {
  return Timed(trace_, [&] { return inner_.GetEntity(table, partition_key, row_key, wait); });
}

storage::WriteResult TracingEngine::Write(const storage::TableInfo& table, std::span<const model::WriteOp> ops,
                                          ReadWait wait) {
  if (IsSingleEntityWrite(operation_) && ops.size() == 1) {  // an insert's keys are in its body
    trace_.partition_key = ops.front().entity.partition_key;
    trace_.row_key = ops.front().entity.row_key;
  }
  return Timed(trace_, [&] { return inner_.Write(table, ops, wait); });
}

StatusOr<model::ScanResult> TracingEngine::Scan(const storage::TableInfo& table, const model::ScanSpec& spec,
                                                const model::ScanRun& run) {
  auto result = Timed(trace_, [&] { return inner_.Scan(table, spec, run); });
  if (result.ok()) {
    trace_.rows_scanned = result->rows_examined;
    trace_.rows_returned = result->entities.size();
  }
  return result;
}

}  // namespace tablestone::api
