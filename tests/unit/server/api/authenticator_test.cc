// Authenticator tests. The Shared Key cases replay requests captured from the
// real SDKs (azure-data-tables 12.4.2, @azure/data-tables 13.1.2) with the
// clock pinned to the capture time; the SAS cases use SDK-generated tokens.
#include "server/api/authenticator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "protocol/auth/hmac.h"
#include "protocol/auth/sas.h"
#include "protocol/auth/shared_key.h"
#include "protocol/base64.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

using protocol::Operation;

constexpr const char* kDevKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
// Another valid 64-byte key (base64 of bytes 0..63).
constexpr const char* kOtherKey =
    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==";

int64_t Rfc1123(const char* s) { return *model::ParseRfc1123(s); }
int64_t Iso(const char* s) { return *model::ParseIsoDateTime(s); }

// A request under construction: owns the storage AuthRequest points into.
struct TestRequest {
  std::string method = "GET";
  std::string raw_path;
  protocol::QueryParams query;
  std::string raw_query;  // what `query` was parsed from, when a test sets it
  std::map<std::string, std::string> headers;  // lower-case names
  AuthRequest Build(Operation op, std::string table = {}) const {
    AuthRequest r;
    r.method = method;
    r.raw_path = raw_path;
    r.query = &query;
    r.raw_query = raw_query;
    r.header = [this](std::string_view name) -> std::string_view {
      auto it = headers.find(std::string(name));
      return it == headers.end() ? std::string_view() : std::string_view(it->second);
    };
    r.remote_ip = "127.0.0.1";
    r.account = "devstoreaccount1";
    r.operation = op;
    r.table = std::move(table);
    return r;
  }
};

class AuthenticatorTest : public ::testing::Test {
 protected:
  AuthenticatorTest()
      : auth_({{"devstoreaccount1", {kOtherKey, kDevKey}}}, /*allow_anonymous=*/false,
              [this](std::string_view account, std::string_view table, std::string_view id)
                  -> std::optional<AccessPolicy> {
                auto it = policies_.find(std::string(account) + "/" + std::string(table) + "/" + std::string(id));
                if (it == policies_.end()) return std::nullopt;
                return it->second;
              }) {}
  void SetNow(int64_t ticks) {
    auth_.SetClockForTesting([ticks] { return ticks; });
  }

  std::map<std::string, AccessPolicy> policies_;
  Authenticator auth_;
};

void ExpectError(const protocol::ApiResult<AuthGrant>& r, int status, const char* code) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, status);
  EXPECT_EQ(r.error().code, code);
}

TestRequest PythonBatch() {
  TestRequest t;
  t.method = "POST";
  t.raw_path = "/devstoreaccount1/$batch";
  t.headers = {{"content-type", "multipart/mixed; boundary=batch_70227991-ce88-4ef7-be5a-5b9917e3b2f8"},
               {"x-ms-date", "Sat, 21 Nov 2026 10:59:00 GMT"},
               {"date", "Sat, 21 Nov 2026 10:59:00 GMT"},
               {"authorization", "SharedKey devstoreaccount1:jiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE="}};
  return t;
}

TEST_F(AuthenticatorTest, AcceptsPythonSharedKeyCapture) {
  SetNow(Rfc1123("Sat, 21 Nov 2026 11:00:00 GMT"));
  auto r = auth_.Authenticate(PythonBatch().Build(Operation::kBatch));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind, AuthGrant::Kind::kSharedKey);
  EXPECT_TRUE(r->InRange("any", "key"));
}

