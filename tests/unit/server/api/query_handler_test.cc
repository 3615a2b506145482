#include "api_test_util.h"

namespace tablestone::api::testing {
namespace {

class QueryApiTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    CreateTable("items");
    for (int i = 0; i < 21; ++i) {
      std::string body = R"({"PartitionKey":"p","RowKey":")" + std::to_string(i) + R"(","n":)" + std::to_string(i) + "}";
      ASSERT_EQ(Insert("items", body, {{"Prefer", "return-no-content"}}).result_int(), 204);
    }
    ASSERT_EQ(Insert("items", R"({"PartitionKey":"q","RowKey":"x","n":100})").result_int(), 201);
  }
};

TEST_F(QueryApiTest, AllInOrdinalOrder) {
  auto r = Send("GET", "/items()");
  ASSERT_EQ(r.result_int(), 200) << r.body();
  auto v = J(r)["value"];
  ASSERT_EQ(v.size(), 22u);
  EXPECT_EQ(v[0]["RowKey"], "0");
  EXPECT_EQ(v[1]["RowKey"], "1");
  EXPECT_EQ(v[2]["RowKey"], "10");  // ordinal string order
  EXPECT_EQ(v[21]["PartitionKey"], "q");
  EXPECT_TRUE(v[0].contains("odata.etag"));
  EXPECT_EQ(J(r)["odata.metadata"], "http://127.0.0.1:10002/devstoreaccount1/$metadata#items");
  EXPECT_EQ(H(r, "x-ms-continuation-NextPartitionKey"), "");
}

TEST_F(QueryApiTest, FilterAndSelect) {
  auto r = Send("GET", "/items()?$filter=PartitionKey%20eq%20%27p%27%20and%20n%20ge%2018&$select=n,RowKey");
  ASSERT_EQ(r.result_int(), 200) << r.body();
  auto v = J(r)["value"];
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0]["n"], 18);
  EXPECT_FALSE(v[0].contains("PartitionKey"));
  EXPECT_EQ(J(r)["odata.metadata"], "http://127.0.0.1:10002/devstoreaccount1/$metadata#items&$select=n,RowKey");
  // '+' in the query string is a space (Learn: querying-tables-and-entities).
  auto plus = Send("GET", "/items()?$filter=RowKey+eq+%2720%27");
  ASSERT_EQ(plus.result_int(), 200) << plus.body();
  EXPECT_EQ(J(plus)["value"].size(), 1u);
  auto bad = Send("GET", "/items()?$filter=n%20eq");
  EXPECT_EQ(bad.result_int(), 400);
  EXPECT_EQ(ErrorCode(bad), "InvalidInput");
}

TEST_F(QueryApiTest, PagingWithTop) {
  std::vector<size_t> sizes;
  std::vector<std::string> keys;
  std::string npk, nrk;
  for (int page = 0; page < 20; ++page) {
    std::string target = "/items()?$top=5";
    if (!npk.empty()) target += "&NextPartitionKey=" + npk + "&NextRowKey=" + nrk;
    auto r = Send("GET", target);
    ASSERT_EQ(r.result_int(), 200) << r.body();
    auto v = J(r)["value"];
    sizes.push_back(v.size());
    for (auto& e : v) keys.push_back(std::string(e["PartitionKey"]) + "/" + std::string(e["RowKey"]));
    npk = H(r, "x-ms-continuation-NextPartitionKey");
    nrk = H(r, "x-ms-continuation-NextRowKey");
    if (npk.empty()) break;
  }
  EXPECT_EQ(keys.size(), 22u);
  EXPECT_EQ(sizes.front(), 5u);
  EXPECT_EQ(keys.back(), "q/x");
  std::set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), 22u);
}

TEST_F(QueryApiTest, TopZeroAndErrors) {
  auto zero = Send("GET", "/items()?$top=0");
  ASSERT_EQ(zero.result_int(), 200);
  EXPECT_EQ(J(zero)["value"].size(), 0u);
  EXPECT_EQ(ErrorCode(Send("GET", "/items()?$top=-1")), "InvalidInput");
  EXPECT_EQ(ErrorCode(Send("GET", "/items()?NextPartitionKey=forged")), "InvalidInput");
  auto missing = Send("GET", "/nothere()");
  EXPECT_EQ(missing.result_int(), 404);
  EXPECT_EQ(ErrorCode(missing), "TableNotFound");
  auto empty = Send("GET", "/items()?$filter=PartitionKey%20eq%20%27zzz%27");
  ASSERT_EQ(empty.result_int(), 200);
  EXPECT_EQ(empty.body(), "{\"odata.metadata\":\"http://127.0.0.1:10002/devstoreaccount1/$metadata#items\",\"value\":[]}");
}

}  // namespace
}  // namespace tablestone::api::testing
