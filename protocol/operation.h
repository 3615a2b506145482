// The REST operations of the Table service, named as in the REST reference,
// and what each one is (kOperationTable): every question the server asks of
// an operation (is it a write, which error format, which SAS permission, which
// metrics slot) is answered by its row here, not by a switch of its own.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace tablestone::protocol {

enum class Operation {
  kQueryTables,
  kCreateTable,
  kDeleteTable,
  kGetTable,
  kQueryEntities,
  kGetEntity,
  kInsertEntity,
  kUpdateEntity,
  kMergeEntity,
  kInsertOrReplaceEntity,
  kInsertOrMergeEntity,
  kDeleteEntity,
  kBatch,
  kGetTableAcl,
  kSetTableAcl,
  kGetServiceProperties,
  kSetServiceProperties,
  kGetServiceStats,
  kPreflight,
};

// What an operation addresses: one table's entities (the only operations a
// service SAS may grant), a table, or the service.
enum class OperationScope { kEntity, kTable, kService };

// How an operation answers errors (Learn: table-service-error-codes): the
// ACL and service-property operations speak XML, the rest OData JSON.
enum class ErrorFormat { kOData, kXml };

// What an account SAS must grant for the operation (Learn: create-account-sas):
// a signed resource type among `resource_types` (none listed: no account SAS
// may call it), at least one of `any_of` (when not empty) and all of `all_of`.
struct AccountSasRule {
  std::string_view resource_types;
  std::string_view any_of;
  std::string_view all_of;
};

struct OperationRow {
  Operation operation;
  std::string_view name;  // the name in logs, metrics, traces and fault rules
  bool write;             // changes state: refused on the secondary endpoint
  OperationScope scope;
  ErrorFormat errors;
  // False only for the CORS preflight, which no credential signs (Fetch
  // standard, CORS-preflight request): every SAS check passes it.
  bool authenticated;
  AccountSasRule account_sas;
  // The permission letters a service SAS must all hold; only entity-scoped
  // operations may be granted one. Empty for a batch: each of its operations
  // is checked on its own.
  std::string_view service_sas;
  size_t metrics_index;  // dense from 0, in the enum's order
};

// Table-level operations take a resource type of "s" or "c": the REST docs
// file them under the container type, but azure-data-tables' ResourceTypes
// can only express service and object and documents List Tables under
// service (docs/compatibility-notes/batch-auth.md).
inline constexpr std::array<OperationRow, 19> kOperationTable = {{
    // operation, name, write, scope, errors, authenticated, account SAS {types, any_of, all_of}, service SAS, metrics
    {Operation::kQueryTables, "QueryTables", false, OperationScope::kTable, ErrorFormat::kOData, true, {"sc", "lr", ""}, "", 0},
    {Operation::kCreateTable, "CreateTable", true, OperationScope::kTable, ErrorFormat::kOData, true, {"sc", "acw", ""}, "", 1},
    {Operation::kDeleteTable, "DeleteTable", true, OperationScope::kTable, ErrorFormat::kOData, true, {"sc", "d", ""}, "", 2},
    {Operation::kGetTable, "GetTable", false, OperationScope::kTable, ErrorFormat::kOData, true, {"sc", "lr", ""}, "", 3},
    {Operation::kQueryEntities, "QueryEntities", false, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "r", ""}, "r", 4},
    {Operation::kGetEntity, "GetEntity", false, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "r", ""}, "r", 5},
    {Operation::kInsertEntity, "InsertEntity", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "a", ""}, "a", 6},
    {Operation::kUpdateEntity, "UpdateEntity", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "u", ""}, "u", 7},
    {Operation::kMergeEntity, "MergeEntity", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "u", ""}, "u", 8},
    {Operation::kInsertOrReplaceEntity, "InsertOrReplaceEntity", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "", "au"}, "au", 9},
    {Operation::kInsertOrMergeEntity, "InsertOrMergeEntity", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "", "au"}, "au", 10},
    {Operation::kDeleteEntity, "DeleteEntity", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "d", ""}, "d", 11},
    // Each operation of a batch is checked on its own (api::Authenticator::AuthorizeBatchOperation).
    {Operation::kBatch, "EntityGroupTransaction", true, OperationScope::kEntity, ErrorFormat::kOData, true, {"o", "", ""}, "", 12},
    {Operation::kGetTableAcl, "GetTableAcl", false, OperationScope::kTable, ErrorFormat::kXml, true, {"", "", ""}, "", 13},
    {Operation::kSetTableAcl, "SetTableAcl", true, OperationScope::kTable, ErrorFormat::kXml, true, {"", "", ""}, "", 14},
    {Operation::kGetServiceProperties, "GetTableServiceProperties", false, OperationScope::kService, ErrorFormat::kXml, true, {"s", "r", ""}, "", 15},
    {Operation::kSetServiceProperties, "SetTableServiceProperties", true, OperationScope::kService, ErrorFormat::kXml, true, {"s", "w", ""}, "", 16},
    {Operation::kGetServiceStats, "GetTableServiceStats", false, OperationScope::kService, ErrorFormat::kXml, true, {"s", "r", ""}, "", 17},
    {Operation::kPreflight, "PreflightTableRequest", false, OperationScope::kService, ErrorFormat::kOData, false, {"", "", ""}, "", 18},
}};

inline constexpr size_t kOperationCount = kOperationTable.size();

// The row of `op`. Rows are in the enum's order (checked below), so this is
// an index.
constexpr const OperationRow& RowOf(Operation op) { return kOperationTable[static_cast<size_t>(op)]; }

namespace operation_detail {
constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < kOperationTable.size(); ++i) {
    if (static_cast<size_t>(kOperationTable[i].operation) != i) return false;
  }
  return static_cast<size_t>(Operation::kPreflight) + 1 == kOperationTable.size();
}
}  // namespace operation_detail
static_assert(operation_detail::RowsInEnumOrder(), "kOperationTable: one row per Operation, in the enum's order");

constexpr std::string_view OperationName(Operation op) { return RowOf(op).name; }
// OperationName of every operation, in the enum's order.
std::span<const std::string_view> OperationNames();
// True for operations that change state (refused on the secondary endpoint).
constexpr bool IsWriteOperation(Operation op) { return RowOf(op).write; }
constexpr bool IsXmlOperation(Operation op) { return RowOf(op).errors == ErrorFormat::kXml; }
constexpr bool IsEntityOperation(Operation op) { return RowOf(op).scope == OperationScope::kEntity; }
// An entity write of its own (not a batch): Insert, Update, Merge, the two upserts, Delete.
constexpr bool IsEntityWriteOperation(Operation op) {
  return IsEntityOperation(op) && RowOf(op).write && op != Operation::kBatch;
}
// An entity read: Get Entity or Query Entities.
constexpr bool IsEntityReadOperation(Operation op) { return IsEntityOperation(op) && !RowOf(op).write; }

}  // namespace tablestone::protocol
