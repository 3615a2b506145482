#include "storage/model/datetime.h"

#include <gtest/gtest.h>

namespace tablestone::model {
namespace {

// 2021-06-09T01:17:08.3795894Z, the timestamp of a recorded service response.
int64_t Sample() {
  return DaysFromCivil(2021, 6, 9) * kTicksPerDay + ((1 * 60 + 17) * 60 + 8) * kTicksPerSecond + 3'795'894;
}

TEST(DateTimeTest, EpochConstantsAgreeWithCivilCalendar) {
  EXPECT_EQ(DaysFromCivil(1, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1970, 1, 1) * kTicksPerDay, kUnixEpochTicks);
  EXPECT_EQ(DaysFromCivil(1601, 1, 1) * kTicksPerDay, kMinDateTimeTicks);
  EXPECT_EQ(DaysFromCivil(10000, 1, 1) * kTicksPerDay - 1, kMaxDateTimeTicks);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1) - DaysFromCivil(2000, 2, 28), 2);  // 2000 is a leap year
  EXPECT_EQ(DaysFromCivil(1900, 3, 1) - DaysFromCivil(1900, 2, 28), 1);  // 1900 is not
}

TEST(DateTimeTest, FormatTrimmedDropsTrailingZerosLikeTheService) {
  const int64_t whole = Sample() - 3'795'894;
  EXPECT_EQ(FormatDateTimeTrimmed(Sample()), "2021-06-09T01:17:08.3795894Z");
  EXPECT_EQ(FormatDateTimeTrimmed(whole), "2021-06-09T01:17:08Z");
  EXPECT_EQ(FormatDateTimeTrimmed(whole + 5'000'000), "2021-06-09T01:17:08.5Z");
  EXPECT_EQ(FormatDateTimeTrimmed(whole + 1), "2021-06-09T01:17:08.0000001Z");
  EXPECT_EQ(FormatDateTimeTrimmed(whole + 1'200'000), "2021-06-09T01:17:08.12Z");
  EXPECT_EQ(FormatDateTimeTrimmed(kMaxDateTimeTicks), "9999-12-31T23:59:59.9999999Z");
  EXPECT_EQ(FormatDateTimeTrimmed(kMinDateTimeTicks), "1601-01-01T00:00:00Z");
}

TEST(DateTimeTest, Format7AlwaysHasSevenDigits) {
  EXPECT_EQ(FormatDateTime7(Sample() - 3'795'894), "2021-06-09T01:17:08.0000000Z");
  EXPECT_EQ(FormatDateTime7(Sample()), "2021-06-09T01:17:08.3795894Z");
}

