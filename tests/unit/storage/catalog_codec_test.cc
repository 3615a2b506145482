// The meta 'C' blob (saved entity counts) and 'G' blob (the scan cache's
// partitions): round trip, and every malformed form refused, so that an open
// falls back to counting (or to admission on the second read) rather than
// trusting bytes it cannot read.
#include "storage/catalog_codec.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace tablestone::storage {
namespace {

// A table's catalog key is its account's prefix (what ListTables scans)
// followed by the name: the account, a NUL, the name, byte for byte.
TEST(CatalogKeyTest, IsTheAccountPrefixFollowedByTheName) {
  for (const std::string_view account : {"a", "devstoreaccount1", "anaccountnamelongerthanthirtytwobytes"}) {
    for (const std::string_view name : {"t", "mytable", "atablenamethatfillsseveralwordsofthekey"}) {
      const std::string key = CatalogKey(account, name);
      EXPECT_EQ(key, std::string(account) + std::string(1, '\0') + std::string(name));
      EXPECT_EQ(key.substr(0, account.size() + 1), CatalogAccountPrefix(account));
    }
  }
  // An account that is a prefix of another has keys outside the other's prefix.
  EXPECT_FALSE(CatalogKey("ab", "c").starts_with(CatalogAccountPrefix("a")));
}

TEST(EntityCountsCodecTest, RoundTripsAndRefusesMalformedValues) {
  EntityCounts counts;
  counts.sequence = 0x0102030405060708ull;
  counts.tables = {{1, 0}, {7, 50'000'000}, {~0ull, 3}};
  const std::string encoded = EncodeEntityCounts(counts);
  EXPECT_EQ(encoded.size(), 8u + 3 * 16);
  EntityCounts decoded;
  ASSERT_TRUE(DecodeEntityCounts(encoded, &decoded));
  EXPECT_EQ(decoded.sequence, counts.sequence);
  EXPECT_EQ(decoded.tables, counts.tables);

  EntityCounts none;
  none.sequence = 9;
  ASSERT_TRUE(DecodeEntityCounts(EncodeEntityCounts(none), &decoded));
  EXPECT_EQ(decoded.sequence, 9u);
  EXPECT_TRUE(decoded.tables.empty());

  EXPECT_FALSE(DecodeEntityCounts("", &decoded));
  EXPECT_FALSE(DecodeEntityCounts(encoded.substr(0, 7), &decoded));
  EXPECT_FALSE(DecodeEntityCounts(encoded.substr(0, encoded.size() - 1), &decoded));
  EXPECT_FALSE(DecodeEntityCounts(encoded.substr(0, 8 + 8), &decoded));  // a table id without its count
  EXPECT_NE(EntityCountsKey(), NextTableIdKey());
}

TEST(KeyListCodecTest, RoundTripsAndRefusesMalformedValues) {
  const std::vector<std::string> keys = {std::string("\0\0\0\0\0\0\0\x07p", 9), "", std::string(300, 'k')};
  std::vector<std::string> decoded = {"stale"};
  ASSERT_TRUE(DecodeKeyList(EncodeKeyList(keys), &decoded));
  EXPECT_EQ(decoded, keys);
  ASSERT_TRUE(DecodeKeyList(EncodeKeyList({}), &decoded));
  EXPECT_TRUE(decoded.empty());
  const std::string value = EncodeKeyList(keys);
  EXPECT_FALSE(DecodeKeyList(value.substr(0, value.size() - 1), &decoded));  // last key cut short
  EXPECT_FALSE(DecodeKeyList(value.substr(0, 5), &decoded));                 // size cut short
  EXPECT_NE(CachedPartitionsKey(), EntityCountsKey());
  EXPECT_NE(CachedPartitionsKey(), NextTableIdKey());
}

}  // namespace
}  // namespace tablestone::storage
