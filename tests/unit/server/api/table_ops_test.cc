// The typed requests of the table operations (table_ops.h): what each parse
// function accepts and the errors it gives, in the order the handlers gave
// them. No Beast, no engine.
#include "server/api/table_ops.h"

#include <gtest/gtest.h>

#include "protocol/continuation.h"
#include "request_parts_test_util.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

using protocol::MetadataLevel;
using protocol::ResourceKind;
using testing::PartsHolder;
using testing::TableParts;

TEST(ParseQueryTablesTest, EveryOption) {
  PartsHolder h = TableParts(ResourceKind::kTables, "");
  h.headers.Add("Accept", "application/json;odata=fullmetadata");
  h.query.emplace("$top", "5");
  h.query.emplace("$filter", "TableName ge 'b'");
  h.query.emplace("NextTableName", protocol::EncodeContinuation("carrots"));
  auto req = ParseQueryTables(h.Parts());
  ASSERT_TRUE(req.ok()) << req.error().message;
  EXPECT_EQ(req->account, "devstoreaccount1");
  EXPECT_EQ(req->level, MetadataLevel::kFullMetadata);
  EXPECT_EQ(req->top, 5);
  ASSERT_NE(req->filter, nullptr);
  EXPECT_TRUE(req->filter->MatchesTableName("bread"));
  EXPECT_FALSE(req->filter->MatchesTableName("apples"));
  EXPECT_EQ(req->resume_from, "carrots");

  PartsHolder plain = TableParts(ResourceKind::kTables, "");
  auto defaults = ParseQueryTables(plain.Parts());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->level, MetadataLevel::kMinimalMetadata);
  EXPECT_FALSE(defaults->top.has_value());
  EXPECT_EQ(defaults->filter, nullptr);
  EXPECT_FALSE(defaults->resume_from.has_value());
}

TEST(ParseQueryTablesTest, Errors) {
  auto error_of = [](std::initializer_list<std::pair<std::string, std::string>> query,
                     std::string_view accept = {}) {
    PartsHolder h = TableParts(ResourceKind::kTables, "");
    for (const auto& [k, v] : query) h.query.emplace(k, v);
    if (!accept.empty()) h.headers.Add("Accept", std::string(accept));
    auto r = ParseQueryTables(h.Parts());
    EXPECT_FALSE(r.ok());
    return r.ok() ? protocol::ApiError::InternalError() : r.error();
  };
  EXPECT_EQ(error_of({}, "application/atom+xml").code, "AtomFormatNotSupported");
  EXPECT_EQ(error_of({{"$format", "text/plain"}}).code, "InvalidQueryParameterValue");
  EXPECT_EQ(error_of({{"$top", "1001"}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"$filter", "TableName eq"}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"NextTableName", "not-a-token"}}).code, "InvalidInput");
  // Metadata, then $top, then $filter, then the token.
  EXPECT_EQ(error_of({{"$top", "x"}}, "application/json;odata=verbose").code, "JsonVerboseFormatNotSupported");
  auto top_first = error_of({{"$top", "x"}, {"$filter", "a eq b"}});
  EXPECT_EQ(top_first.http_status, 400);
  EXPECT_EQ(error_of({{"$filter", "a eq b"}, {"NextTableName", "bad"}}).http_status, 501);
}