TEST(DateTimeTest, Rfc1123FormatAndParse) {
  int64_t t = DaysFromCivil(2021, 11, 9) * kTicksPerDay + ((1 * 60 + 43) * 60 + 40) * kTicksPerSecond;
  EXPECT_EQ(FormatRfc1123(t), "Tue, 09 Nov 2021 01:43:40 GMT");
  EXPECT_EQ(ParseRfc1123("Tue, 09 Nov 2021 01:43:40 GMT"), t);
  EXPECT_EQ(FormatRfc1123(kUnixEpochTicks), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_FALSE(ParseRfc1123("Tue, 09 Foo 2021 01:43:40 GMT").has_value());
  EXPECT_FALSE(ParseRfc1123("Tue, 31 Nov 2021 01:43:40 GMT").has_value());
  EXPECT_FALSE(ParseRfc1123("Tue, 09 Nov 2021 01:43:40 UTC").has_value());
  EXPECT_FALSE(ParseRfc1123("").has_value());
}

TEST(DateTimeTest, ParseIsoRoundTripsFormattedValues) {
  for (int64_t t : {Sample(), kMinDateTimeTicks, kMaxDateTimeTicks, kUnixEpochTicks, Sample() + 1}) {
    EXPECT_EQ(ParseIsoDateTime(FormatDateTimeTrimmed(t)), t) << t;
    EXPECT_EQ(ParseIsoDateTime(FormatDateTime7(t)), t) << t;
  }
}

TEST(DateTimeTest, ParseIsoAcceptsZonesDateOnlyAndLongFractions) {
  const int64_t whole = Sample() - 3'795'894;
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T01:17:08Z"), whole);
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T01:17:08"), whole);  // no zone = UTC
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T01:17:08+00:00"), whole);
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T02:17:08+01:00"), whole);
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T00:47:08-00:30"), whole);
  EXPECT_EQ(ParseIsoDateTime("2021-06-09t01:17:08z"), whole);
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T01:17Z"), whole - 8 * kTicksPerSecond);
  EXPECT_EQ(ParseIsoDateTime("2021-06-09"), DaysFromCivil(2021, 6, 9) * kTicksPerDay);
  // More than 7 fraction digits are truncated, not rounded.
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T01:17:08.379589499Z"), Sample());
  EXPECT_EQ(ParseIsoDateTime("2021-06-09T01:17:08.3Z"), whole + 3'000'000);
}

TEST(DateTimeTest, ParseIsoRejectsMalformedInput) {
  for (const char* bad : {"", "abc", "2021-6-09", "2021-02-30", "2021-13-01", "2021-00-10", "2021-06-09T25:00:00Z",
                          "2021-06-09T01:60:00Z", "2021-06-09T01:17:08.Z", "2021-06-09T01:17:08ZZ",
                          "2021-06-09 01:17:08Z", "2021-06-09T01:17:08+0100", "0000-01-01"}) {
    EXPECT_FALSE(ParseIsoDateTime(bad).has_value()) << bad;
  }
  EXPECT_TRUE(ParseIsoDateTime("2024-02-29").has_value());
  EXPECT_FALSE(ParseIsoDateTime("2023-02-29").has_value());
}

TEST(DateTimeTest, NowIsRecentAndAdvances) {
  int64_t a = NowTicks();
  EXPECT_GT(a, DaysFromCivil(2020, 1, 1) * kTicksPerDay);
  EXPECT_LT(a, kMaxDateTimeTicks);
  EXPECT_GE(NowTicks(), a);
}

}  // namespace
}  // namespace tablestone::model

namespace tablestone::model {
namespace {

// The digit-pair formatter against the (independently written) parser over the
// whole calendar: every formatted text parses back to the same ticks, and the
// trimmed and buffer forms agree with the 7-digit one.
TEST(DateTimeFormatTest, RoundTripsThroughTheParserAcrossTheCalendar) {
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const int64_t max_ticks = kMaxDateTimeTicks;
  for (int i = 0; i < 20000; ++i) {
    int64_t ticks = static_cast<int64_t>(next() % static_cast<uint64_t>(max_ticks));
    if (i % 3 == 0) ticks -= ticks % kTicksPerSecond;      // whole seconds: no fraction
    if (i % 7 == 0) ticks -= ticks % 100'000;              // short fractions
    const std::string seven = FormatDateTime7(ticks);
    ASSERT_EQ(seven.size(), 28u) << ticks;
    ASSERT_EQ(ParseIsoDateTime(seven), ticks) << seven;
    const std::string trimmed = FormatDateTimeTrimmed(ticks);
    ASSERT_EQ(ParseIsoDateTime(trimmed), ticks) << trimmed;
    char buf[kDateTimeBufferSize];
    ASSERT_EQ(std::string(buf, FormatDateTimeTrimmedTo(ticks, buf)), trimmed);
  }
  EXPECT_EQ(FormatDateTime7(0), "0001-01-01T00:00:00.0000000Z");
  EXPECT_EQ(FormatDateTimeTrimmed(kMaxDateTimeTicks), "9999-12-31T23:59:59.9999999Z");
}

}  // namespace
}  // namespace tablestone::model
