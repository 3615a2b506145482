#include "protocol/route.h"

#include <cctype>

#include "storage/model/limits.h"

namespace tablestone::protocol {
namespace {

constexpr std::string_view kSecondarySuffix = "-secondary";

ApiError QuerySyntaxError() { return ApiError::InvalidInput("Bad Request - Error in query syntax."); }

bool IsIpLiteral(std::string_view host) {
  if (!host.empty() && host.front() == '[') return true;  // IPv6
  if (host.empty()) return false;
  for (char c : host) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return false;
  }
  return true;
}

std::string_view StripPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

void SplitSecondary(std::string_view name, std::string* account, bool* secondary) {
  if (name.size() > kSecondarySuffix.size() &&
      EqualsIgnoreCase(name.substr(name.size() - kSecondarySuffix.size()), kSecondarySuffix)) {
    *account = std::string(name.substr(0, name.size() - kSecondarySuffix.size()));
    *secondary = true;
  } else {
    *account = std::string(name);
    *secondary = false;
  }
}

// Reads a quoted OData string starting at text[pos] == '\''. Collapses ''.
bool ReadQuoted(std::string_view text, size_t& pos, std::string* out) {
  if (pos >= text.size() || text[pos] != '\'') return false;
  ++pos;
  out->clear();
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '\'') {
      if (pos + 1 < text.size() && text[pos + 1] == '\'') {
        *out += '\'';
        pos += 2;
        continue;
      }
      ++pos;
      return true;
    }
    *out += c;
    ++pos;
  }
  return false;
}

// "PartitionKey='a',RowKey='b'" (either order).
ApiResult<model::EntityKey> ParseKeyPredicate(std::string_view text) {
  std::optional<std::string> pk, rk;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos) return QuerySyntaxError();
    std::string_view name = text.substr(pos, eq - pos);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    pos = eq + 1;
    while (pos < text.size() && text[pos] == ' ') ++pos;
    std::string value;
    if (!ReadQuoted(text, pos, &value)) return QuerySyntaxError();
    while (pos < text.size() && text[pos] == ' ') ++pos;
    std::optional<std::string>* slot = nullptr;
    if (name == "PartitionKey") slot = &pk;
    if (name == "RowKey") slot = &rk;
    if (slot == nullptr || slot->has_value()) return QuerySyntaxError();
    *slot = std::move(value);
    if (pos == text.size()) break;
    if (text[pos] != ',') return QuerySyntaxError();
    ++pos;
  }
  if (!pk || !rk) return QuerySyntaxError();
  return model::EntityKey{std::move(*pk), std::move(*rk)};
}

// Python (azure-data-tables 12.x) sends secondary-location requests on a
// path-style endpoint by swapping the netloc for "<host>/<acct>-secondary"
// while keeping the primary path, so the wire path is
// "/<acct>-secondary/<acct>/<resource>" (e.g. get_service_stats:
// "/devstoreaccount1-secondary/devstoreaccount1/?restype=service&comp=stats").
// Treat the repeated account segment as part of the service root. It is only
// ever the same account, so this cannot reach another account's data. The
// bare "/<acct>-secondary/<acct>/" without restype stays the entity set
// "<acct>" (a legal table name), which is what it means on the primary.
void StripRepeatedSecondaryAccount(AccountResolution* account, const QueryParams& query) {
  if (!account->secondary || !account->path_style) return;
  std::string_view rest = account->resource_path;
  if (rest.size() < 2 || rest.front() != '/') return;
  size_t slash = rest.find('/', 1);
  if (slash == std::string_view::npos) return;
  std::string_view segment = rest.substr(1, slash - 1);
  auto decoded = PercentDecodePath(segment);
  if (!decoded || *decoded != account->account) return;
  std::string_view after = rest.substr(slash);  // starts with '/'
  if (after.size() == 1 && FindQueryParam(query, "restype") == nullptr) return;
  account->root_path += std::string(segment) + "/";
  account->resource_path = std::string(after);
}

}  // namespace

ApiResult<bool> ValidateUrlKey(std::string_view key) {
  if (!IsValidUtf8(key)) return ApiError::InvalidInput();
  for (size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    // Learn: understanding-the-table-service-data-model: '/' and '\' are query-syntax errors; '#', '?', control
    // characters and C1 controls (U+0080..U+009F = C2 80..C2 9F) are out of range.
    if (c == '/' || c == '\\') return QuerySyntaxError();
    if (c == '#' || c == '?' || c < 0x20 || c == 0x7F) return ApiError::OutOfRangeInput();
    if (c == 0xC2 && i + 1 < key.size()) {
      unsigned char n = static_cast<unsigned char>(key[i + 1]);
      if (n >= 0x80 && n <= 0x9F) return ApiError::OutOfRangeInput();
    }
  }
  return true;
}

ApiResult<bool> ValidateTableName(std::string_view name) {
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return ApiError::InvalidResourceName();
  }
  if (name.size() < model::kMinTableNameLength || name.size() > model::kMaxTableNameLength) {
    return ApiError::TableNameLengthOutOfRange();
  }
  if (!std::isalpha(static_cast<unsigned char>(name[0]))) return ApiError::InvalidResourceName();
  if (EqualsIgnoreCase(name, "tables")) return ApiError::InvalidResourceName();
  return true;
}

