#include "storage/model/etag.h"

#include <gtest/gtest.h>

#include "storage/model/datetime.h"

namespace tablestone::model {
namespace {

constexpr const char* kSampleETag = "W/\"datetime'2021-06-09T01%3A17%3A08.3795894Z'\"";

int64_t Sample() { return *ParseIsoDateTime("2021-06-09T01:17:08.3795894Z"); }

TEST(ETagTest, FormatMatchesTheServiceShape) {
  EXPECT_EQ(FormatETag(Sample()), kSampleETag);
  EXPECT_EQ(FormatETag(Sample() - 3'795'894), "W/\"datetime'2021-06-09T01%3A17%3A08Z'\"");
  std::string appended = "x";
  AppendETag(appended, Sample());
  EXPECT_EQ(appended, std::string("x") + kSampleETag);
}

// The stack-buffer form (the query page's, protocol/odata_writer.cc) writes
// the same text, up to the longest date-times the ticks can name.
TEST(ETagTest, FormatToABufferWritesTheSameText) {
  const int64_t last = ParseIsoDateTime("9999-12-31T23:59:59.9999999Z").value_or(0);
  for (int64_t ticks : {Sample(), Sample() - 3'795'894, int64_t{0}, last}) {
    char buf[kETagBufferSize];
    const size_t n = FormatETagTo(ticks, buf);
    ASSERT_LE(n, kETagBufferSize);
    EXPECT_EQ(std::string(buf, n), FormatETag(ticks)) << ticks;
  }
}

TEST(ETagTest, ParseAcceptsStarAndWellFormedETags) {
  IfMatch m;
  ASSERT_TRUE(ParseIfMatch("*", &m));
  EXPECT_EQ(m.kind, IfMatch::Kind::kAny);
  ASSERT_TRUE(ParseIfMatch(kSampleETag, &m));
  EXPECT_EQ(m.kind, IfMatch::Kind::kTimestamp);
  EXPECT_EQ(m.ticks, Sample());
  // Colons not percent-encoded, lower-case encoding, lower-case 'w', whitespace.
  for (const char* v : {"W/\"datetime'2021-06-09T01:17:08.3795894Z'\"",
                        "W/\"datetime'2021-06-09T01%3a17%3a08.3795894Z'\"",
                        "w/\"datetime'2021-06-09T01%3A17%3A08.3795894Z'\"",
                        "  W/\"datetime'2021-06-09T01%3A17%3A08.3795894Z'\"\t"}) {
    IfMatch x;
    ASSERT_TRUE(ParseIfMatch(v, &x)) << v;
    EXPECT_EQ(x.kind, IfMatch::Kind::kTimestamp) << v;
    EXPECT_EQ(x.ticks, Sample()) << v;
  }
}

TEST(ETagTest, WeakETagsOfOtherShapesNeverMatch) {
  IfMatch m;
  ASSERT_TRUE(ParseIfMatch("W/\"0x8D9C0F1B2A3E4F5\"", &m));
  EXPECT_EQ(m.kind, IfMatch::Kind::kNever);
  ASSERT_TRUE(ParseIfMatch("W/\"datetime'not-a-date'\"", &m));
  EXPECT_EQ(m.kind, IfMatch::Kind::kNever);
}

TEST(ETagTest, MalformedValuesAreRejected) {
  IfMatch m;
  for (const char* bad : {"", "abc", "\"strong\"", "W/", "W/\"unterminated", "**"}) {
    EXPECT_FALSE(ParseIfMatch(bad, &m)) << bad;
  }
}

TEST(ETagTest, FormatThenParseRoundTrips) {
  for (int64_t t : {Sample(), Sample() + 1, Sample() - 3'795'894, kMinDateTimeTicks, kMaxDateTimeTicks}) {
    IfMatch m;
    ASSERT_TRUE(ParseIfMatch(FormatETag(t), &m));
    EXPECT_EQ(m.kind, IfMatch::Kind::kTimestamp);
    EXPECT_EQ(m.ticks, t);
  }
}

}  // namespace
}  // namespace tablestone::model
