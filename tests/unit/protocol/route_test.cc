#include "protocol/route.h"

#include <gtest/gtest.h>

namespace tablestone::protocol {
namespace {

bool Known(std::string_view name) { return name == "devstoreaccount1" || name == "acct"; }

ApiResult<Route> Resolve(std::string_view method, std::string_view target, bool if_match = false,
                         std::vector<std::string_view> xmethod = {}, std::string_view host = "127.0.0.1:10002") {
  RouteInput in;
  in.method = method;
  in.host = host;
  in.target = target;
  in.has_if_match = if_match;
  in.x_http_method = std::move(xmethod);
  in.is_known_account = Known;
  return ResolveRoute(in);
}

// A memo changes what a route costs, never what it is: the same query string
// twice (the second from the memo), then another, then the first again.
TEST(RouteTest, AQueryMemoGivesTheRoutesAParseGives) {
  QueryMemo memo;
  const std::string sas = "/devstoreaccount1/t(PartitionKey='a',RowKey='b')?sv=2019-02-02&sig=a%2Bb%3D&sp=r";
  const std::string other = "/devstoreaccount1/t()?$filter=PartitionKey%20eq%20'x'&$top=5";
  for (const std::string& target : {sas, sas, other, sas, other}) {
    RouteInput in;
    in.method = "GET";
    in.host = "127.0.0.1:10002";
    in.target = target;
    in.is_known_account = Known;
    auto plain = ResolveRoute(in);
    in.query_memo = &memo;
    auto memoized = ResolveRoute(in);
    ASSERT_TRUE(plain.ok() && memoized.ok()) << target;
    EXPECT_EQ(memoized->query, plain->query) << target;
    EXPECT_EQ(memoized->operation, plain->operation) << target;
    EXPECT_EQ(memoized->raw_query, plain->raw_query) << target;
  }
  auto remembered = memo.Find("$filter=PartitionKey%20eq%20'x'&$top=5");
  ASSERT_TRUE(remembered.has_value());
  EXPECT_EQ(remembered->find("$top")->second, "5");
  EXPECT_FALSE(memo.Find("sv=2019-02-02").has_value());
}

TEST(RouteTest, PathStyleTables) {
  auto r = Resolve("GET", "/devstoreaccount1/Tables");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->account.account, "devstoreaccount1");
  EXPECT_TRUE(r->account.path_style);
  EXPECT_EQ(r->account.root_path, "/devstoreaccount1/");
  EXPECT_EQ(r->operation, Operation::kQueryTables);
  EXPECT_EQ(Resolve("POST", "/devstoreaccount1/Tables()")->operation, Operation::kCreateTable);
  EXPECT_EQ(Resolve("GET", "/devstoreaccount1/tables")->operation, Operation::kQueryTables);
}

// The last query string parsed on a thread is remembered (clients repeat
// their SAS): a repeat gets the same parameters, anything else is parsed anew,
// and a malformed query is refused even right after a valid one.
TEST(RouteTest, RepeatedQueryStringGivesTheSameParameters) {
  const char* target = "/devstoreaccount1/t(PartitionKey='p',RowKey='r')?sv=2019-02-02&sig=a%2Bb%3D&sp=r&sp=w";
  auto first = Resolve("GET", target);
  ASSERT_TRUE(first.ok());
  auto again = Resolve("GET", target);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->query, first->query);
  EXPECT_EQ(again->raw_query, "sv=2019-02-02&sig=a%2Bb%3D&sp=r&sp=w");
  EXPECT_EQ(*FindQueryParam(again->query, "sig"), "a+b=");
  EXPECT_EQ(again->query.count("sp"), 2u);
  auto other = Resolve("GET", "/devstoreaccount1/t(PartitionKey='p',RowKey='r')?sv=2019-02-02&sig=c");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*FindQueryParam(other->query, "sig"), "c");
  EXPECT_EQ(FindQueryParam(other->query, "sp"), nullptr);
  EXPECT_FALSE(Resolve("GET", "/devstoreaccount1/Tables?sig=%zz").ok());
  ASSERT_TRUE(Resolve("GET", target).ok());
  EXPECT_FALSE(Resolve("GET", "/devstoreaccount1/Tables?sig=%zz").ok());
  auto none = Resolve("GET", "/devstoreaccount1/Tables");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->query.empty());
}

