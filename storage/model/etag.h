// ETags are derived from the entity Timestamp, exactly as the service forms them:
//   W/"datetime'2021-06-09T01%3A17%3A08.3795894Z'"
// (trimmed 7-digit time, ':' percent-encoded). See Learn: update-entity2
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tablestone::model {

std::string FormatETag(int64_t timestamp_ticks);
// Appends the same text to `out` (no temporary; query pages write one per entity).
void AppendETag(std::string& out, int64_t timestamp_ticks);
// Writes the same text to `buf` (no terminator) and returns its length: for
// a caller that escapes or copies it from its own stack, with no allocation.
// Room for the longest ETag: its fixed text, the date-time, two colons
// encoded as %3A.
inline constexpr size_t kETagBufferSize = 64;
size_t FormatETagTo(int64_t timestamp_ticks, char (&buf)[kETagBufferSize]);

// What an If-Match header asks for.
struct IfMatch {
  enum class Kind : uint8_t {
    kNone,       // no If-Match header: upsert semantics
    kAny,        // If-Match: *  (entity must exist)
    kTimestamp,  // a well-formed ETag: must equal the entity's timestamp
    kNever,      // a well-formed weak ETag that no entity can have: always 412
  };
  Kind kind = Kind::kNone;
  int64_t ticks = 0;
};

// Parses an If-Match value ('*', or W/"datetime'...'" with the colons encoded or
// not). Returns false when the value is malformed (the caller answers 400).
bool ParseIfMatch(std::string_view header, IfMatch* out);

}  // namespace tablestone::model
