#include "storage/model/datetime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace tablestone::model {
namespace {

constexpr int64_t kUnixEpochDays = kUnixEpochTicks / kTicksPerDay;  // 719162

// Howard Hinnant's days_from_civil, relative to 1970-01-01.
int64_t DaysFromCivilUnix(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t year;
  unsigned month, day, hour, minute, second;
  int64_t fraction;  // ticks within the second
  unsigned weekday;  // 0 = Sunday
};

Civil ToCivil(int64_t ticks) {
  int64_t days = ticks / kTicksPerDay;
  int64_t rem = ticks % kTicksPerDay;
  Civil c{};
  c.weekday = static_cast<unsigned>((days + 1) % 7);  // 0001-01-01 was a Monday
  int64_t z = days - kUnixEpochDays + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  c.day = doy - (153 * mp + 2) / 5 + 1;
  c.month = mp < 10 ? mp + 3 : mp - 9;
  c.year = static_cast<int64_t>(yoe) + era * 400 + (c.month <= 2);
  int64_t secs = rem / kTicksPerSecond;
  c.fraction = rem % kTicksPerSecond;
  c.hour = static_cast<unsigned>(secs / 3600);
  c.minute = static_cast<unsigned>(secs / 60 % 60);
  c.second = static_cast<unsigned>(secs % 60);
  return c;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

bool ReadDigits(std::string_view s, size_t& pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char ch = s[pos + i];
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  pos += n;
  out = v;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char ch) {
  if (pos >= s.size() || s[pos] != ch) return false;
  ++pos;
  return true;
}

}  // namespace

int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day) {
  return DaysFromCivilUnix(year, month, day) + kUnixEpochDays;
}

int64_t NowTicks() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ticks = std::chrono::duration_cast<std::chrono::duration<int64_t, std::ratio<1, 10'000'000>>>(now);
  return kUnixEpochTicks + ticks.count();
}

namespace {

// "00".."99": two digits per table lookup halve the divisions of a timestamp
// (three are formatted per entity of a query page: Timestamp, ETag, DateTime).
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

char* Put2(char* p, unsigned value) {
  std::memcpy(p, kDigitPairs + 2 * value, 2);
  return p + 2;
}

bool FormatDateTime7Fast(const Civil& c, char* buf) {
  if (c.year < 0 || c.year > 9999 || c.fraction < 0 || c.fraction > 9999999) return false;
  const auto year = static_cast<unsigned>(c.year);
  const auto fraction = static_cast<unsigned>(c.fraction);
  char* p = Put2(buf, year / 100);
  p = Put2(p, year % 100);
  *p++ = '-';
  p = Put2(p, c.month);
  *p++ = '-';
  p = Put2(p, c.day);
  *p++ = 'T';
  p = Put2(p, c.hour);
  *p++ = ':';
  p = Put2(p, c.minute);
  *p++ = ':';
  p = Put2(p, c.second);
  *p++ = '.';
  *p++ = static_cast<char>('0' + fraction / 1000000);
  p = Put2(p, fraction / 10000 % 100);
  p = Put2(p, fraction / 100 % 100);
  p = Put2(p, fraction % 100);
  *p = 'Z';
  return true;
}

// FormatDateTime7's text into buf (kDateTimeBufferSize bytes); returns its length.
size_t FormatDateTime7To(int64_t ticks, char* buf) {
  Civil c = ToCivil(ticks);
  if (FormatDateTime7Fast(c, buf)) return 28;
  int n = std::snprintf(buf, kDateTimeBufferSize, "%04lld-%02u-%02uT%02u:%02u:%02u.%07lldZ",
                        static_cast<long long>(c.year), c.month, c.day, c.hour, c.minute, c.second,
                        static_cast<long long>(c.fraction));
  return n < 0 ? 0 : std::min(static_cast<size_t>(n), kDateTimeBufferSize - 1);
}

}  // namespace

std::string FormatDateTime7(int64_t ticks) {
  char buf[kDateTimeBufferSize];
  return std::string(buf, FormatDateTime7To(ticks, buf));
}

size_t FormatDateTimeTrimmedTo(int64_t ticks, char* buf) {
  size_t n = FormatDateTime7To(ticks, buf);  // ...ss.fffffffZ
  if (n < 9) return n;
  const size_t dot = n - 9;
  size_t end = n - 1;  // position of 'Z'
  while (end > dot + 1 && buf[end - 1] == '0') --end;
  if (end == dot + 1) end = dot;  // whole second: drop the '.'
  buf[end] = 'Z';
  return end + 1;
}