TEST_F(AuthenticatorTest, AcceptsJsSharedKeyLiteCaptureWithRawPath) {
  SetNow(Rfc1123("Sat, 21 Nov 2026 11:02:03 GMT"));
  TestRequest t;
  t.raw_path = "/devstoreaccount1/MyTable(PartitionKey='p%20k',RowKey='r''k%C3%A9%2Fx')";
  t.headers = {{"x-ms-date", "Sat, 21 Nov 2026 11:02:03 GMT"},
               {"authorization", "SharedKeyLite devstoreaccount1:/sC92dvtcJQToNqfjaycqm7SarYcY2nPg6R9xlcx7Bo="}};
  auto r = auth_.Authenticate(t.Build(Operation::kGetEntity, "MyTable"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind, AuthGrant::Kind::kSharedKeyLite);
}

TEST_F(AuthenticatorTest, AcceptsPythonSecondaryStatsCapture) {
  SetNow(Rfc1123("Sat, 21 Nov 2026 11:01:56 GMT"));
  TestRequest t;
  t.raw_path = "/devstoreaccount1-secondary/devstoreaccount1/";
  t.query = {{"restype", "service"}, {"comp", "stats"}};
  t.headers = {{"x-ms-date", "Sat, 21 Nov 2026 11:01:56 GMT"},
               {"authorization", "SharedKey devstoreaccount1:lqFNf47ImONMbsmJDSZtRtz9czeU5awRw7Wywnkxl1s="}};
  AuthRequest req = t.Build(Operation::kGetServiceStats);
  req.secondary = true;
  EXPECT_TRUE(auth_.Authenticate(req).ok());
  // Without the secondary flag the path variants are not offered.
  req.secondary = false;
  ExpectError(auth_.Authenticate(req), 403, "AuthenticationFailed");
}

TEST_F(AuthenticatorTest, AcceptsDecodedPathSignatureForEncodedWirePath) {
  SetNow(Rfc1123("Mon, 01 Jan 2024 00:00:00 GMT"));
  const std::string date = "Mon, 01 Jan 2024 00:00:00 GMT";
  const std::string key = *protocol::Base64Decode(kDevKey);
  // The client signed the decoded form; the wire carries the encoded one.
  std::string sig = protocol::auth::SignBase64(
      key, protocol::auth::SharedKeyLiteStringToSign(
               date, "/devstoreaccount1/devstoreaccount1/t(PartitionKey='a b',RowKey='c')"));
  TestRequest t;
  t.raw_path = "/devstoreaccount1/t(PartitionKey='a%20b',RowKey='c')";
  t.headers = {{"x-ms-date", date}, {"authorization", "SharedKeyLite devstoreaccount1:" + sig}};
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kGetEntity, "t")).ok());
}

TEST_F(AuthenticatorTest, RejectsBadSharedKeyRequests) {
  SetNow(Rfc1123("Sat, 21 Nov 2026 11:00:00 GMT"));
  TestRequest t = PythonBatch();
  // Tampered signature.
  t.headers["authorization"] = "SharedKey devstoreaccount1:AiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE=";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  // A signed header changed (Content-Type is in the string to sign).
  t = PythonBatch();
  t.headers["content-type"] = "multipart/mixed; boundary=batch_other";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  // Other verb.
  t = PythonBatch();
  t.method = "PUT";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  // Another account name in the header.
  t = PythonBatch();
  t.headers["authorization"] = "SharedKey otheraccount:jiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE=";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  // Malformed credential.
  t.headers["authorization"] = "SharedKey devstoreaccount1";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 400, "InvalidAuthenticationInfo");
  // Unsupported scheme.
  t.headers["authorization"] = "Bearer eyJ0eXAiOiJKV1QifQ";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
}

TEST_F(AuthenticatorTest, DateRules) {
  TestRequest t = PythonBatch();
  // More than 15 minutes off, either way.
  SetNow(Rfc1123("Sat, 21 Nov 2026 11:15:01 GMT"));
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  SetNow(Rfc1123("Sat, 21 Nov 2026 10:43:59 GMT"));
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  SetNow(Rfc1123("Sat, 21 Nov 2026 11:14:00 GMT"));
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kBatch)).ok());
  // x-ms-date wins over Date: a different Date header is ignored...
  t.headers["date"] = "Sun, 22 Nov 2026 10:59:00 GMT";
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kBatch)).ok());
  // ...and Date is used when x-ms-date is absent.
  t.headers.erase("x-ms-date");
  t.headers["date"] = "Sat, 21 Nov 2026 10:59:00 GMT";
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kBatch)).ok());
  t.headers.erase("date");
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
  t.headers["x-ms-date"] = "yesterday";
  ExpectError(auth_.Authenticate(t.Build(Operation::kBatch)), 403, "AuthenticationFailed");
}