ApiResult<Resource> ParseResource(std::string_view raw) {
  Resource r;
  while (!raw.empty() && raw.front() == '/') raw.remove_prefix(1);
  if (raw.empty()) return r;  // service root
  // Accept one trailing slash ("/t/" as "/t", Learn: addressing-table-service-resources).
  if (raw.back() == '/') raw.remove_suffix(1);
  auto decoded_opt = PercentDecodePath(raw);
  if (!decoded_opt) return ApiError::InvalidUri();
  std::string_view seg = *decoded_opt;
  if (seg == "$batch") {
    r.kind = ResourceKind::kBatch;
    return r;
  }
  size_t open = seg.find('(');
  std::string_view name = seg.substr(0, open);
  if (name.empty() || name.find('/') != std::string_view::npos) return ApiError::InvalidUri();
  bool is_tables = EqualsIgnoreCase(name, "Tables");
  if (open == std::string_view::npos) {
    r.kind = is_tables ? ResourceKind::kTables : ResourceKind::kEntitySet;
    if (!is_tables) r.table = std::string(name);
    return r;
  }
  if (seg.back() != ')') return QuerySyntaxError();
  std::string_view inside = seg.substr(open + 1, seg.size() - open - 2);
  if (is_tables) {
    if (inside.empty()) {
      r.kind = ResourceKind::kTables;
      return r;
    }
    size_t pos = 0;
    std::string table;
    if (!ReadQuoted(inside, pos, &table) || pos != inside.size()) return QuerySyntaxError();
    r.kind = ResourceKind::kTable;
    r.table = std::move(table);
    return r;
  }
  r.table = std::string(name);
  if (inside.empty()) {
    r.kind = ResourceKind::kEntitySet;
    return r;
  }
  auto key = ParseKeyPredicate(inside);
  if (!key.ok()) return key.error();
  for (const std::string* k : {&key->partition_key, &key->row_key}) {
    auto valid = ValidateUrlKey(*k);
    if (!valid.ok()) return valid.error();
  }
  r.kind = ResourceKind::kEntity;
  r.key = std::move(key).value();
  return r;
}

ApiResult<AccountResolution> ResolveAccount(std::string_view host_header, std::string_view raw_path,
                                            const std::function<bool(std::string_view)>& is_known_account,
                                            bool disable_product_style, std::string_view default_account) {
  AccountResolution out;
  std::string_view host = StripPort(host_header);
  bool try_host_style = !disable_product_style && !host.empty() && !IsIpLiteral(host) &&
                        !EqualsIgnoreCase(host, "localhost") && host.find('.') != std::string_view::npos &&
                        !EqualsIgnoreCase(host, "host.docker.internal");
  if (try_host_style) {
    std::string_view label = host.substr(0, host.find('.'));
    std::string account;
    bool secondary = false;
    SplitSecondary(label, &account, &secondary);
    if (is_known_account && is_known_account(account)) {
      out.account = std::move(account);
      out.secondary = secondary;
      out.path_style = false;
      out.root_path = "/";
      out.resource_path = std::string(raw_path);
      return out;
    }
  }
  // Path-style: the first path segment is the account.
  std::string_view rest = raw_path;
  if (rest.empty() || rest.front() != '/') return ApiError::InvalidUri();
  rest.remove_prefix(1);
  size_t slash = rest.find('/');
  std::string_view segment = rest.substr(0, slash);
  auto decoded = PercentDecodePath(segment);
  if (!default_account.empty()) {
    std::string named;
    bool secondary = false;
    if (decoded) SplitSecondary(*decoded, &named, &secondary);
    if (segment.empty() || !decoded || !is_known_account || !is_known_account(named)) {
      out.account = std::string(default_account);
      out.path_style = false;
      out.root_path = "/";
      out.resource_path = std::string(raw_path);
      return out;
    }
  }
  if (segment.empty()) return ApiError::InvalidUri();
  if (!decoded) return ApiError::InvalidUri();
  SplitSecondary(*decoded, &out.account, &out.secondary);
  out.path_style = true;
  // Sized once: the concatenation of temporaries was three allocations per request.
  out.root_path.reserve(segment.size() + 2);
  out.root_path.append("/").append(segment).append("/");
  out.resource_path = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash));
  return out;
}

