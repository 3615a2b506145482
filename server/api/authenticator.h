// Authenticator: decides whether a request may run, the way the service does
// (Learn: authorize-with-shared-key): SharedKey, SharedKeyLite, account SAS, service (table) SAS with
// stored access policies. The maths (string-to-sign, HMAC, SAS parsing) lives
// in protocol/auth; this class applies it to a routed request.
#pragma once

#include <functional>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/auth/hmac.h"
#include "protocol/operation.h"
#include "protocol/url.h"
#include "server/api/api_options.h"
#include "storage/model/scan_spec.h"

namespace tablestone::api {

// What the dispatcher knows about a request when it authenticates it.
struct AuthRequest {
  std::string_view method;      // after X-HTTP-Method override resolution is NOT applied: wire verb
  std::string_view raw_path;    // path exactly as on the wire (percent-encoded), no query
  // Query parameters, percent-decoded ('+' as space); names as sent.
  const protocol::QueryParams* query = nullptr;
  // The query exactly as on the wire; `query` is parsed from it (optional:
  // only used to recognize a repeated SAS).
  std::string_view raw_query;
  // Header lookup by case-insensitive name; empty when absent.
  std::function<std::string_view(std::string_view)> header;
  std::string remote_ip;
  bool is_https = false;
  std::string account;          // resolved account (without "-secondary")
  bool secondary = false;       // addressed as <account>-secondary
  protocol::Operation operation = protocol::Operation::kQueryEntities;
  std::string table;            // table addressed (empty for service/Tables ops)
  // For entity point operations: the keys addressed.
  std::optional<model::EntityKey> entity_key;
};

// A stored access policy as saved by Set Table ACL.
struct AccessPolicy {
  std::optional<int64_t> start;   // ticks
  std::optional<int64_t> expiry;  // ticks
  std::string permission;         // subset of "raud"
};

// What a successful authentication allows beyond "yes".
struct AuthGrant {
  enum class Kind { kAnonymous, kSharedKey, kSharedKeyLite, kAccountSas, kServiceSas, kBearer };
  Kind kind = Kind::kSharedKey;
  // Service SAS only: the entity key range the token is limited to. Queries
  // must only return rows inside it and writes outside it are refused (the
  // dispatcher checks each entity with InRange()).
  std::optional<model::KeyBound> sas_start;  // from spk/srk
  std::optional<model::KeyBound> sas_end;    // from epk/erk
  // Service/account SAS permissions (empty for SharedKey = everything).
  std::string permissions;
  // Service SAS only: the lower-cased table name (tn) the token is bound to.
  // $batch is authenticated before its sub-requests are read, so the
  // dispatcher passes each sub-request's table to AuthorizeBatchOperation.
  std::string sas_table;
  bool InRange(std::string_view partition_key, std::string_view row_key) const;
};

class Authenticator {
 public:
  // Looks up a stored access policy `id` of `table` in `account`.
  using PolicyLookup =
      std::function<std::optional<AccessPolicy>(std::string_view account, std::string_view table, std::string_view id)>;

  Authenticator(std::vector<AccountKeys> accounts, bool allow_anonymous, PolicyLookup policies);

  // True if `name` is a configured account (used for host-style resolution).
  bool IsKnownAccount(std::string_view name) const;

  // 403 AuthenticationFailed / Authorization* errors as the service answers.
  protocol::ApiResult<AuthGrant> Authenticate(const AuthRequest& request) const;

  // For one write inside a $batch authorised by SAS: does the grant cover this
  // sub-operation (permission letter and key range)?
  protocol::ApiResult<bool> AuthorizeBatchOperation(const AuthGrant& grant, protocol::Operation op,
                                                    const model::EntityKey& key) const;
  // Same, and for a service SAS also checks that `table` is the token's table
  // (403 AuthorizationFailure otherwise).
  protocol::ApiResult<bool> AuthorizeBatchOperation(const AuthGrant& grant, protocol::Operation op,
                                                    std::string_view table, const model::EntityKey& key) const;

  // --loose: accept, with one warning log per kind (leniency.h), what Azurite
  // accepts and the service refuses (docs/migrating-from-azurite.md): a
  // SharedKey request with neither Date nor x-ms-date (signed over an empty
  // date), a service SAS repeating a field of the stored policy it names (the
  // policy's value wins), an upsert through a SAS granting `u` without `a`, a
  // request whose Authorization header fails but whose SAS is valid (the SAS
  // grants), and with --oauth basic a token for a sovereign cloud's table
  // endpoint. Not thread-safe: call before use.
  void SetLoose(bool loose) { loose_ = loose; }
  // --oauth basic: accept `Authorization: Bearer <JWT>` over HTTPS after the
  // claim checks of protocol/auth/bearer.h (no signature check); a token
  // caller may do everything (no RBAC). Not thread-safe: call before use.
  void SetOAuthBasic(bool enabled) { oauth_basic_ = enabled; }

  // Replaces the clock (ticks, see storage/model/datetime.h) used for the
  // x-ms-date skew check and SAS time windows. Not thread-safe: call before use.
  void SetClockForTesting(std::function<int64_t()> now_ticks);

 private:
  std::vector<AccountKeys> accounts_;
  bool allow_anonymous_;
  bool loose_ = false;
  bool oauth_basic_ = false;
  PolicyLookup policies_;
  // Base64-decoded keys, prepared for HMAC, parallel to accounts_ (undecodable
  // keys are dropped).
  std::vector<std::vector<protocol::auth::HmacKey>> decoded_keys_;
  std::function<int64_t()> now_;
  // Unique per Authenticator object (never reused), keys the SAS cache.
  uint64_t instance_id_ = 0;

  // --loose and an upsert whose refusal was only for a missing 'a' while 'u' is granted.
  bool LooseUpsert(std::string_view permissions, protocol::Operation op) const;
  const std::vector<protocol::auth::HmacKey>* KeysFor(std::string_view account) const;
  protocol::ApiResult<AuthGrant> AuthenticateSharedKey(const AuthRequest& request,
                                                       std::string_view authorization) const;
  protocol::ApiResult<AuthGrant> AuthenticateBearer(const AuthRequest& request, std::string_view token) const;
  protocol::ApiResult<AuthGrant> AuthenticateAccountSas(const AuthRequest& request) const;
  protocol::ApiResult<AuthGrant> AuthenticateServiceSas(const AuthRequest& request) const;
};

}  // namespace tablestone::api
