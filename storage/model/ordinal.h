// Ordinal string order of the Table service: .NET String.CompareOrdinal, i.e.
// comparison by UTF-16 code unit, computed directly on UTF-8 text.
//
// Why it differs from a plain byte compare: UTF-8 byte order is code point
// order. UTF-16 code-unit order agrees with it except that supplementary
// characters (U+10000.., encoded as surrogates D800..DFFF) sort *below*
// U+E000..U+FFFF. In UTF-8, U+E000..U+FFFF start with lead byte 0xEE/0xEF and
// supplementary characters with 0xF0..0xF4, and since the common prefix of two
// strings is identical, the first differing byte is either a continuation byte
// in both (same lead byte, order agrees) or a lead byte in both. So swapping
// the rank of {0xEE,0xEF} and {0xF0..0xFF} at the first difference yields
// UTF-16 order. Invalid UTF-8 still gets a consistent total order.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace tablestone::model {

// Rank of a byte at the first difference; see above.
inline unsigned OrdinalByteRank(unsigned char c) {
  if (c >= 0xF0) return c - 2u;                  // F0..FF -> EE..FD
  if (c == 0xEE || c == 0xEF) return c + 0x10u;  // EE..EF -> FE..FF
  return c;
}

// <0, 0, >0 as a sorts before, equal to, or after b in UTF-16 ordinal order.
inline int CompareUtf16Ordinal(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  const auto* pa = reinterpret_cast<const unsigned char*>(a.data());
  const auto* pb = reinterpret_cast<const unsigned char*>(b.data());
  // memcmp finds equality fast; then locate the first differing byte.
  if (n != 0 && std::memcmp(pa, pb, n) != 0) {
    size_t i = 0;
    while (pa[i] == pb[i]) ++i;
    return static_cast<int>(OrdinalByteRank(pa[i])) - static_cast<int>(OrdinalByteRank(pb[i]));
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

}  // namespace tablestone::model
