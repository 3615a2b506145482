#include "server/http/response_head.h"

#include <boost/beast/http/status.hpp>
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tablestone::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

bool HasLineBreak(std::string_view s) {
  for (char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') return true;
  }
  return false;
}

size_t DropUnsafeHeaderFields(Response* response) {
  size_t dropped = 0;
  for (auto it = response->begin(); it != response->end();) {
    if (HasLineBreak(it->name_string()) || HasLineBreak(it->value())) {
      it = response->erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  return dropped;
}

namespace {

// The Connection value Beast's keep_alive() leaves in a response without one (its
// detail::keep_alive_impl on an empty value): HTTP/1.0 says keep-alive, HTTP/1.1 says close; the
// other two cases need no field.
std::string_view ConnectionValue(unsigned version, bool keep_alive) {
  if (version < 11) return keep_alive ? std::string_view("keep-alive") : std::string_view();
  return keep_alive ? std::string_view() : std::string_view("close");
}

// `framing` null: the response's fields as they are.
size_t SerializeHead(const Response& response, const HeadFraming* framing, std::string* out) {
  // The start line as basic_fields::writer builds it: "HTTP/X.Y ### reason\r\n".
  const unsigned version = response.version();
  const unsigned code = response.result_int();
  char start[13] = {'H',
                    'T',
                    'T',
                    'P',
                    '/',
                    static_cast<char>('0' + version / 10),
                    '.',
                    static_cast<char>('0' + version % 10),
                    ' ',
                    static_cast<char>('0' + code / 100),
                    static_cast<char>('0' + (code / 10) % 10),
                    static_cast<char>('0' + code % 10),
                    ' '};
  beast::string_view reason = response.reason();
  if (reason.empty()) reason = bhttp::obsolete_reason(static_cast<bhttp::status>(code));
  size_t size = sizeof start + reason.size() + 4;
  size_t fields = 0;
  // The framing's fields: Content-Length (every one the response holds is replaced) and Connection.
  const bool own_length = framing != nullptr && framing->content_length.has_value();
  char length[24];
  size_t length_size = 0;
  std::string_view connection;
  if (framing != nullptr) {
    if (own_length) {
      length_size = static_cast<size_t>(std::to_chars(length, length + sizeof length, *framing->content_length).ptr - length);
      size += sizeof "Content-Length: " - 1 + length_size + 2;
      ++fields;
    }
    connection = ConnectionValue(version, framing->keep_alive);
    if (!connection.empty()) {
      size += sizeof "Connection: " - 1 + connection.size() + 2;
      ++fields;
    }
  }
  for (const auto& field : response) {
    if (framing != nullptr) {
      const bhttp::field name = field.name();
      if (name == bhttp::field::connection || name == bhttp::field::transfer_encoding) return kHeadNeedsBeastFraming;
      if (own_length && name == bhttp::field::content_length) continue;
    }
    size += field.name_string().size() + field.value().size() + 4;
    ++fields;
  }
  // Sized once and filled through a pointer: appended piece by piece (four
  // appends a field), the string's capacity checks cost more than the copies.
  const size_t at = out->size();
  out->resize(at + size);
  char* p = out->data() + at;
  const auto put = [&p](const char* data, size_t n) {
    std::memcpy(p, data, n);
    p += n;
  };
  put(start, sizeof start);
  put(reason.data(), reason.size());
  put("\r\n", 2);
  for (const auto& field : response) {
    if (own_length && field.name() == bhttp::field::content_length) continue;
    const beast::string_view name = field.name_string();
    const beast::string_view value = field.value();
    put(name.data(), name.size());
    put(": ", 2);
    put(value.data(), value.size());
    put("\r\n", 2);
  }
  if (own_length) {
    put("Content-Length: ", sizeof "Content-Length: " - 1);
    put(length, length_size);
    put("\r\n", 2);
  }
  if (!connection.empty()) {
    put("Connection: ", sizeof "Connection: " - 1);
    put(connection.data(), connection.size());
    put("\r\n", 2);
  }
  put("\r\n", 2);
  return fields;
}

}  // namespace

size_t SerializeResponseHead(const Response& response, std::string* out) {
  return SerializeHead(response, nullptr, out);
}

size_t SerializeResponseHead(const Response& response, const HeadFraming& framing, std::string* out) {
  return SerializeHead(response, &framing, out);
}

bool HeadHasOnlyItsOwnLineBreaks(std::string_view head, size_t fields) {
  // One pass, 16 bytes per step where SSE2 is there (every x86-64): each
  // byte's compare result (0 or -1) is subtracted into per-lane counters,
  // summed before they can wrap: one pass instead of a memchr per line break.
  const char* p = head.data();
  const size_t n = head.size();
  size_t cr = 0;
  size_t lf = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  const __m128i cr_bytes = _mm_set1_epi8('\r');
  const __m128i lf_bytes = _mm_set1_epi8('\n');
  __m128i nul = zero;
  auto lane_sum = [&zero](__m128i counts) {
    const __m128i sums = _mm_sad_epu8(counts, zero);
    return static_cast<size_t>(_mm_cvtsi128_si64(sums)) +
           static_cast<size_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  };
  while (i + 16 <= n) {
    __m128i cr_counts = zero;
    __m128i lf_counts = zero;
    for (int steps = 0; steps < 255 && i + 16 <= n; ++steps, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      cr_counts = _mm_sub_epi8(cr_counts, _mm_cmpeq_epi8(v, cr_bytes));
      lf_counts = _mm_sub_epi8(lf_counts, _mm_cmpeq_epi8(v, lf_bytes));
      nul = _mm_or_si128(nul, _mm_cmpeq_epi8(v, zero));
    }
    cr += lane_sum(cr_counts);
    lf += lane_sum(lf_counts);
  }
  if (_mm_movemask_epi8(nul) != 0) return false;
#endif
  for (; i < n; ++i) {
    const char c = p[i];
    if (c == '\0') return false;
    cr += c == '\r';
    lf += c == '\n';
  }
  return cr == fields + 2 && lf == fields + 2;
}

}  // namespace tablestone::http