TEST_F(AuthenticatorTest, EitherKeySigns) {
  SetNow(Rfc1123("Mon, 01 Jan 2024 00:00:00 GMT"));
  const std::string date = "Mon, 01 Jan 2024 00:00:00 GMT";
  for (const char* key64 : {kDevKey, kOtherKey}) {
    std::string sig = protocol::auth::SignBase64(
        *protocol::Base64Decode(key64),
        protocol::auth::SharedKeyLiteStringToSign(date, "/devstoreaccount1/devstoreaccount1/Tables"));
    TestRequest t;
    t.raw_path = "/devstoreaccount1/Tables";
    t.headers = {{"x-ms-date", date}, {"authorization", "SharedKeyLite devstoreaccount1:" + sig}};
    EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok()) << key64;
  }
}

TEST_F(AuthenticatorTest, AnonymousAndPreflight) {
  TestRequest t;
  t.raw_path = "/devstoreaccount1/Tables";
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  auto pre = auth_.Authenticate(t.Build(Operation::kPreflight));
  ASSERT_TRUE(pre.ok());
  EXPECT_EQ(pre->kind, AuthGrant::Kind::kAnonymous);

  Authenticator open({{"devstoreaccount1", {kDevKey}}}, /*allow_anonymous=*/true, nullptr);
  auto r = open.Authenticate(t.Build(Operation::kQueryTables));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, AuthGrant::Kind::kAnonymous);
  // A credential that is present is still checked.
  t.headers = {{"authorization", "SharedKey devstoreaccount1:bad"}, {"x-ms-date", "Mon, 01 Jan 2024 00:00:00 GMT"}};
  EXPECT_FALSE(open.Authenticate(t.Build(Operation::kQueryTables)).ok());
  EXPECT_TRUE(open.IsKnownAccount("devstoreaccount1"));
  EXPECT_FALSE(open.IsKnownAccount("devstoreaccount2"));
}

// Python generate_account_sas (srt=so, sp=rwdlacu, 2021-06-09..2031-06-09).
TestRequest PythonAccountSas() {
  TestRequest t;
  t.raw_path = "/devstoreaccount1/Tables";
  t.query = {{"st", "2021-06-09T01:17:08Z"}, {"se", "2031-06-09T01:17:08Z"}, {"sp", "rwdlacu"},
             {"sv", "2019-02-02"}, {"ss", "t"}, {"srt", "so"},
             {"sig", "L2PbQhN1tAiqlOTfIUBu0Xe7s79+ZB0OMVjxplKSNCw="}};
  return t;
}

TEST_F(AuthenticatorTest, AccountSas) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  TestRequest t = PythonAccountSas();
  auto r = auth_.Authenticate(t.Build(Operation::kQueryTables));
  ASSERT_TRUE(r.ok()) << r.error().code;
  EXPECT_EQ(r->kind, AuthGrant::Kind::kAccountSas);
  EXPECT_EQ(r->permissions, "rwdlacu");
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kInsertOrMergeEntity, "t")).ok());
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kSetServiceProperties)).ok());
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kCreateTable)).ok());
  ExpectError(auth_.Authenticate(t.Build(Operation::kGetTableAcl, "t")), 403, "AuthorizationFailure");
  ExpectError(auth_.Authenticate(t.Build(Operation::kSetTableAcl, "t")), 403, "AuthorizationFailure");

  SetNow(Iso("2032-01-01T00:00:00Z"));
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  SetNow(Iso("2020-01-01T00:00:00Z"));
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");

  SetNow(Iso("2024-01-01T00:00:00Z"));
  t.query.find("sp")->second = "rwdlac";  // changes the string to sign
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
}

