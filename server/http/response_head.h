// The head of a response as the session writes it: serialized without Beast's
// serializer, and checked so that no header field can split it on the wire.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "server/http/handler.h"

namespace tablestone::http {

// True if `s` holds a byte that would end a header line early (CR, LF) or
// that receivers treat as the end of the value (NUL).
bool HasLineBreak(std::string_view s);

// Appends the status line and header block of `response` (through the blank
// line) to `*out`, byte for byte what Beast's serializer sends for it: Beast's
// buffer-sequence machinery cost more than the rest of the write. Not for
// chunked messages (the session never sends those; it falls back to Beast).
// Returns the number of header fields written.
size_t SerializeResponseHead(const Response& response, std::string* out);

// True if `head` (SerializeResponseHead's output, `fields` fields) holds no
// CR, LF or NUL but the line ends it wrote itself: exactly fields + 2 of each
// of CR and LF (status line, fields, blank line) and no NUL, so any such byte
// inside a reason, name or value makes it false. One pass over the head
// costs a point request far less than checking each field.
bool HeadHasOnlyItsOwnLineBreaks(std::string_view head, size_t fields);

// Removes every field of `response` whose name or value holds CR, LF or NUL
// (they would split the header block on the wire); returns how many. The
// session runs it on a response whose serialized head fails the test above
// (then serializes again), and on every chunked one.
size_t DropUnsafeHeaderFields(Response* response);

}  // namespace tablestone::http
