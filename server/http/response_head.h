// The head of a response as the session writes it: serialized without Beast's
// serializer, and checked so that no header field can split it on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// The framing the session settles for every response (BasicSession::FinishResponse): the body's
// length (unset: the response's own Content-Length fields stand, as for a HEAD answer) and whether
// the connection stays open.
struct HeadFraming {
  std::optional<uint64_t> content_length;
  bool keep_alive = true;
};

// What SerializeResponseHead returns instead of a field count when `response` holds a Connection
// or Transfer-Encoding field: Beast's own content_length() and keep_alive() rewrite those tokens,
// so the caller applies them to the response and serializes it as it then is.
inline constexpr size_t kHeadNeedsBeastFraming = static_cast<size_t>(-1);

// As above, for `response` framed by `framing` without changing its fields: byte for byte the head
// of the response after Beast's content_length(*framing.content_length) (when set) and
// keep_alive(framing.keep_alive), which move Content-Length to the end and add a Connection field
// when the version needs one to say `keep_alive`. Setting them in the response first cost a GET
// an element allocated, a tree search and a relink per field (docs/benchmarks.md, "GET against the
// floor, round 2"). The count includes the framing's own fields; kHeadNeedsBeastFraming (nothing
// appended) as above.
size_t SerializeResponseHead(const Response& response, const HeadFraming& framing, std::string* out);

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