ApiResult<Operation> ResolveOperation(std::string_view wire_method, const std::vector<std::string_view>& x_method,
                                      bool has_if_match, const Resource& resource, const QueryParams& query) {
  std::string method(wire_method);
  for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (method == "OPTIONS") return Operation::kPreflight;
  if (x_method.size() > 1) return ApiError::XMethodIncorrectCount();
  if (x_method.size() == 1) {
    if (method != "POST") return ApiError::XMethodNotUsingPost();
    std::string value(x_method[0]);
    for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    // PATCH is accepted too, as Azurite does (Learn: merge-entity).
    if (value != "MERGE" && value != "PUT" && value != "DELETE" && value != "GET" && value != "PATCH") {
      return ApiError::XMethodIncorrectValue();
    }
    method = value;
  }
  if (method == "PATCH") method = "MERGE";

  const std::string* comp = FindQueryParam(query, "comp");
  const std::string* restype = FindQueryParam(query, "restype");
  switch (resource.kind) {
    case ResourceKind::kServiceRoot: {
      if (restype == nullptr && comp == nullptr) return ApiError::InvalidUri();
      if (restype == nullptr || *restype != "service" || comp == nullptr) {
        return ApiError::InvalidQueryParameterValue();
      }
      if (*comp == "properties") {
        if (method == "GET") return Operation::kGetServiceProperties;
        if (method == "PUT") return Operation::kSetServiceProperties;
        return ApiError::MethodNotAllowed();
      }
      if (*comp == "stats") {
        if (method == "GET") return Operation::kGetServiceStats;
        return ApiError::MethodNotAllowed();
      }
      return ApiError::InvalidQueryParameterValue();
    }
    case ResourceKind::kTables:
      if (method == "GET") return Operation::kQueryTables;
      if (method == "POST") return Operation::kCreateTable;
      return ApiError::MethodNotAllowed();
    case ResourceKind::kTable:
      if (method == "GET") return Operation::kGetTable;
      if (method == "DELETE") return Operation::kDeleteTable;
      return ApiError::MethodNotAllowed();
    case ResourceKind::kEntitySet:
      if (comp != nullptr) {
        if (*comp != "acl") return ApiError::InvalidQueryParameterValue();
        if (method == "GET") return Operation::kGetTableAcl;
        if (method == "PUT") return Operation::kSetTableAcl;
        return ApiError::MethodNotAllowed();
      }
      if (method == "GET") return Operation::kQueryEntities;
      if (method == "POST") return Operation::kInsertEntity;
      return ApiError::MethodNotAllowed();
    case ResourceKind::kEntity:
      if (method == "GET") return Operation::kGetEntity;
      if (method == "PUT") return has_if_match ? Operation::kUpdateEntity : Operation::kInsertOrReplaceEntity;
      if (method == "MERGE") return has_if_match ? Operation::kMergeEntity : Operation::kInsertOrMergeEntity;
      if (method == "DELETE") {
        // Learn: delete-entity1: If-Match is required; the service answers 400.
        if (!has_if_match) return ApiError::InvalidInput();
        return Operation::kDeleteEntity;
      }
      return ApiError::MethodNotAllowed();
    case ResourceKind::kBatch:
      if (method == "POST") return Operation::kBatch;
      return ApiError::MethodNotAllowed();
  }
  return ApiError::InvalidUri();
}

std::optional<QueryParams> QueryMemo::Find(std::string_view raw) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (raw != raw_) return std::nullopt;
  return parsed_;
}

void QueryMemo::Remember(std::string_view raw, const QueryParams& parsed) {
  std::lock_guard<std::mutex> lock(mu_);
  raw_.assign(raw);
  parsed_ = parsed;
}

ApiResult<Route> ResolveRoute(const RouteInput& in) {
  Route route;
  std::string_view target = in.target;
  std::string_view host = in.host;
  // Absolute form (RFC 9112, section 3.2.2), sent by clients of the AtomPub
  // era: served when it names this endpoint, i.e. the authority the client
  // also put in Host; the path and query then route (and sign) as in origin
  // form. Another authority is a proxy request this server does not make.
  std::optional<AbsoluteTarget> absolute;
  if (!target.empty() && target.front() != '/') {
    absolute = ParseAbsoluteTarget(target);
    if (!absolute) return ApiError::InvalidUri();
    if (host.empty()) {
      host = absolute->authority;
    } else if (!SameAuthority(absolute->scheme, absolute->authority, host)) {
      return ApiError::InvalidUri();
    }
    target = absolute->origin_form;
  }
  std::string_view path, query;
  SplitTarget(target, &path, &query);
  route.raw_path = std::string(path);
  route.raw_query = std::string(query);
  std::optional<QueryParams> remembered;
  if (in.query_memo != nullptr && !query.empty()) remembered = in.query_memo->Find(query);
  if (remembered) {
    route.query = std::move(*remembered);
  } else {
    auto params = ParseQueryString(query);
    if (!params) return ApiError::InvalidUri();
    route.query = std::move(*params);
    if (in.query_memo != nullptr && !query.empty()) in.query_memo->Remember(query, route.query);
  }
  auto account = ResolveAccount(host, path, in.is_known_account, in.disable_product_style, in.default_account);
  if (!account.ok()) return account.error();
  route.account = std::move(account).value();
  StripRepeatedSecondaryAccount(&route.account, route.query);
  if (EqualsIgnoreCase(in.method, "OPTIONS")) {
    route.operation = Operation::kPreflight;
    return route;
  }
  auto resource = ParseResource(route.account.resource_path);
  if (!resource.ok()) return resource.error();
  route.resource = std::move(resource).value();
  auto op = ResolveOperation(in.method, in.x_http_method, in.has_if_match, route.resource, route.query);
  if (!op.ok()) return op.error();
  route.operation = *op;
  return route;
}

}  // namespace tablestone::protocol
