#include "protocol/url.h"

#include <gtest/gtest.h>

namespace tablestone::protocol {
namespace {

TEST(UrlTest, PathDecodingKeepsPlus) {
  EXPECT_EQ(PercentDecodePath("a+b%20c%27").value(), "a+b c'");
  EXPECT_FALSE(PercentDecodePath("%G1").has_value());
  EXPECT_FALSE(PercentDecodePath("abc%2").has_value());
  EXPECT_FALSE(PercentDecodePath("%").has_value());
}

TEST(UrlTest, QueryDecodingTurnsPlusIntoSpace) {
  EXPECT_EQ(PercentDecodeQuery("PartitionKey+eq+%27a%2Bb%27").value(), "PartitionKey eq 'a+b'");
}

TEST(UrlTest, ParsesQueryStringInOrder) {
  auto q = ParseQueryString("$filter=a%20eq%201&$top=5&flag&&x=1&x=2");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(*FindQueryParam(*q, "$filter"), "a eq 1");
  EXPECT_EQ(*FindQueryParam(*q, "$top"), "5");
  EXPECT_EQ(*FindQueryParam(*q, "flag"), "");
  EXPECT_EQ(q->count("x"), 2u);
  EXPECT_EQ(*FindQueryParam(*q, "x"), "1");
  EXPECT_EQ(FindQueryParam(*q, "missing"), nullptr);
  EXPECT_FALSE(ParseQueryString("a=%zz").has_value());
}

TEST(UrlTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // > U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

TEST(UrlTest, PercentEncodeKeepsUnreservedAndRequested) {
  EXPECT_EQ(PercentEncode("a b:c/d'~"), "a%20b%3Ac%2Fd%27~");
  EXPECT_EQ(PercentEncode("it''s", "'"), "it''s");
}

}  // namespace
}  // namespace tablestone::protocol
