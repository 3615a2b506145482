#include "protocol/operation.h"

#include <array>

namespace tablestone::protocol {

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kQueryTables: return "QueryTables";
    case Operation::kCreateTable: return "CreateTable";
    case Operation::kDeleteTable: return "DeleteTable";
    case Operation::kGetTable: return "GetTable";
    case Operation::kQueryEntities: return "QueryEntities";
    case Operation::kGetEntity: return "GetEntity";
    case Operation::kInsertEntity: return "InsertEntity";
    case Operation::kUpdateEntity: return "UpdateEntity";
    case Operation::kMergeEntity: return "MergeEntity";
    case Operation::kInsertOrReplaceEntity: return "InsertOrReplaceEntity";
    case Operation::kInsertOrMergeEntity: return "InsertOrMergeEntity";
    case Operation::kDeleteEntity: return "DeleteEntity";
    case Operation::kBatch: return "EntityGroupTransaction";
    case Operation::kGetTableAcl: return "GetTableAcl";
    case Operation::kSetTableAcl: return "SetTableAcl";
    case Operation::kGetServiceProperties: return "GetTableServiceProperties";
    case Operation::kSetServiceProperties: return "SetTableServiceProperties";
    case Operation::kGetServiceStats: return "GetTableServiceStats";
    case Operation::kPreflight: return "PreflightTableRequest";
  }
  return "Unknown";
}

std::span<const std::string_view> OperationNames() {
  static const auto names = [] {
    std::array<std::string_view, static_cast<size_t>(Operation::kPreflight) + 1> all{};
    for (size_t i = 0; i < all.size(); ++i) all[i] = OperationName(static_cast<Operation>(i));
    return all;
  }();
  return names;
}

bool IsWriteOperation(Operation op) {
  switch (op) {
    case Operation::kCreateTable:
    case Operation::kDeleteTable:
    case Operation::kInsertEntity:
    case Operation::kUpdateEntity:
    case Operation::kMergeEntity:
    case Operation::kInsertOrReplaceEntity:
    case Operation::kInsertOrMergeEntity:
    case Operation::kDeleteEntity:
    case Operation::kBatch:
    case Operation::kSetTableAcl:
    case Operation::kSetServiceProperties:
      return true;
    default:
      return false;
  }
}

}  // namespace tablestone::protocol
