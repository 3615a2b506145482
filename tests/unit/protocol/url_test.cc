#include "protocol/url.h"

#include <gtest/gtest.h>

#include <string>

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

// Copies share their parameters until one changes (QueryMemo hands out copies of one parse):
// a change through any non-const member reaches only the object changed.
TEST(UrlTest, QueryParamsCopiesAreIndependent) {
  const QueryParams original = {{"sv", "2019-02-02"}, {"sig", "a"}};
  QueryParams copy = original;
  EXPECT_EQ(copy, original);
  copy.find("sig")->second = "b";
  EXPECT_EQ(*FindQueryParam(original, "sig"), "a");
  EXPECT_EQ(*FindQueryParam(copy, "sig"), "b");
  EXPECT_FALSE(copy == original);

  QueryParams appended = original;
  appended.emplace("sp", "r");
  EXPECT_EQ(original.size(), 2u);
  EXPECT_EQ(appended.size(), 3u);

  QueryParams through_iterator = original;
  for (auto& [name, value] : through_iterator) value += "!";
  EXPECT_EQ(*FindQueryParam(original, "sv"), "2019-02-02");
  EXPECT_EQ(*FindQueryParam(through_iterator, "sv"), "2019-02-02!");

  QueryParams source = {{"x", "1"}};
  const QueryParams kept = source;
  source.find("x")->second = "2";  // the first copy changed, not the later one
  EXPECT_EQ(*FindQueryParam(kept, "x"), "1");

  const QueryParams none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.begin(), none.end());
  EXPECT_EQ(none, QueryParams());
  EXPECT_EQ(FindQueryParam(none, "x"), nullptr);
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

// The word-at-a-time run scan against a bytewise reference: '%' and '+' at
// every offset of strings that cross several 8-byte words.
TEST(UrlTest, PercentDecodeFindsEscapesAtEveryOffset) {
  auto reference = [](std::string_view in, bool plus_is_space) {
    std::string out;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] == '%') {
        out += static_cast<char>(std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        out += (plus_is_space && in[i] == '+') ? ' ' : in[i];
      }
    }
    return out;
  };
  for (size_t len : {3u, 8u, 11u, 17u, 26u}) {
    for (size_t pos = 0; pos + 3 <= len; ++pos) {
      for (const char* esc : {"%41", "+xy", "%2B", "%25"}) {
        std::string text(len, 'q');
        text.replace(pos, 3, esc);
        if (pos + 6 <= len) text.replace(pos + 3, 3, "%7e");  // two in a row
        EXPECT_EQ(PercentDecodeQuery(text).value(), reference(text, true)) << text;
        EXPECT_EQ(PercentDecodePath(text).value(), reference(text, false)) << text;
      }
    }
    std::string bad(len, 'q');
    bad[len - 1] = '%';
    EXPECT_FALSE(PercentDecodeQuery(bad).has_value()) << bad;
  }
}

TEST(UrlTest, PercentEncodeKeepsUnreservedAndRequested) {
  EXPECT_EQ(PercentEncode("a b:c/d'~"), "a%20b%3Ac%2Fd%27~");
  EXPECT_EQ(PercentEncode("it''s", "'"), "it''s");
}

TEST(UrlTest, ParsesAbsoluteFormTargets) {
  auto a = ParseAbsoluteTarget("https://Host:443?comp=properties");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->scheme, "https");
  EXPECT_EQ(a->authority, "Host:443");
  EXPECT_EQ(a->origin_form, "/?comp=properties");
  auto b = ParseAbsoluteTarget("http://[::1]:10002/devstoreaccount1/Tables('t')");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->authority, "[::1]:10002");
  EXPECT_EQ(b->origin_form, "/devstoreaccount1/Tables('t')");
  EXPECT_FALSE(ParseAbsoluteTarget("/devstoreaccount1/Tables").has_value());
  EXPECT_FALSE(ParseAbsoluteTarget("http://h#frag").has_value());
  EXPECT_TRUE(SameAuthority("https", "host:443", "HOST"));
  EXPECT_TRUE(SameAuthority("http", "host", "host:80"));
  EXPECT_FALSE(SameAuthority("http", "host:443", "host"));
  EXPECT_FALSE(SameAuthority("http", "host:10002", "host:10001"));
}

}  // namespace
}  // namespace tablestone::protocol