std::string FormatDateTimeTrimmed(int64_t ticks) {
  char buf[kDateTimeBufferSize];
  return std::string(buf, FormatDateTimeTrimmedTo(ticks, buf));
}

std::string FormatRfc1123(int64_t ticks) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  Civil c = ToCivil(ticks);
  char buf[40];
  if (c.year >= 0 && c.year <= 9999) {  // "Sun, 06 Nov 1994 08:49:37 GMT" (29 chars), no snprintf
    char* p = buf;
    std::memcpy(p, kDays[c.weekday], 3);
    p += 3;
    *p++ = ',';
    *p++ = ' ';
    p = Put2(p, c.day);
    *p++ = ' ';
    std::memcpy(p, kMonths[c.month - 1], 3);
    p += 3;
    *p++ = ' ';
    p = Put2(p, static_cast<unsigned>(c.year / 100));
    p = Put2(p, static_cast<unsigned>(c.year % 100));
    *p++ = ' ';
    p = Put2(p, c.hour);
    *p++ = ':';
    p = Put2(p, c.minute);
    *p++ = ':';
    p = Put2(p, c.second);
    std::memcpy(p, " GMT", 4);
    p += 4;
    return std::string(buf, p);
  }
  std::snprintf(buf, sizeof buf, "%s, %02u %s %04lld %02u:%02u:%02u GMT", kDays[c.weekday], c.day,
                kMonths[c.month - 1], static_cast<long long>(c.year), c.hour, c.minute, c.second);
  return buf;
}

std::optional<int64_t> ParseIsoDateTime(std::string_view s) {
  size_t pos = 0;
  int64_t year, month, day, hour = 0, minute = 0, second = 0, fraction = 0;
  if (!ReadDigits(s, pos, 4, year) || !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, month) ||
      !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (year < 1 || month < 1 || month > 12 || day < 1 ||
      day > DaysInMonth(year, static_cast<unsigned>(month))) {
    return std::nullopt;
  }
  int64_t offset_minutes = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't') return std::nullopt;
    ++pos;
    if (!ReadDigits(s, pos, 2, hour) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, minute)) {
      return std::nullopt;
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!ReadDigits(s, pos, 2, second)) return std::nullopt;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        size_t digits = 0;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          if (digits < 7) fraction = fraction * 10 + (s[pos] - '0');
          ++digits;
          ++pos;
        }
        if (digits == 0) return std::nullopt;
        for (size_t i = digits; i < 7; ++i) fraction *= 10;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
    if (pos < s.size()) {
      char z = s[pos];
      if (z == 'Z' || z == 'z') {
        ++pos;
      } else if (z == '+' || z == '-') {
        ++pos;
        int64_t oh, om;
        if (!ReadDigits(s, pos, 2, oh) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, om) || oh > 23 ||
            om > 59) {
          return std::nullopt;
        }
        offset_minutes = (oh * 60 + om) * (z == '+' ? 1 : -1);
      } else {
        return std::nullopt;
      }
    }
  }
  if (pos != s.size()) return std::nullopt;
  int64_t ticks = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * kTicksPerDay +
                  ((hour * 60 + minute) * 60 + second) * kTicksPerSecond + fraction -
                  offset_minutes * 60 * kTicksPerSecond;
  if (ticks < 0) return std::nullopt;
  return ticks;
}

std::optional<int64_t> ParseRfc1123(std::string_view s) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // "Tue, 09 Nov 2021 01:43:40 GMT"
  if (s.size() != 29 || s[3] != ',' || s[4] != ' ' || s.substr(25) != " GMT") return std::nullopt;
  size_t pos = 5;
  int64_t day, year, hour, minute, second;
  if (!ReadDigits(s, pos, 2, day) || !Expect(s, pos, ' ')) return std::nullopt;
  int month = 0;
  for (int i = 0; i < 12; ++i) {
    if (s.substr(pos, 3) == kMonths[i]) month = i + 1;
  }
  if (month == 0) return std::nullopt;
  pos += 3;
  if (!Expect(s, pos, ' ') || !ReadDigits(s, pos, 4, year) || !Expect(s, pos, ' ') ||
      !ReadDigits(s, pos, 2, hour) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, minute) ||
      !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, second)) {
    return std::nullopt;
  }
  if (year < 1 || day < 1 || day > DaysInMonth(year, static_cast<unsigned>(month)) || hour > 23 ||
      minute > 59 || second > 60) {
    return std::nullopt;
  }
  return DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * kTicksPerDay +
         ((hour * 60 + minute) * 60 + second) * kTicksPerSecond;
}

}  // namespace tablestone::model
