// Routing: which account, which resource and which REST operation a request
// addresses (Learn: addressing-table-service-resources, merge-entity). Thread-safe, and the answer depends only
// on the input (a QueryMemo the caller passes changes its cost, never its result).
//
// Errors are the service's: malformed resource paths -> 400 InvalidUri /
// InvalidInput, bad key characters in the URL -> InvalidInput /
// OutOfRangeInput (Learn: understanding-the-table-service-data-model), wrong verb -> 405 MethodNotAllowed,
// X-HTTP-Method misuse -> XMethod* (Learn: merge-entity), DELETE of an entity without
// If-Match -> 400 InvalidInput (Learn: delete-entity1).
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/operation.h"
#include "protocol/url.h"
#include "storage/model/ascii.h"
#include "storage/model/scan_spec.h"

namespace tablestone::protocol {

enum class ResourceKind {
  kServiceRoot,  // "/" (+ restype/comp)
  kTables,       // /Tables, /Tables()
  kTable,        // /Tables('name')
  kEntitySet,    // /name, /name()
  kEntity,       // /name(PartitionKey='..',RowKey='..')
  kBatch,        // /$batch
};

struct Resource {
  ResourceKind kind = ResourceKind::kServiceRoot;
  std::string table;                     // decoded table name (kTable, kEntitySet, kEntity)
  std::optional<model::EntityKey> key;   // kEntity only; decoded, quotes collapsed
};

// Parses the resource part of a path (after the account in path-style), still
// percent-encoded, e.g. "/Tables", "/t(PartitionKey='a',RowKey='b')", "" or "/".
// The segment is percent-decoded first, then the key predicate is parsed with
// quote tracking ('' -> ').
ApiResult<Resource> ParseResource(std::string_view raw_resource_path);

// Checks a URL key (PartitionKey or RowKey value) for the characters the
// service refuses in URLs (Learn: understanding-the-table-service-data-model).
ApiResult<bool> ValidateUrlKey(std::string_view key);

// Table-name rules of Create Table (Learn: understanding-the-table-service-data-model): 3-63 alphanumerics starting
// with a letter, not "tables". InvalidResourceName / OutOfRangeInput.
ApiResult<bool> ValidateTableName(std::string_view name);

struct AccountResolution {
  std::string account;     // without "-secondary"
  bool secondary = false;  // addressed as <account>-secondary
  bool path_style = true;
  std::string root_path;   // service root as sent, with trailing '/': "/devstoreaccount1/" or "/"
  std::string resource_path;  // raw remainder after the account ("" / "/Tables" / ...)
};

// Host-style when the host's first label is a known account (unless
// disable_product_style); path-style for IP literals, "localhost", dot-less
// hosts and unknown first labels (Learn: addressing-table-service-resources, Azurite's rule).
ApiResult<AccountResolution> ResolveAccount(std::string_view host, std::string_view raw_path,
                                            const std::function<bool(std::string_view)>& is_known_account,
                                            bool disable_product_style, std::string_view default_account = {});

// Maps verb + resource to an Operation.
//   x_http_method: every X-HTTP-Method header value sent (usually none).
ApiResult<Operation> ResolveOperation(std::string_view method, const std::vector<std::string_view>& x_http_method,
                                      bool has_if_match, const Resource& resource, const QueryParams& query);

// The last query string ResolveRoute parsed and its parameters, kept by the
// caller (the dispatcher keeps one): a client signing with a SAS sends the
// same query string on every request, and an identical one gets a copy of
// the parameters instead of a parse. Thread-safe.
class QueryMemo {
 public:
  // The parameters of `raw` when it is the query string remembered.
  std::optional<QueryParams> Find(std::string_view raw) const;
  void Remember(std::string_view raw, const QueryParams& parsed);

 private:
  mutable std::mutex mu_;
  std::string raw_;
  QueryParams parsed_;
};

struct RouteInput {
  std::string_view method;
  std::string_view host;
  std::string_view target;  // raw request target: path[?query]
  std::vector<std::string_view> x_http_method;
  bool has_if_match = false;
  std::function<bool(std::string_view)> is_known_account;
  bool disable_product_style = false;
  // Path-style paths whose first segment is not a known account address this
  // account, with the whole path as its resource path (the Cosmos DB
  // emulator's endpoint, http://localhost:8902/, has no account segment).
  // Empty: the first segment is always the account.
  std::string_view default_account;
  QueryMemo* query_memo = nullptr;  // optional
};

struct Route {
  AccountResolution account;
  std::string raw_path;   // path exactly as on the wire
  std::string raw_query;  // query exactly as on the wire (no '?')
  QueryParams query;
  Resource resource;
  Operation operation = Operation::kQueryEntities;
};

// All of the above in order. OPTIONS is always kPreflight (its path is not parsed).
ApiResult<Route> ResolveRoute(const RouteInput& input);

// Case-insensitive ASCII equality (storage/model/ascii.h), under the name the
// protocol and api code has always used.
using model::EqualsIgnoreCase;

}  // namespace tablestone::protocol
