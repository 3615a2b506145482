// Time in the Table service's resolution: ticks of 100 ns since
// 0001-01-01T00:00:00Z (the .NET DateTime epoch), always UTC.
//
// Edm.DateTime values are limited to 1601-01-01T00:00:00Z ..
// 9999-12-31T23:59:59.9999999Z (kMinDateTimeTicks..kMaxDateTimeTicks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tablestone::model {

inline constexpr int64_t kTicksPerSecond = 10'000'000;
inline constexpr int64_t kTicksPerDay = kTicksPerSecond * 86'400;
// Ticks at 1970-01-01T00:00:00Z.
inline constexpr int64_t kUnixEpochTicks = 621'355'968'000'000'000;
// 1601-01-01T00:00:00Z.
inline constexpr int64_t kMinDateTimeTicks = 504'911'232'000'000'000;
// 9999-12-31T23:59:59.9999999Z.
inline constexpr int64_t kMaxDateTimeTicks = 3'155'378'975'999'999'999;

// Current UTC time in ticks (system clock; not monotonic).
int64_t NowTicks();

// "yyyy-MM-ddTHH:mm:ss.fffffffZ" with trailing fraction zeros trimmed and the
// '.' dropped when the fraction is zero, as the service prints Timestamp and
// Edm.DateTime values (.NET "yyyy-MM-ddTHH:mm:ss.FFFFFFFZ").
std::string FormatDateTimeTrimmed(int64_t ticks);
// The same text written into `buf` (at least kDateTimeBufferSize bytes, no
// terminator); returns its length. For hot paths that append to a larger
// buffer (query pages format three date-times per entity).
inline constexpr size_t kDateTimeBufferSize = 40;
size_t FormatDateTimeTrimmedTo(int64_t ticks, char* buf);
// Always 7 fraction digits (error bodies, ACL Start/Expiry).
std::string FormatDateTime7(int64_t ticks);
// RFC 1123, e.g. "Tue, 09 Nov 2021 01:43:40 GMT" (HTTP Date headers).
std::string FormatRfc1123(int64_t ticks);

// Parses ISO 8601 "yyyy-MM-ddTHH:mm:ss[.f{1,7}](Z|+00:00|-hh:mm|)" and
// date-only "yyyy-MM-dd". More than 7 fraction digits are truncated. A missing
// zone means UTC. Returns nullopt for anything else (including out-of-calendar
// dates). Does not apply the Edm.DateTime range; callers check it.
std::optional<int64_t> ParseIsoDateTime(std::string_view text);
// Parses RFC 1123 dates ("Tue, 09 Nov 2021 01:43:40 GMT").
std::optional<int64_t> ParseRfc1123(std::string_view text);

// Days from civil date (proleptic Gregorian), 0001-01-01 = day 0.
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

}  // namespace tablestone::model