TEST(ParseCreateTableTest, NameAndPrefer) {
  PartsHolder h = TableParts(ResourceKind::kTables, "");
  h.body = R"({"TableName":"orders","other":1})";
  auto req = ParseCreateTable(h.Parts());
  ASSERT_TRUE(req.ok()) << req.error().message;
  EXPECT_EQ(req->account, "devstoreaccount1");
  EXPECT_EQ(req->name, "orders");
  EXPECT_EQ(req->level, MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(req->prefer, protocol::PreferReturn::kNone);
  EXPECT_FALSE(req->prefer_sent);

  h.headers.Add("Content-Type", "application/json;odata=nometadata");
  h.headers.Add("Accept", "application/json;odata=nometadata");
  h.headers.Add("Prefer", "return-no-content");
  req = ParseCreateTable(h.Parts());
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->level, MetadataLevel::kNoMetadata);
  EXPECT_EQ(req->prefer, protocol::PreferReturn::kReturnNoContent);
  EXPECT_TRUE(req->prefer_sent);

  // An empty Content-Type is accepted like an absent one.
  PartsHolder empty_ct = TableParts(ResourceKind::kTables, "");
  empty_ct.body = R"({"TableName":"orders"})";
  empty_ct.headers.Add("Content-Type", "");
  EXPECT_TRUE(ParseCreateTable(empty_ct.Parts()).ok());

  // Prefer sent but not understood: no preference, but it was sent.
  PartsHolder odd = TableParts(ResourceKind::kTables, "");
  odd.body = R"({"TableName":"orders"})";
  odd.headers.Add("Prefer", "");
  req = ParseCreateTable(odd.Parts());
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->prefer, protocol::PreferReturn::kNone);
  EXPECT_TRUE(req->prefer_sent);
}

// Before 2015-12-11 a Create Table entry may be Atom, and the answer is Atom
// unless JSON is asked for (Learn: payload-format-for-table-service-operations).
TEST(ParseCreateTableTest, AtomEntryForAtomEraVersions) {
  PartsHolder h = TableParts(ResourceKind::kTables, "");
  h.body =
      "<entry xmlns=\"http://www.w3.org/2005/Atom\" "
      "xmlns:d=\"http://schemas.microsoft.com/ado/2007/08/dataservices\" "
      "xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\"><content "
      "type=\"application/xml\"><m:properties><d:TableName>orders</d:TableName></m:properties></content></entry>";
  h.headers.Add("Content-Type", "application/atom+xml");
  h.api_version = "2013-08-15";
  auto req = ParseCreateTable(h.Parts());
  ASSERT_TRUE(req.ok()) << req.error().code;
  EXPECT_EQ(req->name, "orders");
  EXPECT_EQ(req->level, MetadataLevel::kAtom);

  h.headers.Add("Accept", "application/json;odata=nometadata");
  auto json_answer = ParseCreateTable(h.Parts());
  ASSERT_TRUE(json_answer.ok());
  EXPECT_EQ(json_answer->level, MetadataLevel::kNoMetadata);

  PartsHolder modern = TableParts(ResourceKind::kTables, "");
  modern.body = h.body;
  modern.headers.Add("Content-Type", "application/atom+xml");
  modern.api_version = "2015-12-11";
  EXPECT_EQ(ParseCreateTable(modern.Parts()).error().code, "AtomFormatNotSupported");
}

TEST(ParseCreateTableTest, Errors) {
  auto error_of = [](std::string body, std::initializer_list<std::pair<std::string, std::string>> headers = {}) {
    PartsHolder h = TableParts(ResourceKind::kTables, "");
    h.body = std::move(body);
    for (const auto& [k, v] : headers) h.headers.Add(k, v);
    auto r = ParseCreateTable(h.Parts());
    EXPECT_FALSE(r.ok());
    return r.ok() ? protocol::ApiError::InternalError() : r.error();
  };
  const std::string good = R"({"TableName":"orders"})";
  EXPECT_EQ(error_of(good, {{"Content-Type", "text/plain"}}).code, "MediaTypeNotSupported");
  EXPECT_EQ(error_of(good, {{"Content-Type", "text/plain"}}).http_status, 415);
  EXPECT_EQ(error_of(good, {{"Content-Type", "application/atom+xml"}}).code, "AtomFormatNotSupported");
  EXPECT_EQ(error_of(good, {{"Accept", "application/atom+xml"}}).code, "AtomFormatNotSupported");
  EXPECT_EQ(error_of("{}").code, "PropertiesNeedValue");
  EXPECT_EQ(error_of(R"({"TableName":null})").code, "PropertiesNeedValue");
  EXPECT_EQ(error_of(R"({"TableName":5})").code, "InvalidInput");
  EXPECT_EQ(error_of("not json").code, "InvalidInput");
  EXPECT_EQ(error_of(R"({"TableName":"1abc"})").code, "InvalidResourceName");
  EXPECT_EQ(error_of(R"({"TableName":"tables"})").code, "InvalidResourceName");
  EXPECT_EQ(error_of(R"({"TableName":"ab"})").code, "OutOfRangeInput");
  // Content-Type before Accept before the body.
  EXPECT_EQ(error_of("{}", {{"Content-Type", "text/plain"}, {"Accept", "application/atom+xml"}}).code,
            "MediaTypeNotSupported");
  EXPECT_EQ(error_of("{}", {{"Accept", "application/json;odata=verbose"}}).code, "JsonVerboseFormatNotSupported");
}

