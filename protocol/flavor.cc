#include "protocol/flavor.h"

#include "protocol/request_options.h"
#include "protocol/route.h"
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
  // Learn FAQ, 2020 version: JSON only; a SAS cannot create tables
  // ("management operations"); stored access policies are managed
  // differently. Recorded errors end "\nRequestID:<id>\n".
  p.cosmos_table_names = true;
  p.atom = false;
  p.sas_table_management = false;
  p.stored_access_policies = false;
  p.error_messages = ErrorMessageStyle::kCosmos;
  p.admission_checks = true;
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

ApiError InvalidTableNameCharacter() {
  return ApiError::InvalidInput("The table name contains an invalid character.");
}

// Atom asked for ($format, else Accept) or sent (Content-Type) by a request
// of an Atom-era version; JSON-only versions refuse Atom where they parse
// these (request_options.h), under either flavour.
bool AsksForOrSendsAtom(const AdmissionFacts& facts) {
  if (!IsAtomEraVersion(facts.api_version)) return false;
  auto level = NegotiateMetadata(facts.format, facts.accept, facts.api_version);
  if (level.ok() && *level == MetadataLevel::kAtom) return true;
  if (!facts.content_type) return false;
  const std::string type = model::ToAsciiLower(facts.content_type->substr(0, facts.content_type->find(';')));
  return type.find("atom+xml") != std::string::npos || type.find("/xml") != std::string::npos;
}

// Cosmos DB's table-name rule (see CheckTableName).
std::optional<ApiError> CheckCosmosTableName(std::string_view name, TableNameUse use) {
  size_t characters = 0;
  for (char c : name) characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  const bool bad_length = characters == 0 || characters > 254;
  if (bad_length && use == TableNameUse::kCreate) {
    ApiError error = ApiError::InvalidInput("The input name is invalid.");
    error.code = "BadRequest";
    return error;
  }
  if (!IsValidUtf8(name)) return InvalidTableNameCharacter();
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || c == '#' || c == '?' || c == '(' || u < 0x20 || u == 0x7F) {
      return InvalidTableNameCharacter();
    }
  }
  // Names this server's URLs could not address as a table: the collection,
  // the batch endpoint and the dot segments clients normalise away.
  if (model::EqualsIgnoreCase(name, "Tables") || name == "$batch" || name == "." || name == "..") {
    return InvalidTableNameCharacter();
  }
  if (!name.empty() && name.back() == ' ') return ApiError::InvalidInput("Table name cannot end with a space.");
  return std::nullopt;
}

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

std::optional<ApiError> RefuseRequest(const FlavorPolicy& policy, const AdmissionFacts& facts) {
  if (auto unsupported = RefuseOperation(policy, facts.operation)) return unsupported;
  if (!facts.table.empty()) {
    if (auto bad = CheckTableName(policy, facts.table, TableNameUse::kAddress)) return bad;
  }
  if (!policy.sas_table_management && facts.signed_with_sas &&
      (facts.operation == Operation::kCreateTable || facts.operation == Operation::kDeleteTable)) {
    return ApiError::AuthorizationPermissionMismatch();
  }
  if (!policy.atom && AsksForOrSendsAtom(facts)) return ApiError::AtomFormatNotSupported();
  return std::nullopt;
}

std::optional<ApiError> CheckTableName(const FlavorPolicy& policy, std::string_view name, TableNameUse use) {
  if (policy.cosmos_table_names) return CheckCosmosTableName(name, use);
  if (use == TableNameUse::kAddress) return std::nullopt;
  auto valid = ValidateTableName(name);
  if (!valid.ok()) return valid.error();
  return std::nullopt;
}

bool SameTableName(const FlavorPolicy& policy, std::string_view a, std::string_view b) {
  return policy.table_names_case_sensitive ? a == b : model::EqualsIgnoreCase(a, b);
}

std::string TableNameKey(const FlavorPolicy& policy, std::string_view name) {
  return policy.table_names_case_sensitive ? std::string(name) : model::ToAsciiLower(name);
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