// Issue 36: the Authorization header decides, as on the service; --loose lets a valid SAS in the
// query authorize a request whose header fails (Azurite tries each credential in turn).
TEST_F(AuthenticatorTest, LooseSasBesideAFailingAuthorizationHeader) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  TestRequest t = PythonAccountSas();
  t.headers["authorization"] = "SharedKey devstoreaccount1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  t.headers["x-ms-date"] = "Mon, 01 Jan 2024 00:00:00 GMT";
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  auth_.SetLoose(true);
  auto r = auth_.Authenticate(t.Build(Operation::kQueryTables));
  ASSERT_TRUE(r.ok()) << r.error().code;
  EXPECT_EQ(r->kind, AuthGrant::Kind::kAccountSas);
  // The SAS still limits what it grants.
  ExpectError(auth_.Authenticate(t.Build(Operation::kGetTableAcl, "t")), 403, "AuthenticationFailed");
  // A SAS that fails too: the header's error.
  t.query.find("sp")->second = "rwdlac";
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  // No SAS at all: the header's error.
  TestRequest bare;
  bare.raw_path = "/devstoreaccount1/Tables";
  bare.headers = t.headers;
  ExpectError(auth_.Authenticate(bare.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
}

// Verified SAS signatures are remembered by the Authenticator (a hit skips the HMAC):
// the memory must not accept a changed signature, nor carry over to another
// Authenticator whose keys differ.
TEST_F(AuthenticatorTest, RememberedSasSignatureStaysExact) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  TestRequest t = PythonAccountSas();
  ASSERT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());
  ASSERT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());  // remembered
  TestRequest forged = t;
  forged.query.find("sig")->second = "M2PbQhN1tAiqlOTfIUBu0Xe7s79+ZB0OMVjxplKSNCw=";
  ExpectError(auth_.Authenticate(forged.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");

  Authenticator other({{"devstoreaccount1", {kOtherKey}}}, /*allow_anonymous=*/false,
                      [](std::string_view, std::string_view, std::string_view) -> std::optional<AccessPolicy> {
                        return std::nullopt;
                      });
  other.SetClockForTesting([] { return Iso("2024-01-01T00:00:00Z"); });
  ExpectError(other.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  EXPECT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());
}

// The last account SAS that checked out is remembered by the Authenticator with its
// exact query string and account: a repeat skips parsing and signing, but the
// time window and permissions are checked on every request, and any other
// query string, account or Authenticator is verified from scratch.
TEST_F(AuthenticatorTest, RepeatedAccountSasIsRememberedButStillChecked) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  TestRequest t = PythonAccountSas();
  t.raw_query = "st=2021-06-09T01%3A17%3A08Z&se=2031-06-09T01%3A17%3A08Z&sp=rwdlacu&sv=2019-02-02&ss=t&srt=so&sig=L2P";
  ASSERT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());
  ASSERT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());  // remembered
  ExpectError(auth_.Authenticate(t.Build(Operation::kGetTableAcl, "t")), 403, "AuthorizationFailure");
  SetNow(Iso("2032-01-01T00:00:00Z"));
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  SetNow(Iso("2020-01-01T00:00:00Z"));  // before st: the remembered start is checked too
  ExpectError(auth_.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
  SetNow(Iso("2024-01-01T00:00:00Z"));
  ASSERT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());

  AuthRequest other_account = t.Build(Operation::kQueryTables);
  other_account.account = "devstoreaccount2";  // not configured: not served from the memory
  ExpectError(auth_.Authenticate(other_account), 403, "AuthenticationFailed");

  TestRequest forged = t;
  forged.query.find("sig")->second = "M2PbQhN1tAiqlOTfIUBu0Xe7s79+ZB0OMVjxplKSNCw=";
  forged.raw_query += "x";
  ExpectError(auth_.Authenticate(forged.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");

  ASSERT_TRUE(auth_.Authenticate(t.Build(Operation::kQueryTables)).ok());
  Authenticator other({{"devstoreaccount1", {kOtherKey}}}, /*allow_anonymous=*/false,
                      [](std::string_view, std::string_view, std::string_view) -> std::optional<AccessPolicy> {
                        return std::nullopt;
                      });
  other.SetClockForTesting([] { return Iso("2024-01-01T00:00:00Z"); });
  ExpectError(other.Authenticate(t.Build(Operation::kQueryTables)), 403, "AuthenticationFailed");
}

// The memory is shared by the threads that authenticate (the I/O threads):
// genuine and forged tokens sent at once from several threads each get their
// own answer.
TEST_F(AuthenticatorTest, TheSasMemoryAnswersEveryThreadExactly) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  TestRequest t = PythonAccountSas();
  t.raw_query = "st=2021-06-09T01%3A17%3A08Z&se=2031-06-09T01%3A17%3A08Z&sp=rwdlacu&sv=2019-02-02&ss=t&srt=so&sig=L2P";
  TestRequest forged = t;
  forged.query.find("sig")->second = "M2PbQhN1tAiqlOTfIUBu0Xe7s79+ZB0OMVjxplKSNCw=";
  forged.raw_query += "x";
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 200; ++i) {
        const bool genuine = (i + k) % 2 == 0;
        const bool ok = auth_.Authenticate((genuine ? t : forged).Build(Operation::kQueryTables)).ok();
        if (ok != genuine) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(AuthenticatorTest, AccountSasProtocolIpAndPermission) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  const std::string key = *protocol::Base64Decode(kDevKey);
  protocol::auth::AccountSas sas;
  sas.sv = "2019-02-02";
  sas.ss = "t";
  sas.srt = "o";
  sas.sp = "r";
  sas.se = "2030-01-01T00:00:00Z";
  sas.sip = "10.0.0.1-10.0.0.5";
  sas.spr = "https";
  TestRequest t;
  t.raw_path = "/devstoreaccount1/t()";
  t.query = {{"sv", sas.sv}, {"ss", sas.ss}, {"srt", sas.srt}, {"sp", sas.sp}, {"se", sas.se},
             {"sip", sas.sip}, {"spr", sas.spr},
             {"sig", protocol::auth::SignBase64(key, protocol::auth::AccountSasStringToSign(sas, "devstoreaccount1"))}};
  AuthRequest req = t.Build(Operation::kQueryEntities, "t");
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationProtocolMismatch");
  req.is_https = true;
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationSourceIPMismatch");
  req.remote_ip = "10.0.0.3";
  EXPECT_TRUE(auth_.Authenticate(req).ok());
  req.operation = Operation::kInsertEntity;
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationPermissionMismatch");
  req.operation = Operation::kDeleteTable;
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationResourceTypeMismatch");
}