TEST(RouteTest, SingleTableForms) {
  auto r = Resolve("DELETE", "/devstoreaccount1/Tables('mytable')");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->operation, Operation::kDeleteTable);
  EXPECT_EQ(r->resource.table, "mytable");
  auto encoded = Resolve("GET", "/devstoreaccount1/Tables(%27mytable%27)");
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->operation, Operation::kGetTable);
  EXPECT_EQ(encoded->resource.table, "mytable");
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/Tables('x')").error().http_status, 405);
}

TEST(RouteTest, EntitySetAndInsert) {
  auto q = Resolve("GET", "/devstoreaccount1/mytable()?$top=3");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->operation, Operation::kQueryEntities);
  EXPECT_EQ(q->resource.table, "mytable");
  EXPECT_EQ(*FindQueryParam(q->query, "$top"), "3");
  EXPECT_EQ(Resolve("POST", "/devstoreaccount1/mytable")->operation, Operation::kInsertEntity);
  EXPECT_EQ(Resolve("GET", "/devstoreaccount1/mytable/")->operation, Operation::kQueryEntities);
}

TEST(RouteTest, EntityKeysAreDecodedThenUnquoted) {
  // Python style: quotes doubled then everything encoded.
  auto r = Resolve("GET", "/devstoreaccount1/t(PartitionKey='a%27%27b%20c',RowKey='%28x%2Cy%29%3D')");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->operation, Operation::kGetEntity);
  ASSERT_TRUE(r->resource.key.has_value());
  EXPECT_EQ(r->resource.key->partition_key, "a'b c");
  EXPECT_EQ(r->resource.key->row_key, "(x,y)=");
  // Fully encoded quotes and plus stays plus.
  auto r2 = Resolve("GET", "/devstoreaccount1/t(PartitionKey=%27p+1%27,RowKey=%27%27)");
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->resource.key->partition_key, "p+1");
  EXPECT_EQ(r2->resource.key->row_key, "");
  // Either order.
  auto r3 = Resolve("GET", "/devstoreaccount1/t(RowKey='r',PartitionKey='p')");
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(r3->resource.key->partition_key, "p");
  EXPECT_EQ(r3->resource.key->row_key, "r");
}

TEST(RouteTest, MalformedKeyPredicates) {
  for (const char* t : {"/devstoreaccount1/t(PartitionKey='a')", "/devstoreaccount1/t(PartitionKey='a',RowKey='b)",
                        "/devstoreaccount1/t(PartitionKey='a',Foo='b')",
                        "/devstoreaccount1/t(PartitionKey='a',PartitionKey='b')"}) {
    auto r = Resolve("GET", t);
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.error().code, "InvalidInput") << t;
  }
}

TEST(RouteTest, ForbiddenKeyCharactersInUrl) {
  auto slash = Resolve("PUT", "/devstoreaccount1/t(PartitionKey='a%2Fb',RowKey='r')");
  ASSERT_FALSE(slash.ok());
  EXPECT_EQ(slash.error().code, "InvalidInput");
  EXPECT_EQ(slash.error().message, "Bad Request - Error in query syntax.");
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/t(PartitionKey='a%5Cb',RowKey='r')").error().code, "InvalidInput");
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/t(PartitionKey='a%23b',RowKey='r')").error().code, "OutOfRangeInput");
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/t(PartitionKey='a%3Fb',RowKey='r')").error().code, "OutOfRangeInput");
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/t(PartitionKey='a%01b',RowKey='r')").error().code, "OutOfRangeInput");
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/t(PartitionKey='a%C2%85',RowKey='r')").error().code,
            "OutOfRangeInput");
}

