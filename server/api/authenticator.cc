#include "server/api/authenticator.h"

#include <cstdlib>
#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/auth/admin_signature.h"
#include "protocol/auth/bearer.h"
#include "protocol/auth/hmac.h"
#include "protocol/auth/sas.h"
#include "protocol/auth/shared_key.h"
#include "protocol/base64.h"
#include "server/api/leniency.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

using protocol::ApiError;
using protocol::ApiResult;
using protocol::Operation;
namespace pauth = protocol::auth;

// The service rejects requests whose date is more than 15 minutes off (Learn: authorize-with-shared-key).
constexpr int64_t kMaxClockSkewTicks = 15 * 60 * model::kTicksPerSecond;

std::string_view Header(const AuthRequest& r, std::string_view name) {
  return r.header ? r.header(name) : std::string_view();
}

std::optional<std::string_view> QueryValue(const AuthRequest& r, const char* name) {
  if (r.query == nullptr) return std::nullopt;
  auto it = r.query->find(name);
  if (it == r.query->end()) return std::nullopt;
  return std::string_view(it->second);
}

// True if `signature` equals base64(HMAC(key, string_to_sign)) for any key.
bool AnyKeySigns(const std::vector<pauth::HmacKey>& keys, std::string_view string_to_sign,
                 std::string_view signature) {
  bool match = false;
  // No early exit: the work done does not depend on which key matched.
  for (const pauth::HmacKey& key : keys) {
    match |= pauth::ConstantTimeEquals(key.SignBase64(string_to_sign), signature);
  }
  return match;
}

AuthGrant GrantOf(AuthGrant::Kind kind) {
  AuthGrant grant;
  grant.kind = kind;
  return grant;
}

}  // namespace

bool Authenticator::LooseUpsert(std::string_view permissions, Operation op) const {
  if (!loose_ || (op != Operation::kInsertOrReplaceEntity && op != Operation::kInsertOrMergeEntity)) return false;
  if (permissions.find('u') == std::string_view::npos) return false;
  WarnLeniency(Leniency::kUpsertWithoutAdd);
  return true;
}

bool AuthGrant::InRange(std::string_view partition_key, std::string_view row_key) const {
  return pauth::KeyInSasRange(sas_start, sas_end, partition_key, row_key);
}

Authenticator::Authenticator(std::vector<AccountKeys> accounts, bool allow_anonymous, PolicyLookup policies)
    : accounts_(std::move(accounts)),
      allow_anonymous_(allow_anonymous),
      policies_(std::move(policies)),
      now_(&model::NowTicks) {
  decoded_keys_.reserve(accounts_.size());
  for (const AccountKeys& account : accounts_) {
    std::vector<pauth::HmacKey> keys;
    for (const std::string& key : account.keys) {
      if (auto raw = protocol::Base64Decode(key)) keys.emplace_back(*raw);
    }
    decoded_keys_.push_back(std::move(keys));
  }
}

void Authenticator::SetClockForTesting(std::function<int64_t()> now_ticks) { now_ = std::move(now_ticks); }

bool Authenticator::IsKnownAccount(std::string_view name) const { return KeysFor(name) != nullptr; }

const std::vector<pauth::HmacKey>* Authenticator::KeysFor(std::string_view account) const {
  for (size_t i = 0; i < accounts_.size(); ++i) {
    if (accounts_[i].name == account) return &decoded_keys_[i];
  }
  return nullptr;
}