// JS generateTableSas: raud, st/se, sip 127.0.0.1-127.0.0.9, https,http, (a,b)..(y,z).
TestRequest JsServiceSas() {
  TestRequest t;
  t.raw_path = "/devstoreaccount1/MyTable(PartitionKey='c',RowKey='x')";
  t.query = {{"sv", "2019-02-02"}, {"spr", "https,http"}, {"st", "2021-06-09T01:17:08Z"},
             {"se", "2031-06-09T01:17:08Z"}, {"sip", "127.0.0.1-127.0.0.9"}, {"sp", "raud"},
             {"sig", "EgvbleFdAFl1vCMJgADZnY5OxqFxIl9E1u8RO1qjltw="}, {"tn", "MyTable"}, {"srk", "b"},
             {"spk", "a"}, {"epk", "y"}, {"erk", "z"}};
  return t;
}

TEST_F(AuthenticatorTest, ServiceSas) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  TestRequest t = JsServiceSas();
  AuthRequest req = t.Build(Operation::kGetEntity, "mytable");
  req.entity_key = model::EntityKey{"c", "x"};
  auto r = auth_.Authenticate(req);
  ASSERT_TRUE(r.ok()) << r.error().code;
  EXPECT_EQ(r->kind, AuthGrant::Kind::kServiceSas);
  EXPECT_EQ(r->permissions, "raud");
  EXPECT_EQ(r->sas_table, "mytable");
  EXPECT_TRUE(r->InRange("a", "b"));
  EXPECT_FALSE(r->InRange("a", "a"));
  EXPECT_TRUE(r->InRange("y", "z"));
  EXPECT_FALSE(r->InRange("z", ""));

  req.entity_key = model::EntityKey{"a", "a"};
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationFailure");
  req.entity_key.reset();
  req.remote_ip = "127.0.0.10";
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationSourceIPMismatch");
  req.remote_ip = "127.0.0.1";
  req.table = "OtherTable";
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationFailure");
  req.table = "MyTable";
  for (Operation op : {Operation::kQueryTables, Operation::kCreateTable, Operation::kDeleteTable,
                       Operation::kGetTableAcl, Operation::kSetTableAcl, Operation::kGetServiceProperties}) {
    req.operation = op;
    ExpectError(auth_.Authenticate(req), 403, "AuthorizationFailure");
  }
  req.operation = Operation::kQueryEntities;
  SetNow(Iso("2031-06-09T01:17:08Z"));  // expiry is exclusive
  ExpectError(auth_.Authenticate(req), 403, "AuthenticationFailed");
}

