// The service a listener imitates: Azure Table storage or Azure Cosmos DB for
// Table (docs/cosmos-mode.md). One immutable FlavorPolicy per listener holds
// every rule in which the two differ; the server asks it at a few decision
// points (admission in the dispatcher, request parsing, query order, error
// rendering) and nowhere else tests which service it imitates. The storage
// policy reproduces the storage rules exactly (FlavorTest pins it against
// storage/model/limits.h), so the storage flavour is unchanged by construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/api_error.h"
#include "protocol/operation.h"
#include "storage/model/entity.h"

namespace tablestone::protocol {

enum class Flavor { kStorage, kCosmos };

// "storage" / "cosmos".
std::string_view FlavorName(Flavor flavor);

// How a query page names where the next page starts.
enum class ContinuationStyle {
  kKeys,         // NextPartitionKey/NextRowKey are the encoded keys (protocol/continuation.h)
  kCosmosToken,  // NextPartitionKey is {"token":...,"range":...}, NextRowKey is "NA" (cosmos_token.h)
};

struct FlavorPolicy {
  Flavor flavor = Flavor::kStorage;
  // Largest RowKey in UTF-8 bytes; 0 = only the storage rule (1 KiB, counted
  // in UTF-16 units, model::kMaxKeyUtf16Units).
  size_t max_row_key_utf8_bytes = 0;
  // Largest $batch body; larger is 413 RequestBodyTooLarge before parsing.
  size_t max_batch_body_bytes = 4u << 20;
  // Most operations in one change set; 0 = no count limit (the body size bounds it).
  size_t max_batch_operations = 100;
  // Largest $top accepted (a larger one is 400 InvalidInput).
  int max_top = 1000;
  // Table names compared exactly (true) or ASCII case-insensitively (false).
  bool table_names_case_sensitive = false;
  // The property names `id`, `rid`, `etag` and `ResourceId` are refused
  // (compared ASCII case-insensitively).
  bool reserved_property_names = false;
  // CORS: preflights answered and Access-Control-* headers added per the
  // account's rules (server/api/cors.h).
  bool cors = true;
  // x-ms-error-code on error responses.
  bool error_code_header = true;
  ContinuationStyle continuation = ContinuationStyle::kKeys;
  // Query results (entities and tables) in a seeded, deterministic non-key
  // order instead of key order (cosmos_token.h, ShuffleOrder).
  bool shuffle = false;
  uint64_t shuffle_seed = 0;
  // Operations this service does not have: answered 501 NotImplemented.
  std::array<bool, kOperationTable.size()> unsupported{};
};

// The storage rules (a static object; never changes).
const FlavorPolicy& StoragePolicy();

// The Cosmos DB for Table rules; `shuffle` and `seed` come from the
// configuration (--cosmosShuffle, --faultSeed).
FlavorPolicy CosmosPolicy(bool shuffle, uint64_t seed);

// Admission: the refusal of `operation` under `policy`, or nullopt.
// Cosmos: 501 NotImplemented for the service properties, service stats,
// table ACL and CORS preflight (docs/compatibility.md, "Cosmos DB for Table
// mode: choices").
std::optional<ApiError> RefuseOperation(const FlavorPolicy& policy, Operation operation);

// Request parsing: the refusal of an entity about to be written under
// `policy` (RowKey size, reserved property names), or nullopt. The storage
// policy refuses nothing here (the storage rules are checked where they were).
std::optional<ApiError> CheckEntity(const FlavorPolicy& policy, const model::Entity& entity);

// Cosmos's error for a request over the request-unit budget: 429 with the
// service's message; the caller adds x-ms-retry-after-ms.
ApiError RequestRateTooLarge();

}  // namespace tablestone::protocol