ApiResult<AuthGrant> Authenticator::Authenticate(const AuthRequest& request) const {
  // CORS preflight carries no credentials by design (Learn:
  // cross-origin-resource-sharing--cors--support-for-the-azure-storage-services).
  if (request.operation == Operation::kPreflight) return GrantOf(AuthGrant::Kind::kAnonymous);

  // Looked for only when needed: a SharedKey request (most requests) never pays for it.
  auto detect_sas = [&] { return request.query != nullptr ? pauth::DetectSas(*request.query) : pauth::SasKind::kNone; };
  std::string_view authorization = Header(request, "authorization");
  if (!authorization.empty()) {
    ApiResult<AuthGrant> by_header = [&] {
      if (oauth_basic_ && pauth::AuthorizationScheme(authorization) == "Bearer") {
        std::string_view token = authorization.substr(authorization.find(' ') + 1);
        while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
        return AuthenticateBearer(request, token);
      }
      return AuthenticateSharedKey(request, authorization);
    }();
    // The Authorization header decides, as on the service; --loose tries a
    // SAS in the query next, as Azurite tries each credential in turn. The
    // header's error stands when the SAS fails too.
    if (by_header.ok() || !loose_) return by_header;
    const pauth::SasKind sas = detect_sas();
    if (sas == pauth::SasKind::kNone) return by_header;
    ApiResult<AuthGrant> by_sas =
        sas == pauth::SasKind::kAccount ? AuthenticateAccountSas(request) : AuthenticateServiceSas(request);
    if (!by_sas.ok()) return by_header;
    WarnLeniency(Leniency::kSasOverFailedAuthorization);
    return by_sas;
  }

  switch (detect_sas()) {
    case pauth::SasKind::kAccount:
      return AuthenticateAccountSas(request);
    case pauth::SasKind::kService:
      return AuthenticateServiceSas(request);
    case pauth::SasKind::kNone:
      break;
  }
  if (allow_anonymous_) return GrantOf(AuthGrant::Kind::kAnonymous);
  // The Table service has no public access. Decision (docs/compatibility-notes/auth.md):
  // 403 AuthenticationFailed, the code real Shared Key failures use.
  return ApiError::AuthenticationFailed("No authentication information was supplied.");
}

ApiResult<AuthGrant> Authenticator::AuthenticateBearer(const AuthRequest& request, std::string_view token) const {
  std::string detail;
  std::string tenant = "common";
  // Every SDK refuses to send a token over plain HTTP; the server refuses it too.
  if (!request.is_https) return ApiError::BearerRefused(pauth::BearerChallenge(tenant));
  const int64_t now_seconds = (now_() - model::kUnixEpochTicks) / model::kTicksPerSecond;
  auto claims = pauth::CheckBearerToken(token, request.account, now_seconds, &detail, &tenant, loose_);
  if (!claims) {
    // Debug, not warn: a refused token is the client's mistake, and a retrying
    // client would fill the log.
    spdlog::debug("bearer token refused for account {}: {}", request.account, detail);
    return ApiError::BearerRefused(pauth::BearerChallenge(tenant), detail);
  }
  if (claims->sovereign_audience) WarnLeniency(Leniency::kSovereignAudience);
  return GrantOf(AuthGrant::Kind::kBearer);
}

ApiResult<AuthGrant> Authenticator::AuthenticateSharedKey(const AuthRequest& request,
                                                          std::string_view authorization) const {
  auto parsed = pauth::ParseSharedKeyAuthorization(authorization);
  if (!parsed) {
    std::string_view scheme = pauth::AuthorizationScheme(authorization);
    if (scheme == "SharedKey" || scheme == "SharedKeyLite") return ApiError::InvalidAuthenticationInfo();
    return ApiError::AuthenticationFailed("Authentication scheme " + std::string(scheme) +
                                          " is not supported.");
  }
  // Clients sign with the primary account name even on the secondary
  // endpoint (docs/compatibility-notes/batch-auth.md); accept "<account>-secondary" in the header too.
  std::string_view signer = parsed->account;
  if (signer != request.account && signer != request.account + "-secondary") {
    return ApiError::AuthenticationFailed("The account " + parsed->account +
                                          " in the Authorization header does not match the request.");
  }
  const std::vector<pauth::HmacKey>* keys = KeysFor(request.account);
  if (keys == nullptr) return ApiError::AuthenticationFailed("The account is not configured.");

  auto signed_date = SignedDate(request.header, /*strict=*/false);
  if (!signed_date.ok()) return signed_date.error();
  const std::string_view date = *signed_date;

  std::optional<std::string_view> comp = QueryValue(request, "comp");
  const std::vector<std::string> paths =
      pauth::CandidatePaths(request.raw_path, request.secondary ? std::string_view(request.account) : "");
  const bool lite = parsed->scheme == pauth::SharedKeyScheme::kSharedKeyLite;
  for (const std::string& path : paths) {
    std::string resource = pauth::CanonicalizedResource(signer, path, comp);
    std::string to_sign = lite ? pauth::SharedKeyLiteStringToSign(date, resource)
                               : pauth::SharedKeyStringToSign(request.method, Header(request, "content-md5"),
                                                              Header(request, "content-type"), date, resource);
    if (AnyKeySigns(*keys, to_sign, parsed->signature)) {
      if (date.empty()) WarnLeniency(Leniency::kNoDate);
      return GrantOf(lite ? AuthGrant::Kind::kSharedKeyLite : AuthGrant::Kind::kSharedKey);
    }
  }
  return ApiError::AuthenticationFailed("The MAC signature found in the HTTP request '" + parsed->signature +
                                        "' is not the same as any computed signature.");
}

