// The REST operations of the Table service, named as in the REST reference.
#pragma once

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

std::string_view OperationName(Operation op);
// OperationName of every operation, in the enum's order.
std::span<const std::string_view> OperationNames();
// True for operations that change state (refused on the secondary endpoint).
bool IsWriteOperation(Operation op);

}  // namespace tablestone::protocol