TEST_F(AuthenticatorTest, ServiceSasStoredPolicy) {
  SetNow(Iso("2024-01-01T00:00:00Z"));
  // Python generate_table_sas(policy_id="id1").
  TestRequest t;
  t.raw_path = "/devstoreaccount1/MyTable()";
  t.query = {{"sv", "2019-02-02"}, {"si", "id1"}, {"tn", "MyTable"},
             {"sig", "O9Hib2+PvnHan+SlFCQgM85gvVQQ3FZqvnH16hAMkdo="}};
  AuthRequest req = t.Build(Operation::kQueryEntities, "MyTable");
  ExpectError(auth_.Authenticate(req), 403, "AuthenticationFailed");  // no such policy

  policies_["devstoreaccount1/mytable/id1"] = AccessPolicy{Iso("2023-01-01T00:00:00Z"), Iso("2025-01-01T00:00:00Z"), "r"};
  auto r = auth_.Authenticate(req);
  ASSERT_TRUE(r.ok()) << r.error().code;
  EXPECT_EQ(r->permissions, "r");
  req.operation = Operation::kInsertEntity;
  ExpectError(auth_.Authenticate(req), 403, "AuthorizationPermissionMismatch");
  req.operation = Operation::kQueryEntities;
  // A policy change applies at once.
  policies_["devstoreaccount1/mytable/id1"].expiry = Iso("2023-06-01T00:00:00Z");
  ExpectError(auth_.Authenticate(req), 403, "AuthenticationFailed");
  // A policy without expiry and a token without se: nothing bounds it -> refused.
  policies_["devstoreaccount1/mytable/id1"].expiry.reset();
  ExpectError(auth_.Authenticate(req), 403, "AuthenticationFailed");
}

TEST_F(AuthenticatorTest, BatchSubOperations) {
  Authenticator& a = auth_;
  AuthGrant shared;
  shared.kind = AuthGrant::Kind::kSharedKey;
  EXPECT_TRUE(a.AuthorizeBatchOperation(shared, Operation::kDeleteEntity, {"p", "r"}).ok());

  AuthGrant service;
  service.kind = AuthGrant::Kind::kServiceSas;
  service.permissions = "ra";
  service.sas_table = "mytable";
  service.sas_start = model::KeyBound{"b", std::nullopt, true};
  EXPECT_TRUE(a.AuthorizeBatchOperation(service, Operation::kInsertEntity, {"c", "r"}).ok());
  EXPECT_TRUE(a.AuthorizeBatchOperation(service, Operation::kInsertEntity, "MyTable", {"c", "r"}).ok());
  auto wrong_table = a.AuthorizeBatchOperation(service, Operation::kInsertEntity, "other", {"c", "r"});
  ASSERT_FALSE(wrong_table.ok());
  EXPECT_EQ(wrong_table.error().code, "AuthorizationFailure");
  auto out_of_range = a.AuthorizeBatchOperation(service, Operation::kInsertEntity, {"a", "r"});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.error().code, "AuthorizationFailure");
  auto no_perm = a.AuthorizeBatchOperation(service, Operation::kInsertOrReplaceEntity, {"c", "r"});
  ASSERT_FALSE(no_perm.ok());
  EXPECT_EQ(no_perm.error().code, "AuthorizationPermissionMismatch");

  AuthGrant account;
  account.kind = AuthGrant::Kind::kAccountSas;
  account.permissions = "rd";
  EXPECT_TRUE(a.AuthorizeBatchOperation(account, Operation::kDeleteEntity, {"p", "r"}).ok());
  auto acc_no = a.AuthorizeBatchOperation(account, Operation::kMergeEntity, {"p", "r"});
  ASSERT_FALSE(acc_no.ok());
  EXPECT_EQ(acc_no.error().code, "AuthorizationPermissionMismatch");
}

}  // namespace
}  // namespace tablestone::api