TEST(RouteTest, WriteVerbsAndIfMatch) {
  const char* e = "/devstoreaccount1/t(PartitionKey='p',RowKey='r')";
  EXPECT_EQ(Resolve("PUT", e, true)->operation, Operation::kUpdateEntity);
  EXPECT_EQ(Resolve("PUT", e, false)->operation, Operation::kInsertOrReplaceEntity);
  EXPECT_EQ(Resolve("MERGE", e, true)->operation, Operation::kMergeEntity);
  EXPECT_EQ(Resolve("PATCH", e, false)->operation, Operation::kInsertOrMergeEntity);
  EXPECT_EQ(Resolve("POST", e, true, {"MERGE"})->operation, Operation::kMergeEntity);
  EXPECT_EQ(Resolve("POST", e, false, {"merge"})->operation, Operation::kInsertOrMergeEntity);
  EXPECT_EQ(Resolve("POST", e, true, {"DELETE"})->operation, Operation::kDeleteEntity);
  EXPECT_EQ(Resolve("DELETE", e, true)->operation, Operation::kDeleteEntity);
  auto no_if_match = Resolve("DELETE", e, false);
  ASSERT_FALSE(no_if_match.ok());
  EXPECT_EQ(no_if_match.error().code, "InvalidInput");
}

TEST(RouteTest, XHttpMethodErrors) {
  const char* e = "/devstoreaccount1/t(PartitionKey='p',RowKey='r')";
  EXPECT_EQ(Resolve("PUT", e, true, {"MERGE"}).error().code, "XMethodNotUsingPost");
  EXPECT_EQ(Resolve("POST", e, true, {"FROB"}).error().code, "XMethodIncorrectValue");
  EXPECT_EQ(Resolve("POST", e, true, {"MERGE", "MERGE"}).error().code, "XMethodIncorrectCount");
  EXPECT_EQ(Resolve("POST", e).error().http_status, 405);
}

TEST(RouteTest, ServiceRootAndAcl) {
  EXPECT_EQ(Resolve("GET", "/devstoreaccount1/?restype=service&comp=properties")->operation,
            Operation::kGetServiceProperties);
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1?restype=service&comp=properties")->operation,
            Operation::kSetServiceProperties);
  auto stats = Resolve("GET", "/devstoreaccount1-secondary/?restype=service&comp=stats");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->operation, Operation::kGetServiceStats);
  EXPECT_TRUE(stats->account.secondary);
  EXPECT_EQ(stats->account.account, "devstoreaccount1");
  EXPECT_EQ(Resolve("GET", "/devstoreaccount1/t?comp=acl")->operation, Operation::kGetTableAcl);
  EXPECT_EQ(Resolve("PUT", "/devstoreaccount1/t?comp=acl")->operation, Operation::kSetTableAcl);
  EXPECT_EQ(Resolve("GET", "/devstoreaccount1/?restype=service&comp=bogus").error().code,
            "InvalidQueryParameterValue");
  EXPECT_EQ(Resolve("POST", "/devstoreaccount1/$batch")->operation, Operation::kBatch);
  EXPECT_EQ(Resolve("OPTIONS", "/devstoreaccount1/anything(")->operation, Operation::kPreflight);
}

TEST(RouteTest, HostStyleWhenFirstLabelIsKnown) {
  auto r = Resolve("GET", "/Tables", false, {}, "acct.table.localhost:10002");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->account.path_style);
  EXPECT_EQ(r->account.account, "acct");
  EXPECT_EQ(r->account.root_path, "/");
  EXPECT_EQ(r->operation, Operation::kQueryTables);
  auto sec = Resolve("GET", "/Tables", false, {}, "acct-secondary.table.core.windows.net");
  ASSERT_TRUE(sec.ok());
  EXPECT_TRUE(sec->account.secondary);
  // Unknown first label falls back to path-style.
  auto fallback = Resolve("GET", "/devstoreaccount1/Tables", false, {}, "myhost.example.com");
  ASSERT_TRUE(fallback.ok());
  EXPECT_TRUE(fallback->account.path_style);
  EXPECT_EQ(fallback->account.account, "devstoreaccount1");
  // localhost is always path-style.
  EXPECT_TRUE(Resolve("GET", "/devstoreaccount1/Tables", false, {}, "localhost:10002")->account.path_style);
}

