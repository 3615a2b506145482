// Authenticator: decides whether a request may run, the way the service does
// (Learn: authorize-with-shared-key): SharedKey, SharedKeyLite, account SAS, service (table) SAS with
// stored access policies. The maths (string-to-sign, HMAC, SAS parsing) lives
// in protocol/auth; this class applies it to a routed request.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/auth/hmac.h"
#include "protocol/auth/sas.h"
#include "protocol/flavor.h"
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
  // Service SAS only: the table name (tn) the token is bound to, in the form
  // the flavour compares names (protocol::TableNameKey: lower-cased under storage).
  // $batch is authenticated before its sub-requests are read, so the
  // dispatcher passes each sub-request's table to AuthorizeBatchOperation.
  std::string sas_table;
  bool InRange(std::string_view partition_key, std::string_view row_key) const;
};

// A request to an admin route (/_tablestone/..., docs/admin-api.md).
struct AdminAuthRequest {
  std::string_view method;
  std::string_view path;  // as on the wire, no query
  const protocol::QueryParams* query = nullptr;  // decoded; null = none
  // Header lookup by case-insensitive name; empty when absent.
  std::function<std::string_view(std::string_view)> header;
  // The body once it has arrived: its hash must match the signed
  // x-ms-content-sha256. nullopt when only the headers are known (the
  // signature is then checked, the body later).
  std::optional<std::string_view> body;
};

// Who signed an admin request (docs/admin-api.md, "Who may do what").
struct AdminGrant {
  std::string account;  // the signing account; empty when signed with the admin key
  bool admin = false;   // may run server-wide operations and act on every account
  // True when the signer may act on `account`'s data.
  bool Covers(std::string_view target) const { return admin || target == account; }
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
  // The listener's flavour, which outlives this object: how a service SAS's
  // table (tn) is compared with the table addressed (protocol::SameTableName).
  void SetFlavor(const protocol::FlavorPolicy* flavor) { flavor_ = flavor; }
  // --oauth basic: accept `Authorization: Bearer <JWT>` over HTTPS after the
  // claim checks of protocol/auth/bearer.h (no signature check); a token
  // caller may do everything (no RBAC). Not thread-safe: call before use.
  void SetOAuthBasic(bool enabled) { oauth_basic_ = enabled; }

  // The admin credential (docs/admin-api.md, "Who may do what"): the base64
  // --adminKey (signs as protocol::auth::kAdminKeySigner) and/or the
  // --adminAccount whose keys are admin. With neither, and exactly one
  // configured account, that account is the admin. Not thread-safe: call
  // before use.
  void SetAdminCredentials(const std::string& admin_key, std::string admin_account);

  // Shared Key over the admin string-to-sign (protocol/auth/admin_signature.h):
  // the same Authorization grammar, date header and clock skew as the Table
  // API, plus the query string and the body's SHA-256. 403
  // AuthenticationFailed when it does not verify; 400 InvalidInput when the
  // body does not match its signed hash.
  protocol::ApiResult<AdminGrant> AuthenticateAdmin(const AdminAuthRequest& request) const;

  // Replaces the clock (ticks, see storage/model/datetime.h) used for the
  // x-ms-date skew check and SAS time windows. Not thread-safe: call before use.
  void SetClockForTesting(std::function<int64_t()> now_ticks);

 private:
  std::vector<AccountKeys> accounts_;
  bool allow_anonymous_;
  bool loose_ = false;
  const protocol::FlavorPolicy* flavor_ = &protocol::StoragePolicy();
  bool oauth_basic_ = false;
  PolicyLookup policies_;
  // Base64-decoded keys, prepared for HMAC, parallel to accounts_ (undecodable
  // keys are dropped).
  std::vector<std::vector<protocol::auth::HmacKey>> decoded_keys_;
  std::function<int64_t()> now_;
  std::vector<protocol::auth::HmacKey> admin_key_;  // zero or one
  std::string admin_account_;                       // whose keys are admin; may be empty

  // SAS tokens this Authenticator verified: a client sends the same token with
  // every request (the SDKs reuse it), and re-deriving its HMAC, or re-parsing
  // an account SAS, each time is repeated work. A hit is exactly as valid as
  // recomputing: keys never change during an Authenticator's life, and what
  // depends on more than the token (time window, protocol, IP, permission) is
  // checked on every request. Only successes are remembered; signatures are
  // compared in constant time. Shared by the I/O threads under its own lock.
  class SasMemo {
   public:
    // True if `signature` was verified for `string_to_sign`.
    bool Verified(std::string_view string_to_sign, std::string_view signature) const;
    void NoteVerified(std::string_view string_to_sign, std::string_view signature);
    // An account SAS whose signature checked out, with its times parsed once.
    struct VerifiedAccountSas {
      protocol::auth::AccountSas sas;
      protocol::auth::SasTimeWindow window;
    };
    // The account SAS verified for exactly this account and query string, or null.
    std::shared_ptr<const VerifiedAccountSas> AccountSasOf(std::string_view account, std::string_view raw_query) const;
    void NoteAccountSas(std::string_view account, std::string_view raw_query,
                        std::shared_ptr<const VerifiedAccountSas> sas);

   private:
    struct Signature {
      std::string string_to_sign;
      std::string signature;
    };
    static constexpr size_t kSignatures = 8;
    mutable std::mutex mu_;
    std::array<Signature, kSignatures> signatures_;  // round robin
    size_t next_ = 0;
    std::string account_;
    std::string raw_query_;
    std::shared_ptr<const VerifiedAccountSas> account_sas_;
  };
  std::unique_ptr<SasMemo> sas_memo_ = std::make_unique<SasMemo>();

  // --loose and an upsert whose refusal was only for a missing 'a' while 'u' is granted.
  bool LooseUpsert(std::string_view permissions, protocol::Operation op) const;
  const std::vector<protocol::auth::HmacKey>* KeysFor(std::string_view account) const;
  protocol::ApiResult<AuthGrant> AuthenticateSharedKey(const AuthRequest& request,
                                                       std::string_view authorization) const;
  // Checks the Date/x-ms-date header against the clock (no --loose leniency
  // when `strict`); the date to sign, or the refusal.
  protocol::ApiResult<std::string_view> SignedDate(const std::function<std::string_view(std::string_view)>& header,
                                                   bool strict) const;
  protocol::ApiResult<AuthGrant> AuthenticateBearer(const AuthRequest& request, std::string_view token) const;
  protocol::ApiResult<AuthGrant> AuthenticateAccountSas(const AuthRequest& request) const;
  protocol::ApiResult<AuthGrant> AuthenticateServiceSas(const AuthRequest& request) const;
  // SAS signature check through sas_memo_.
  bool SasSigned(const std::vector<protocol::auth::HmacKey>& keys, std::string_view string_to_sign,
                 std::string_view signature) const;
};

}  // namespace tablestone::api
