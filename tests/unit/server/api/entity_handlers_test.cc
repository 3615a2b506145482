#include "api_test_util.h"

namespace tablestone::api::testing {
namespace {

class EntityApiTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    CreateTable("people");
  }
};

TEST_F(EntityApiTest, InsertReturnsEntityAndHeaders) {
  auto r = Insert("people", R"({"PartitionKey":"p","RowKey":"r1","Age":23,"Big@odata.type":"Edm.Int64","Big":"5"})");
  ASSERT_EQ(r.result_int(), 201) << r.body();
  EXPECT_EQ(H(r, "Location"), "http://127.0.0.1:10002/devstoreaccount1/people(PartitionKey='p',RowKey='r1')");
  EXPECT_EQ(H(r, "DataServiceId"), H(r, "Location"));
  std::string etag = H(r, "ETag");
  EXPECT_EQ(etag.rfind("W/\"datetime'", 0), 0u);
  auto j = J(r);
  EXPECT_EQ(j["odata.metadata"], "http://127.0.0.1:10002/devstoreaccount1/$metadata#people/@Element");
  EXPECT_EQ(j["odata.etag"], etag);
  EXPECT_EQ(j["Age"], 23);
  EXPECT_EQ(j["Big"], "5");
  EXPECT_EQ(j["Big@odata.type"], "Edm.Int64");
  EXPECT_TRUE(j.contains("Timestamp"));

  auto dup = Insert("people", R"({"PartitionKey":"p","RowKey":"r1"})");
  EXPECT_EQ(dup.result_int(), 409);
  EXPECT_EQ(ErrorCode(dup), "EntityAlreadyExists");

  auto nc = Insert("people", R"({"PartitionKey":"p","RowKey":"r2"})", {{"Prefer", "return-no-content"}});
  EXPECT_EQ(nc.result_int(), 204);
  EXPECT_EQ(nc.body(), "");
  EXPECT_EQ(H(nc, "Preference-Applied"), "return-no-content");
  EXPECT_FALSE(H(nc, "ETag").empty());
  EXPECT_FALSE(H(nc, "Location").empty());

  auto nokeys = Insert("people", R"({"RowKey":"r3"})");
  EXPECT_EQ(ErrorCode(nokeys), "PropertiesNeedValue");
  auto notable = Insert("nosuchtable", R"({"PartitionKey":"p","RowKey":"r"})");
  EXPECT_EQ(notable.result_int(), 404);
  EXPECT_EQ(ErrorCode(notable), "TableNotFound");
}