ApiResult<std::string_view> Authenticator::SignedDate(const std::function<std::string_view(std::string_view)>& header,
                                                      bool strict) const {
  // x-ms-date wins over Date (Learn: authorize-with-shared-key; Azurite differs).
  std::string_view date = header ? header("x-ms-date") : std::string_view();
  if (date.empty() && header) date = header("date");
  if (date.empty() && (strict || !loose_)) {
    return ApiError::AuthenticationFailed("Request is missing the x-ms-date or Date header.");
  }
  if (date.empty()) {
    // --loose: signed over an empty date, as Azurite checks it; warned on success.
  } else if (auto date_ticks = model::ParseRfc1123(date); !date_ticks) {
    return ApiError::AuthenticationFailed("The x-ms-date or Date header is not a valid date.");
  } else if (std::llabs(now_() - *date_ticks) > kMaxClockSkewTicks) {
    return ApiError::AuthenticationFailed("Request date header too old or too far in the future: '" +
                                          std::string(date) + "'");
  }
  return date;
}

void Authenticator::SetAdminCredentials(const std::string& admin_key, std::string admin_account) {
  admin_key_.clear();
  if (!admin_key.empty()) {
    if (auto raw = protocol::Base64Decode(admin_key)) admin_key_.emplace_back(*raw);
  }
  admin_account_ = std::move(admin_account);
  // The single configured account is the admin unless an admin credential is named.
  if (admin_key.empty() && admin_account_.empty() && accounts_.size() == 1) admin_account_ = accounts_.front().name;
}

ApiResult<AdminGrant> Authenticator::AuthenticateAdmin(const AdminAuthRequest& request) const {
  auto parsed = pauth::ParseSharedKeyAuthorization(request.header ? request.header("authorization") : "");
  if (!parsed || parsed->scheme != pauth::SharedKeyScheme::kSharedKey) {
    return ApiError::AuthenticationFailed("Admin routes need a SharedKey signature (docs/admin-api.md).");
  }
  auto signed_date = SignedDate(request.header, /*strict=*/true);
  if (!signed_date.ok()) return signed_date.error();
  const std::string_view hash = request.header(pauth::kContentSha256Header);
  // 32 bytes in base64: 44 characters.
  if (hash.size() != 44) {
    return ApiError::AuthenticationFailed("Admin routes need x-ms-content-sha256: base64(SHA-256(body)).");
  }
  AdminGrant grant;
  const std::vector<pauth::HmacKey>* keys = nullptr;
  if (parsed->account == pauth::kAdminKeySigner) {
    keys = admin_key_.empty() ? nullptr : &admin_key_;
    grant.admin = true;
  } else {
    keys = KeysFor(parsed->account);
    grant.account = parsed->account;
    grant.admin = !admin_account_.empty() && parsed->account == admin_account_;
  }
  if (keys == nullptr) return ApiError::AuthenticationFailed("The signer is not configured.");
  static const protocol::QueryParams kNoQuery;
  const std::string to_sign = pauth::AdminStringToSign(
      request.method, request.header("content-type"), *signed_date, hash,
      pauth::AdminCanonicalizedResource(parsed->account, request.path,
                                        request.query != nullptr ? *request.query : kNoQuery));
  if (!AnyKeySigns(*keys, to_sign, parsed->signature)) {
    // The MAC is not echoed: admin answers are logged and traced.
    return ApiError::AuthenticationFailed("The signature is not the same as any computed signature.");
  }
  if (request.body && !pauth::ConstantTimeEquals(pauth::ContentSha256Base64(*request.body), hash)) {
    return ApiError::InvalidInput("The body does not match its signed x-ms-content-sha256.");
  }
  return grant;
}

bool Authenticator::SasMemo::Verified(std::string_view string_to_sign, std::string_view signature) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Signature& s : signatures_) {
    if (s.string_to_sign == string_to_sign && pauth::ConstantTimeEquals(s.signature, signature)) return true;
  }
  return false;
}

