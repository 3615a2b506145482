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
#include "protocol/error_body.h"
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
  // Table-name syntax: storage's (3-63 letters and digits, starting with a
  // letter) or Cosmos DB's (1-254 characters, none of / \ # ?, no trailing
  // space); CheckTableName.
  bool cosmos_table_names = false;
  // Requests of the versions before 2015-12-11 may ask for or send Atom
  // (false: JSON only, 415 AtomFormatNotSupported at admission).
  bool atom = true;
  // A SAS (account or service) may create and delete tables.
  bool sas_table_management = true;
  // A service SAS may name a stored access policy (si=) set by Set Table ACL.
  bool stored_access_policies = true;
  // How an error body's message ends (protocol/error_body.h).
  ErrorMessageStyle error_messages = ErrorMessageStyle::kStorage;
  // RefuseRequest has something to refuse: the dispatcher's one flavour test
  // at admission (false under the storage policy, which refuses nothing there).
  bool admission_checks = false;
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

// What admission knows of a routed, authenticated request.
struct AdmissionFacts {
  Operation operation = Operation::kQueryEntities;
  std::string_view table;  // the table the URL addresses, decoded; empty for none
  bool signed_with_sas = false;
  std::string_view api_version;  // x-ms-version, empty when absent
  const std::string* format = nullptr;  // $format, null when absent
  std::string_view accept;
  std::optional<std::string_view> content_type;
};

// Admission by flavour (Dispatcher::Prepare, only when
// policy.admission_checks): RefuseOperation's 501; a table name in the URL
// CheckTableName refuses; Create/Delete Table under a SAS (403
// AuthorizationPermissionMismatch) when !sas_table_management; Atom asked
// for or sent at an Atom-era version (415 AtomFormatNotSupported) when !atom.
// docs/compatibility.md, "Cosmos DB for Table mode: choices".
std::optional<ApiError> RefuseRequest(const FlavorPolicy& policy, const AdmissionFacts& facts);

// Where a table name comes from: the body of Create Table, or a URL that
// addresses an existing table (entity routes, Delete Table, Get Table, a
// change set's operations).
enum class TableNameUse { kCreate, kAddress };

// The refusal of table name `name` under `policy`, or nullopt.
// Storage: Create Table checks the storage rule (ValidateTableName in
// protocol/route.h: InvalidResourceName / OutOfRangeInput); an addressed name
// is not checked (an unknown one is a 404 later). Cosmos: 1-254 characters,
// none of / \ # ? or a control character, no trailing space; and none the
// URLs cannot address ("Tables", "$batch", ".", "..", a '('). Create Table:
// a bad length is 400 BadRequest "The input name is invalid."; both uses: a
// bad character 400 InvalidInput "The table name contains an invalid
// character.", a trailing space 400 InvalidInput "Table name cannot end with
// a space." (the codes and texts azure-data-tables maps to its Cosmos
// table-name error); an overlong addressed name is not refused (404 later).
std::optional<ApiError> CheckTableName(const FlavorPolicy& policy, std::string_view name, TableNameUse use);

// True when `a` and `b` name the same table under `policy`: exactly under
// Cosmos DB, ASCII case-insensitively under storage.
bool SameTableName(const FlavorPolicy& policy, std::string_view a, std::string_view b);
// The form in which `policy` compares a table name: the name itself, or its
// ASCII lower case under storage.
std::string TableNameKey(const FlavorPolicy& policy, std::string_view name);

// Request parsing: the refusal of an entity about to be written under
// `policy` (RowKey size, reserved property names), or nullopt. The storage
// policy refuses nothing here (the storage rules are checked where they were).
std::optional<ApiError> CheckEntity(const FlavorPolicy& policy, const model::Entity& entity);

// Cosmos's error for a request over the request-unit budget: 429 with the
// service's message; the caller adds x-ms-retry-after-ms.
ApiError RequestRateTooLarge();

}  // namespace tablestone::protocol