TEST_F(EntityApiTest, GetEntityWithSelectAndNotFound) {
  ASSERT_EQ(Insert("people", R"({"PartitionKey":"a b","RowKey":"it's","Name":"x","Age":1})").result_int(), 201);
  auto r = Send("GET", "/people(PartitionKey='a%20b',RowKey='it%27%27s')");
  ASSERT_EQ(r.result_int(), 200) << r.body();
  auto j = J(r);
  EXPECT_EQ(j["PartitionKey"], "a b");
  EXPECT_EQ(j["RowKey"], "it's");
  EXPECT_EQ(j["Name"], "x");
  EXPECT_EQ(H(r, "ETag"), j["odata.etag"]);

  auto sel = Send("GET", "/people(PartitionKey='a%20b',RowKey='it%27%27s')?$select=Age,Nope");
  ASSERT_EQ(sel.result_int(), 200);
  auto s = J(sel);
  EXPECT_EQ(s["Age"], 1);
  EXPECT_TRUE(s["Nope"].is_null());
  EXPECT_FALSE(s.contains("Name"));
  EXPECT_FALSE(s.contains("PartitionKey"));

  auto missing = Send("GET", "/people(PartitionKey='a',RowKey='zz')");
  EXPECT_EQ(missing.result_int(), 404);
  EXPECT_EQ(ErrorCode(missing), "ResourceNotFound");
  EXPECT_EQ(ErrorCode(Send("GET", "/ghost(PartitionKey='a',RowKey='zz')")), "TableNotFound");
}

TEST_F(EntityApiTest, UpdateMergeUpsertDelete) {
  auto ins = Insert("people", R"({"PartitionKey":"p","RowKey":"r","A":1,"B":"keep"})");
  ASSERT_EQ(ins.result_int(), 201);
  std::string etag1 = H(ins, "ETag");
  const std::string path = "/people(PartitionKey='p',RowKey='r')";
  const std::pair<std::string, std::string> json{"Content-Type", "application/json"};

  // Merge via PATCH with the current ETag keeps B.
  auto merge = Send("PATCH", path, R"({"A":2,"C":null})", {json, {"If-Match", etag1}});
  ASSERT_EQ(merge.result_int(), 204) << merge.body();
  std::string etag2 = H(merge, "ETag");
  EXPECT_NE(etag2, etag1);
  EXPECT_EQ(merge.body(), "");
  auto got = J(Send("GET", path));
  EXPECT_EQ(got["A"], 2);
  EXPECT_EQ(got["B"], "keep");
  EXPECT_FALSE(got.contains("C"));

  // Stale ETag -> 412.
  auto stale = Send("PUT", path, R"({"A":3})", {json, {"If-Match", etag1}});
  EXPECT_EQ(stale.result_int(), 412);
  EXPECT_EQ(ErrorCode(stale), "UpdateConditionNotSatisfied");

  // Replace with If-Match: * drops B.
  auto replace = Send("PUT", path, R"({"A":4})", {json, {"If-Match", "*"}});
  ASSERT_EQ(replace.result_int(), 204);
  auto replaced = J(Send("GET", path));
  EXPECT_EQ(replaced["A"], 4);
  EXPECT_FALSE(replaced.contains("B"));

  // Update of a missing entity -> ResourceNotFound.
  auto missing = Send("PUT", "/people(PartitionKey='p',RowKey='none')", "{}", {json, {"If-Match", "*"}});
  EXPECT_EQ(ErrorCode(missing), "ResourceNotFound");

  // Upserts create: PUT without If-Match, MERGE verb, POST + X-HTTP-Method.
  EXPECT_EQ(Send("PUT", "/people(PartitionKey='p',RowKey='u1')", R"({"v":1})", {json}).result_int(), 204);
  EXPECT_EQ(Send("MERGE", "/people(PartitionKey='p',RowKey='u2')", R"({"v":1})", {json}).result_int(), 204);
  EXPECT_EQ(
      Send("POST", "/people(PartitionKey='p',RowKey='u3')", R"({"v":1})", {json, {"X-HTTP-Method", "MERGE"}})
          .result_int(),
      204);
  EXPECT_EQ(J(Send("GET", "/people(PartitionKey='p',RowKey='u3')"))["v"], 1);

  // Body key that differs from the URL.
  auto mismatch = Send("PUT", "/people(PartitionKey='p',RowKey='u1')", R"({"RowKey":"x"})", {json});
  EXPECT_EQ(ErrorCode(mismatch), "InvalidInput");

  // Delete.
  auto del = Send("DELETE", path, {}, {{"If-Match", "*"}});
  EXPECT_EQ(del.result_int(), 204);
  EXPECT_EQ(H(del, "ETag"), "");
  EXPECT_EQ(ErrorCode(Send("DELETE", path, {}, {{"If-Match", "*"}})), "ResourceNotFound");
  EXPECT_EQ(ErrorCode(Send("DELETE", "/ghost(PartitionKey='p',RowKey='r')", {}, {{"If-Match", "*"}})),
            "TableNotFound");
}

TEST_F(EntityApiTest, BodyValidationErrors) {
  EXPECT_EQ(ErrorCode(Insert("people", R"({"PartitionKey":"p","RowKey":"r","a":1,"a":2})")),
            "DuplicatePropertiesSpecified");
  auto badkey = Insert("people", R"({"PartitionKey":"p","RowKey":"a/b"})");
  EXPECT_EQ(badkey.result_int(), 400);
  EXPECT_EQ(ErrorCode(badkey), "OutOfRangeInput");
  EXPECT_EQ(ErrorCode(Insert("people", R"({"PartitionKey":"p","RowKey":"r","x":{"y":1}})")), "InvalidInput");
  auto urlkey = Send("PUT", "/people(PartitionKey='a%2Fb',RowKey='r')", "{}", {{"Content-Type", "application/json"}});
  EXPECT_EQ(ErrorCode(urlkey), "InvalidInput");
}

TEST_F(EntityApiTest, FullAndNoMetadataInsert) {
  auto full = Insert("people", R"({"PartitionKey":"p","RowKey":"f","When@odata.type":"Edm.DateTime","When":"2020-01-02T03:04:05.5Z"})",
                     {{"Accept", "application/json;odata=fullmetadata"}});
  ASSERT_EQ(full.result_int(), 201);
  auto j = J(full);
  EXPECT_EQ(j["odata.type"], "devstoreaccount1.people");
  EXPECT_EQ(j["odata.editLink"], "people(PartitionKey='p',RowKey='f')");
  EXPECT_EQ(j["When"], "2020-01-02T03:04:05.5Z");
  EXPECT_EQ(j["Timestamp@odata.type"], "Edm.DateTime");
  auto none = Insert("people", R"({"PartitionKey":"p","RowKey":"n","x":1.0})", {{"Accept", "application/json;odata=nometadata"}});
  ASSERT_EQ(none.result_int(), 201);
  EXPECT_FALSE(J(none).contains("odata.etag"));
  EXPECT_NE(none.body().find("\"x\":1.0"), std::string::npos);
}

}  // namespace
}  // namespace tablestone::api::testing