void Authenticator::SasMemo::NoteVerified(std::string_view string_to_sign, std::string_view signature) {
  std::lock_guard<std::mutex> lock(mu_);
  Signature& slot = signatures_[next_];
  next_ = (next_ + 1) % kSignatures;
  slot.string_to_sign.assign(string_to_sign);
  slot.signature.assign(signature);
}

std::shared_ptr<const Authenticator::SasMemo::VerifiedAccountSas> Authenticator::SasMemo::AccountSasOf(
    std::string_view account, std::string_view raw_query) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (raw_query.empty() || raw_query != raw_query_ || account != account_) return nullptr;
  return account_sas_;
}

void Authenticator::SasMemo::NoteAccountSas(std::string_view account, std::string_view raw_query,
                                            std::shared_ptr<const VerifiedAccountSas> sas) {
  if (raw_query.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  account_.assign(account);
  raw_query_.assign(raw_query);
  account_sas_ = std::move(sas);
}

bool Authenticator::SasSigned(const std::vector<pauth::HmacKey>& keys, std::string_view string_to_sign,
                              std::string_view signature) const {
  if (sas_memo_->Verified(string_to_sign, signature)) return true;
  if (!AnyKeySigns(keys, string_to_sign, signature)) return false;
  sas_memo_->NoteVerified(string_to_sign, signature);
  return true;
}

ApiResult<AuthGrant> Authenticator::AuthenticateAccountSas(const AuthRequest& request) const {
  // The parsed token of an identical query string and account is reused
  // (SasMemo), its times parsed once; the checks below run on every request.
  std::shared_ptr<const SasMemo::VerifiedAccountSas> verified =
      sas_memo_->AccountSasOf(request.account, request.raw_query);
  if (verified == nullptr) {
    auto parsed = pauth::ParseAccountSas(*request.query);
    if (!parsed.ok()) return parsed.error();
    if (!pauth::IsKnownSignedVersion(parsed->sv, pauth::SasKind::kAccount)) {
      return ApiError::AuthenticationFailed("The signed version (sv) is not a version the service knows.");
    }
    const std::vector<pauth::HmacKey>* keys = KeysFor(request.account);
    if (keys == nullptr) return ApiError::AuthenticationFailed("The account is not configured.");
    if (!SasSigned(*keys, pauth::AccountSasStringToSign(*parsed, request.account), parsed->sig)) {
      return ApiError::AuthenticationFailed("Signature did not match.");
    }
    pauth::SasTimeWindow window = pauth::ParseSasTimeWindow(parsed->st, parsed->se);
    verified = std::make_shared<const SasMemo::VerifiedAccountSas>(
        SasMemo::VerifiedAccountSas{std::move(parsed).value(), std::move(window)});
    sas_memo_->NoteAccountSas(request.account, request.raw_query, verified);
  }
  const pauth::AccountSas* sas = &verified->sas;
  if (auto e = pauth::CheckSasTimeWindow(verified->window, now_())) return *e;
  if (!pauth::SasProtocolAllowed(sas->spr, request.is_https)) return ApiError::AuthorizationProtocolMismatch();
  if (!pauth::SasIpAllowed(sas->sip, request.remote_ip)) {
    return ApiError::AuthorizationSourceIPMismatch(request.remote_ip);
  }
  if (auto e = pauth::CheckAccountSasPermission(*sas, request.operation)) {
    if (!LooseUpsert(sas->sp, request.operation)) return *e;
  }
  AuthGrant grant = GrantOf(AuthGrant::Kind::kAccountSas);
  grant.permissions = sas->sp;
  return grant;
}

ApiResult<AuthGrant> Authenticator::AuthenticateServiceSas(const AuthRequest& request) const {
  auto sas = pauth::ParseServiceSas(*request.query);
  if (!sas.ok()) return sas.error();
  if (!pauth::IsKnownSignedVersion(sas->sv, pauth::SasKind::kService)) {
    return ApiError::AuthenticationFailed("The signed version (sv) is not a version the service knows.");
  }
  if (sas->tn.empty()) return ApiError::AuthenticationFailed("The signed table name (tn) is missing.");
  const std::vector<pauth::HmacKey>* keys = KeysFor(request.account);
  if (keys == nullptr) return ApiError::AuthenticationFailed("The account is not configured.");
  if (!SasSigned(*keys, pauth::ServiceSasStringToSign(*sas, request.account), sas->sig)) {
    return ApiError::AuthenticationFailed("Signature did not match.");
  }

  // A stored access policy supplies the fields the URL leaves out; a field
  // defined in both places is an error (Create a service SAS, "si").
  std::string permissions = sas->sp;
  std::string start = sas->st;
  std::string expiry = sas->se;
  if (!sas->si.empty()) {
    std::optional<AccessPolicy> policy;
    if (policies_) policy = policies_(request.account, model::ToAsciiLower(sas->tn), sas->si);
    // Decision (docs/compatibility-notes/batch-auth.md): unknown identifier -> AuthenticationFailed.
    if (!policy) return ApiError::AuthenticationFailed("The signed identifier does not exist.");
    if ((policy->start && !start.empty()) || (policy->expiry && !expiry.empty()) ||
        (!policy->permission.empty() && !permissions.empty())) {
      if (!loose_) {
        return ApiError::AuthenticationFailed("A field is specified both in the SAS and in the stored policy.");
      }
      WarnLeniency(Leniency::kSasRepeatsPolicy);
    }
    if (policy->start) start = model::FormatDateTime7(*policy->start);
    if (policy->expiry) expiry = model::FormatDateTime7(*policy->expiry);
    if (!policy->permission.empty()) permissions = policy->permission;
  }
  if (auto e = pauth::CheckSasTimeWindow(start, expiry, now_())) return *e;
  if (!pauth::SasProtocolAllowed(sas->spr, request.is_https)) return ApiError::AuthorizationProtocolMismatch();
  if (!pauth::SasIpAllowed(sas->sip, request.remote_ip)) {
    return ApiError::AuthorizationSourceIPMismatch(request.remote_ip);
  }
  if (!protocol::IsEntityOperation(request.operation)) return ApiError::AuthorizationFailure();
  if (!request.table.empty() && !protocol::SameTableName(*flavor_, request.table, sas->tn)) {
    return ApiError::AuthorizationFailure();
  }
  if (auto e = pauth::CheckServiceSasPermission(permissions, request.operation)) {
    if (!LooseUpsert(permissions, request.operation)) return *e;
  }

  AuthGrant grant = GrantOf(AuthGrant::Kind::kServiceSas);
  grant.permissions = permissions;
  grant.sas_table = protocol::TableNameKey(*flavor_, sas->tn);
  pauth::SasKeyRange range = pauth::ServiceSasKeyRange(*sas);
  grant.sas_start = std::move(range.start);
  grant.sas_end = std::move(range.end);
  // Decision (exact code undocumented; docs/compatibility-notes/batch-auth.md): a point operation outside
  // the token's key range -> 403 AuthorizationFailure.
  if (request.entity_key && !grant.InRange(request.entity_key->partition_key, request.entity_key->row_key)) {
    return ApiError::AuthorizationFailure();
  }
  return grant;
}

ApiResult<bool> Authenticator::AuthorizeBatchOperation(const AuthGrant& grant, Operation op,
                                                       const model::EntityKey& key) const {
  switch (grant.kind) {
    case AuthGrant::Kind::kAnonymous:
    case AuthGrant::Kind::kSharedKey:
    case AuthGrant::Kind::kSharedKeyLite:
    case AuthGrant::Kind::kBearer:
      return true;
    case AuthGrant::Kind::kAccountSas: {
      pauth::AccountSas sas;
      sas.ss = "t";
      sas.srt = "o";
      sas.sp = grant.permissions;
      if (auto e = pauth::CheckAccountSasPermission(sas, op)) {
        if (!LooseUpsert(grant.permissions, op)) return *e;
      }
      return true;
    }
    case AuthGrant::Kind::kServiceSas:
      if (auto e = pauth::CheckServiceSasPermission(grant.permissions, op)) {
        if (!LooseUpsert(grant.permissions, op)) return *e;
      }
      if (!grant.InRange(key.partition_key, key.row_key)) return ApiError::AuthorizationFailure();
      return true;
  }
  return ApiError::AuthorizationFailure();
}

ApiResult<bool> Authenticator::AuthorizeBatchOperation(const AuthGrant& grant, Operation op, std::string_view table,
                                                       const model::EntityKey& key) const {
  if (grant.kind == AuthGrant::Kind::kServiceSas && protocol::TableNameKey(*flavor_, table) != grant.sas_table) {
    return ApiError::AuthorizationFailure();
  }
  return AuthorizeBatchOperation(grant, op, key);
}

}  // namespace tablestone::api
