#include "protocol/flavor.h"

#include "storage/model/ascii.h"
#include "storage/model/limits.h"

namespace tablestone::protocol {

std::string_view FlavorName(Flavor flavor) { return flavor == Flavor::kCosmos ? "cosmos" : "storage"; }

const FlavorPolicy& StoragePolicy() {
  static const FlavorPolicy kStorage = [] {
    FlavorPolicy p;
    p.max_batch_body_bytes = model::kMaxBatchBodyBytes;
    p.max_batch_operations = model::kMaxBatchOperations;
    p.max_top = static_cast<int>(model::kMaxPageEntities);
    return p;
  }();
  return kStorage;
}

FlavorPolicy CosmosPolicy(bool shuffle, uint64_t seed) {
  FlavorPolicy p;
  p.flavor = Flavor::kCosmos;
  // Learn, "Frequently asked questions about Azure Cosmos DB for Table"
  // (where API for Table is not identical with Table storage): RowKey 255
  // bytes, batches of at most 2 MB, TakeCount not limited to 1,000, table
  // names case-sensitive, the property names below reserved, no CORS.
  p.max_row_key_utf8_bytes = 255;
  p.max_batch_body_bytes = 2u << 20;
  p.max_batch_operations = 0;  // a recorded batch of 101 operations succeeded
  p.max_top = INT32_MAX;
  p.table_names_case_sensitive = true;
  p.reserved_property_names = true;
  p.cors = false;
  // Recorded Cosmos errors carry their code in the body only.
  p.error_code_header = false;
  p.continuation = ContinuationStyle::kCosmosToken;
  p.shuffle = shuffle;
  p.shuffle_seed = seed;
  for (Operation op : {Operation::kGetServiceProperties, Operation::kSetServiceProperties,
                       Operation::kGetServiceStats, Operation::kGetTableAcl, Operation::kSetTableAcl,
                       Operation::kPreflight}) {
    p.unsupported[static_cast<size_t>(op)] = true;
  }
  return p;
}

std::optional<ApiError> RefuseOperation(const FlavorPolicy& policy, Operation operation) {
  if (!policy.unsupported[static_cast<size_t>(operation)]) return std::nullopt;
  ApiError error = ApiError::NotImplemented();
  error.message = "The requested operation is not supported.";  // as recorded from the service
  return error;
}

namespace {

bool IsReservedPropertyName(std::string_view name) {
  for (std::string_view reserved : {"id", "rid", "etag", "ResourceId"}) {
    if (model::EqualsIgnoreCase(name, reserved)) return true;
  }
  return false;
}

}  // namespace

std::optional<ApiError> CheckEntity(const FlavorPolicy& policy, const model::Entity& entity) {
  if (policy.max_row_key_utf8_bytes != 0 && entity.row_key.size() > policy.max_row_key_utf8_bytes) {
    ApiError error = ApiError::InvalidInput();
    error.code = "KeyValueTooLarge";
    error.message = "The RowKey exceeds the maximum allowed size of " +
                    std::to_string(policy.max_row_key_utf8_bytes) + " bytes.";
    return error;
  }
  if (policy.reserved_property_names) {
    for (const model::Property& property : entity.properties) {
      if (IsReservedPropertyName(property.name)) return ApiError::PropertyNameInvalid();
    }
  }
  return std::nullopt;
}

ApiError RequestRateTooLarge() {
  ApiError error;
  error.http_status = 429;
  error.code = "TooManyRequests";
  error.message =
      "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request "
      "later.";
  return error;
}

}  // namespace tablestone::protocol
