#include "storage/key_codec.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tablestone::storage {
namespace {

// Reference order: the service's ordinal comparison of UTF-16 code units.
std::u16string ToUtf16(const std::string& s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp;
    size_t len;
    if (c < 0x80) {
      cp = c, len = 1;
    } else if ((c >> 5) == 6) {
      cp = c & 0x1F, len = 2;
    } else if ((c >> 4) == 14) {
      cp = c & 0x0F, len = 3;
    } else {
      cp = c & 0x07, len = 4;
    }
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

bool ServiceLess(const std::pair<std::string, std::string>& a, const std::pair<std::string, std::string>& b) {
  auto ua = std::make_pair(ToUtf16(a.first), ToUtf16(a.second));
  auto ub = std::make_pair(ToUtf16(b.first), ToUtf16(b.second));
  return ua < ub;
}

std::string Key(std::string_view pk, std::string_view rk, uint64_t table = 7) {
  return EncodeEntityKey(table, pk, rk);
}

const char* const kSupplementary = "\xF0\x9F\x98\x80";  // U+1F600
const char* const kReplacement = "\xEF\xBF\xBD";         // U+FFFD
const char* const kPrivateUse = "\xEE\x80\x80";          // U+E000
const char* const kBeforeSurrogates = "\xED\x9F\xBF";    // U+D7FF

TEST(KeyCodecTest, PartitionKeyOrdersBeforeRowKey) {
  // All rows of partition "a" come before any row of "a0" or "ab".
  EXPECT_LT(Key("a", "zzzz"), Key("a0", ""));
  EXPECT_LT(Key("a", "\xF4\x8F\xBF\xBF"), Key("a0", ""));
  EXPECT_LT(Key("a0", "zzzz"), Key("ab", ""));
  EXPECT_LT(Key("a", ""), Key("a", "0"));
}

TEST(KeyCodecTest, NumericStringsSortOrdinally) {
  EXPECT_LT(Key("p", "10"), Key("p", "9"));
  EXPECT_LT(Key("p", "09"), Key("p", "10"));
  EXPECT_LT(Key("10", "x"), Key("9", "x"));
  EXPECT_LT(Key("1", "x"), Key("10", "x"));
}

TEST(KeyCodecTest, EmptyKeysSortFirst) {
  EXPECT_LT(Key("", ""), Key("", "a"));
  EXPECT_LT(Key("", "zzz"), Key("a", ""));
  EXPECT_LT(Key("", "\0"), Key("\x01", ""));
}

TEST(KeyCodecTest, SupplementaryCharactersSortLikeUtf16) {
  // .NET ordinal: U+1F600 is D83D DE00, below U+E000 and U+FFFD but above U+D7FF.
  EXPECT_LT(Key("p", kSupplementary), Key("p", kReplacement));
  EXPECT_LT(Key("p", kSupplementary), Key("p", kPrivateUse));
  EXPECT_LT(Key("p", kBeforeSurrogates), Key("p", kSupplementary));
  EXPECT_LT(Key(kSupplementary, "x"), Key(kReplacement, ""));
  // Plain UTF-8 byte order would say the opposite.
  EXPECT_GT(std::string(kSupplementary), std::string(kReplacement));
}

TEST(KeyCodecTest, NulBytesAreEscapedAndOrdered) {
  std::string a_nul("a\0", 2);
  EXPECT_LT(Key("a", "x"), Key(a_nul, ""));
  EXPECT_LT(Key(a_nul, "x"), Key("a\x01", ""));
  EXPECT_LT(Key("p", "a"), Key("p", a_nul));
  EXPECT_LT(Key("p", a_nul), Key("p", "a\x01"));
}

TEST(KeyCodecTest, TablesAreContiguousAndOrderedById) {
  EXPECT_LT(Key("zzz", "zzz", 1), Key("", "", 2));
  EXPECT_EQ(TableEnd(1), TableStart(2));
  EXPECT_LE(TableStart(3), Key("", "", 3));
  EXPECT_LT(Key("\xF4\x8F\xBF\xBF", "\xFF\xFF", 3), TableEnd(3));
  EXPECT_LT(TableStart(0x00FF), TableStart(0x0100));  // big-endian
}

TEST(KeyCodecTest, PartitionBoundsEncloseExactlyThePartition) {
  const std::vector<std::string> others = {"", "a", "a0", "ab", std::string("a\0", 2), "a\x01", "`", "b",
                                           kSupplementary};
  for (const std::string& pk : others) {
    std::string start = PartitionStart(7, pk);
    std::string end = PartitionEnd(7, pk);
    for (const std::string& rk : {std::string(), std::string("0"), std::string("\xFF\xFF"), std::string(1, '\0')}) {
      EXPECT_LE(start, Key(pk, rk));
      EXPECT_LT(Key(pk, rk), end);
    }
    for (const std::string& other : others) {
      if (other == pk) continue;
      bool before = ServiceLess({other, ""}, {pk, ""});
      for (const std::string& rk : {std::string(), std::string("zz")}) {
        if (before) {
          EXPECT_LT(Key(other, rk), start) << other << " vs " << pk;
        } else {
          EXPECT_GE(Key(other, rk), end) << other << " vs " << pk;
        }
      }
    }
  }
}

TEST(KeyCodecTest, SuccessorIsTheNextPossibleKey) {
  std::string k = Key("p", "r");
  EXPECT_LT(k, KeySuccessor(k));
  EXPECT_LT(KeySuccessor(k), Key("p", "r\x01"));
  EXPECT_LT(KeySuccessor(k), Key("p", std::string("r\0", 2)));
}

TEST(KeyCodecTest, RandomKeysSortInServiceOrder) {
  const std::vector<std::string> alphabet = {"a", "b", "0", "9", std::string(1, '\0'), "\x01", "\x7F", "\xC3\xA9",
                                             kBeforeSurrogates, kPrivateUse, kReplacement, kSupplementary,
                                             "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"};
  std::mt19937 rng(42);
  auto random_string = [&] {
    std::string s;
    int len = static_cast<int>(rng() % 4);
    for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  std::vector<std::pair<std::string, std::string>> keys;
  for (int i = 0; i < 600; ++i) keys.emplace_back(random_string(), random_string());
  std::vector<std::pair<std::string, std::string>> by_service = keys;
  std::stable_sort(by_service.begin(), by_service.end(), ServiceLess);
  std::vector<std::pair<std::string, std::string>> by_key = keys;
  std::stable_sort(by_key.begin(), by_key.end(),
                   [](const auto& a, const auto& b) { return Key(a.first, a.second) < Key(b.first, b.second); });
  ASSERT_EQ(by_service.size(), by_key.size());
  for (size_t i = 0; i < by_key.size(); ++i) {
    // Equal keys may appear in either order; compare the values.
    EXPECT_EQ(by_service[i], by_key[i]) << i;
  }
  // Distinct keys always encode differently.
  for (size_t i = 0; i + 1 < by_key.size(); ++i) {
    if (by_key[i] != by_key[i + 1]) {
      EXPECT_NE(Key(by_key[i].first, by_key[i].second), Key(by_key[i + 1].first, by_key[i + 1].second));
    }
  }
}

TEST(KeyCodecTest, DecodeInvertsEncodeForAnyBytes) {
  std::vector<std::string> samples = {"", "a", "p0", std::string("\0\0", 2), kSupplementary,
                                      std::string(kSupplementary) + kReplacement + "x",
                                      // Invalid UTF-8: raw surrogates (even a CESU-8 pair), stray bytes.
                                      "\xED\xA0\x80\xED\xB0\x80", "\xED\xA0", "\xED", "\xFF\xFE", "\xF0\x9F",
                                      "\xF4\x90\x80\x80", "\xC3", std::string("\xED\0\x01", 3)};
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    int len = static_cast<int>(rng() % 12);
    for (int j = 0; j < len; ++j) {
      // Bias towards the bytes the codec treats specially.
      static const unsigned char kSpecial[] = {0x00, 0x01, 0xED, 0xA0, 0xB0, 0xBF, 0xF0, 0x90, 0x80, 0xFF, 'a'};
      s.push_back(static_cast<char>(rng() % 2 ? kSpecial[rng() % sizeof kSpecial] : rng() % 256));
    }
    samples.push_back(s);
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::string& pk = samples[i];
    const std::string& rk = samples[(i * 7 + 3) % samples.size()];
    uint64_t table = 0;
    std::string dpk = "garbage to be replaced", drk;
    ASSERT_TRUE(DecodeEntityKey(EncodeEntityKey(123456789, pk, rk), &table, &dpk, &drk)) << i;
    EXPECT_EQ(table, 123456789u);
    EXPECT_EQ(dpk, pk) << i;
    EXPECT_EQ(drk, rk) << i;
  }
}

TEST(KeyCodecTest, RowKeyDecodesAfterThePartitionPrefix) {
  // What a scan does within a partition: the key's prefix is the partition's
  // PartitionStart, so only the RowKey is decoded. Keys with escapes and
  // surrogates on both sides.
  const std::vector<std::string> keys = {"", "a", std::string("\0z\0", 3), kSupplementary,
                                         std::string(kSupplementary) + kReplacement, "\xED\xA0"};
  for (const std::string& pk : keys) {
    const std::string prefix = PartitionStart(42, pk);
    for (const std::string& rk : keys) {
      const std::string key = EncodeEntityKey(42, pk, rk);
      ASSERT_TRUE(key.starts_with(prefix));
      std::string got = "garbage to be replaced";
      ASSERT_TRUE(DecodeEntityRowKey(key, prefix.size(), &got));
      EXPECT_EQ(got, rk);
      for (size_t n = prefix.size(); n < key.size(); ++n) {  // every truncation of the RowKey
        EXPECT_FALSE(DecodeEntityRowKey(key.substr(0, n), prefix.size(), &got)) << n;
      }
      EXPECT_FALSE(DecodeEntityRowKey(key + "x", prefix.size(), &got));
      EXPECT_FALSE(DecodeEntityRowKey(key, key.size() + 1, &got));
    }
  }
}

TEST(KeyCodecTest, DecodeRejectsMalformedKeys) {
  uint64_t table;
  std::string pk, rk;
  std::string good = Key("p", "r");
  EXPECT_FALSE(DecodeEntityKey("", &table, &pk, &rk));
  EXPECT_FALSE(DecodeEntityKey(good.substr(0, 5), &table, &pk, &rk));
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeEntityKey(good.substr(0, n), &table, &pk, &rk)) << n;
  }
  EXPECT_FALSE(DecodeEntityKey(good + "x", &table, &pk, &rk));
  std::string bad_escape = TableStart(1) + std::string("a\0\x05", 3) + std::string("\0\x01", 2);
  EXPECT_FALSE(DecodeEntityKey(bad_escape, &table, &pk, &rk));
  // A bare encoded surrogate that is not part of a pair never comes from the encoder.
  std::string lone = TableStart(1) + "\xED\xA0\x80" + std::string("\0\x01\0\x01", 4);
  EXPECT_FALSE(DecodeEntityKey(lone, &table, &pk, &rk));
  // Random garbage must never crash.
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    std::string s(rng() % 24, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng() % 256);
    (void)DecodeEntityKey(s, &table, &pk, &rk);
  }
}

}  // namespace
}  // namespace tablestone::storage