TEST(ParseTableRequestTest, DeleteGetAndAcl) {
  PartsHolder h = TableParts(ResourceKind::kTable, "orders");
  h.headers.Add("Accept", "application/atom+xml");  // read by Get Table only
  auto del = ParseDeleteTable(h.Parts());
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->account, "devstoreaccount1");
  EXPECT_EQ(del->table, "orders");
  EXPECT_EQ(del->table.data(), h.resource.table.data());
  auto acl = ParseGetTableAcl(h.Parts());
  ASSERT_TRUE(acl.ok());
  EXPECT_EQ(acl->table, "orders");
  auto get = ParseGetTable(h.Parts());
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.error().code, "AtomFormatNotSupported");

  PartsHolder full = TableParts(ResourceKind::kTable, "orders");
  full.query.emplace("$format", "application/json;odata=fullmetadata");
  get = ParseGetTable(full.Parts());
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->table, "orders");
  EXPECT_EQ(get->level, MetadataLevel::kFullMetadata);
}

TEST(ParseSetTableAclTest, EntriesInBodyOrder) {
  PartsHolder h = TableParts(ResourceKind::kTable, "orders");
  h.body =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>id1</Id><AccessPolicy>"
      "<Start>2021-07-08T09:10:09Z</Start><Expiry>2021-07-09T09:10:09Z</Expiry><Permission>raud</Permission>"
      "</AccessPolicy></SignedIdentifier><SignedIdentifier><Id>empty</Id><AccessPolicy/></SignedIdentifier>"
      "</SignedIdentifiers>";
  auto req = ParseSetTableAcl(h.Parts());
  ASSERT_TRUE(req.ok()) << req.error().code;
  EXPECT_EQ(req->account, "devstoreaccount1");
  EXPECT_EQ(req->table, "orders");
  ASSERT_EQ(req->entries.size(), 2u);
  protocol::AclEntry first{"id1", true, *model::ParseIsoDateTime("2021-07-08T09:10:09Z"),
                           *model::ParseIsoDateTime("2021-07-09T09:10:09Z"), "raud"};
  EXPECT_EQ(req->entries[0], first);
  // An identifier without policy fields is stored as such (no policy).
  EXPECT_EQ(req->entries[1], (protocol::AclEntry{"empty", false, std::nullopt, std::nullopt, std::nullopt}));

  // An empty body clears the policies.
  PartsHolder empty = TableParts(ResourceKind::kTable, "orders");
  auto none = ParseSetTableAcl(empty.Parts());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->entries.empty());
}

TEST(ParseSetTableAclTest, Errors) {
  auto error_of = [](std::string body) {
    PartsHolder h = TableParts(ResourceKind::kTable, "orders");
    h.body = std::move(body);
    auto r = ParseSetTableAcl(h.Parts());
    EXPECT_FALSE(r.ok());
    return r.ok() ? protocol::ApiError::InternalError() : r.error();
  };
  EXPECT_EQ(error_of("<SignedIdentifiers><SignedIdentifier>").code, "InvalidXmlDocument");
  EXPECT_EQ(error_of("<Other/>").code, "InvalidXmlDocument");
  EXPECT_EQ(error_of("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>x</Permission>"
                     "</AccessPolicy></SignedIdentifier></SignedIdentifiers>")
                .code,
            "InvalidXmlDocument");
  auto bad_time = error_of("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>yesterday</Start>"
                           "</AccessPolicy></SignedIdentifier></SignedIdentifiers>");
  EXPECT_EQ(bad_time.code, "InvalidXmlNodeValue");
  EXPECT_EQ(bad_time.http_status, 400);
}

}  // namespace
}  // namespace tablestone::api
