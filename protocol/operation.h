// The REST operations of the Table service, named as in the REST reference.
#pragma once

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
// True for operations that change state (refused on the secondary endpoint).
bool IsWriteOperation(Operation op);

}  // namespace tablestone::protocol