TEST(RouteTest, DisableProductStyleForcesPathStyle) {
  auto a = ResolveAccount("acct.table.localhost", "/devstoreaccount1/Tables", Known, true);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->account, "devstoreaccount1");
  EXPECT_EQ(a->resource_path, "/Tables");
}

TEST(RouteTest, TableNameRules) {
  EXPECT_TRUE(ValidateTableName("abc").ok());
  EXPECT_TRUE(ValidateTableName(std::string(63, 'a')).ok());
  EXPECT_EQ(ValidateTableName("ab").error().code, "OutOfRangeInput");
  EXPECT_EQ(ValidateTableName(std::string(64, 'a')).error().code, "OutOfRangeInput");
  EXPECT_EQ(ValidateTableName("a-b-c").error().code, "InvalidResourceName");
  EXPECT_EQ(ValidateTableName("1abc").error().code, "InvalidResourceName");
  EXPECT_EQ(ValidateTableName("Tables").error().code, "InvalidResourceName");
}

}  // namespace
}  // namespace tablestone::protocol

namespace tablestone::protocol {
namespace {

// docs/compatibility-notes/auth.md: slashes right after the account segment
// are collapsed (a client joining an endpoint that ends in "/" with "/Tables"
// sends "//Tables"); a doubled slash inside the resource path is 400.
TEST(RouteTest, LeadingSlashesOfTheResourceCollapseOthersAreInvalid) {
  auto r = ParseResource("//table()");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ResourceKind::kEntitySet);
  EXPECT_EQ(r->table, "table");
  auto bad = ParseResource("/t//x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "InvalidUri");
}

// RFC 9112 section 3.2.2: an absolute-form target naming this endpoint (the
// authority in Host) routes like its origin form; another authority does not.
TEST(RouteTest, AbsoluteFormNamingThisServerRoutesAsOriginForm) {
  auto r = Resolve("POST", "http://127.0.0.1:10002/devstoreaccount1/Tables");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->operation, Operation::kCreateTable);
  EXPECT_EQ(r->account.account, "devstoreaccount1");
  EXPECT_EQ(r->raw_path, "/devstoreaccount1/Tables");

  auto q = Resolve("GET", "HTTP://127.0.0.1:10002/devstoreaccount1/t()?$top=2&NextPartitionKey=a");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->operation, Operation::kQueryEntities);
  EXPECT_EQ(q->raw_path, "/devstoreaccount1/t()");
  EXPECT_EQ(q->raw_query, "$top=2&NextPartitionKey=a");

  // Host-style: the account comes from the authority, as from Host.
  auto h = Resolve("GET", "http://acct.table.core.windows.net/t(PartitionKey='p',RowKey='r')", false, {},
                   "acct.table.core.windows.net:80");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->account.account, "acct");
  EXPECT_FALSE(h->account.path_style);
  EXPECT_EQ(h->operation, Operation::kGetEntity);
}

TEST(RouteTest, AbsoluteFormNamingAnotherHostIsInvalidUri) {
  auto other = Resolve("GET", "http://example.com/devstoreaccount1/Tables");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, "InvalidUri");
  auto other_port = Resolve("GET", "http://127.0.0.1:10001/devstoreaccount1/Tables");
  ASSERT_FALSE(other_port.ok());
  EXPECT_EQ(other_port.error().code, "InvalidUri");
  for (const char* bad : {"ftp://127.0.0.1:10002/devstoreaccount1/Tables", "devstoreaccount1/Tables",
                          "http:///devstoreaccount1/Tables", "http://u@127.0.0.1:10002/devstoreaccount1/Tables"}) {
    auto r = Resolve("GET", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, "InvalidUri") << bad;
  }
}

}  // namespace
}  // namespace tablestone::protocol
