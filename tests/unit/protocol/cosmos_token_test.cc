#include "protocol/cosmos_token.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstdio>
#include <set>
#include <string>

#include "protocol/base64.h"

namespace tablestone::protocol {
namespace {

TEST(CosmosTokenTest, RoundTripsEachKind) {
  CosmosResume shuffled{0x0123456789abcdefull, "pk\0with nul", "rk\xc3\xa9"};
  shuffled.first = std::string("pk\0with nul", 11);
  auto back = DecodeCosmosToken(EncodeCosmosToken(CosmosTokenKind::kShuffledEntities, shuffled),
                                CosmosTokenKind::kShuffledEntities);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->hash, shuffled.hash);
  EXPECT_EQ(back->first, shuffled.first);
  EXPECT_EQ(back->second, shuffled.second);

  auto keys = DecodeCosmosToken(EncodeCosmosToken(CosmosTokenKind::kKeyOrderEntities, {0, "", "r"}),
                                CosmosTokenKind::kKeyOrderEntities);
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->first, "");
  EXPECT_EQ(keys->second, "r");

  auto table = DecodeCosmosToken(EncodeCosmosToken(CosmosTokenKind::kTables, {42, "Orders", ""}),
                                 CosmosTokenKind::kTables);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->hash, 42u);
  EXPECT_EQ(table->first, "Orders");
}

// The shape the service answers (azure-sdk-for-python's Cosmos recordings).
TEST(CosmosTokenTest, HasTheServiceShape) {
  auto json = nlohmann::json::parse(EncodeCosmosToken(CosmosTokenKind::kShuffledEntities, {1, "a", "b"}));
  ASSERT_TRUE(json.is_object());
  EXPECT_TRUE(json.at("token").is_string());
  EXPECT_EQ(json.at("range"), nlohmann::json({{"min", ""}, {"max", "FF"}}));
  EXPECT_EQ(kCosmosNextRowKey, "NA");
}

TEST(CosmosTokenTest, RefusesMalformedAndForeignTokens) {
  const std::string good = EncodeCosmosToken(CosmosTokenKind::kShuffledEntities, {1, "a", "b"});
  // Another kind: a key-order token at a shuffling listener, a table token on entities.
  EXPECT_FALSE(DecodeCosmosToken(good, CosmosTokenKind::kKeyOrderEntities).ok());
  EXPECT_FALSE(DecodeCosmosToken(good, CosmosTokenKind::kTables).ok());
  const std::string truncated_raw = std::string("S") + std::string(7, '\0');
  const std::string length_past_end = std::string("K") + std::string("\0\0\1\0", 4) + "ab";
  for (const std::string& bad : {
           std::string(""), std::string("1!4!YWJj"), std::string("{}"), std::string("[]"),
           std::string("{\"token\":5}"), std::string("{\"token\":\"not base64!\"}"),
           std::string("{\"token\":\"\"}"),
           std::string("{\"token\":\"") + Base64Encode(truncated_raw) + "\"}",
       }) {
    EXPECT_FALSE(DecodeCosmosToken(bad, CosmosTokenKind::kShuffledEntities).ok()) << bad;
  }
  EXPECT_FALSE(DecodeCosmosToken(std::string("{\"token\":\"") + Base64Encode(length_past_end) + "\"}",
                                 CosmosTokenKind::kKeyOrderEntities)
                   .ok());
  // Oversized: refused on its length, before it is parsed.
  const std::string huge = "{\"token\":\"" + std::string(kMaxCosmosTokenBytes, 'A') + "\"}";
  auto refused = DecodeCosmosToken(huge, CosmosTokenKind::kShuffledEntities);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "InvalidInput");
}

TEST(CosmosTokenTest, ShuffleKeyIsSeededAndSpreadsNeighbours) {
  EXPECT_EQ(ShuffleKey(1, "p", "r"), ShuffleKey(1, "p", "r"));
  EXPECT_NE(ShuffleKey(1, "p", "r"), ShuffleKey(2, "p", "r"));
  // The separator keeps ("ab","c") and ("a","bc") apart.
  EXPECT_NE(ShuffleKey(0, "ab", "c"), ShuffleKey(0, "a", "bc"));
  // Keys in order do not come out in order: of 100 consecutive row keys, the
  // hashes are distinct and not sorted.
  std::set<uint64_t> seen;
  bool sorted = true;
  uint64_t last = 0;
  for (int i = 0; i < 100; ++i) {
    char rk[8];
    std::snprintf(rk, sizeof(rk), "%03d", i);
    const uint64_t h = ShuffleKey(0, "p", rk);
    sorted = sorted && h >= last;
    last = h;
    seen.insert(h);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_FALSE(sorted);
}

}  // namespace
}  // namespace tablestone::protocol
