// Key encoding; see key_codec.h and docs/storage-format.md.
//
// Enc(text), byte by byte over the UTF-8 input:
//   00                              -> 00 FF   (escaped NUL)
//   ED A0..BF (a UTF-8-encoded surrogate, never valid UTF-8)
//                                   -> 00 FE ED, the rest copied as is
//   valid 4-byte sequence (U+10000..U+10FFFF)
//                                   -> ED A0..AF xx ED B0..BF xx (CESU-8 pair)
//   any other byte                  -> itself
// Terminator: 00 01.
//
// Why CESU-8: UTF-8 byte order equals code point order, which puts U+10000
// above U+FFFD; the service compares UTF-16 code units (ordinal), where the
// surrogates D800..DFFF sort below E000..FFFF. Writing supplementary
// characters as surrogates gives exactly that order with a plain bytewise
// comparator. The 00 FE escape keeps the encoding injective for raw
// surrogate bytes in (invalid) input, which would otherwise be confused with
// an encoded pair on decoding.
#include "storage/key_codec.h"

namespace tablestone::storage {
namespace {

inline bool IsCont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of a valid 4-byte UTF-8 sequence at s[i], or 0.
inline size_t FourByteAt(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return 0;
  auto b0 = static_cast<unsigned char>(s[i]);
  auto b1 = static_cast<unsigned char>(s[i + 1]);
  auto b2 = static_cast<unsigned char>(s[i + 2]);
  auto b3 = static_cast<unsigned char>(s[i + 3]);
  if (!IsCont(b1) || !IsCont(b2) || !IsCont(b3)) return 0;
  if (b0 == 0xF0) return b1 >= 0x90 ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3) return 4;
  if (b0 == 0xF4) return b1 <= 0x8F ? 4 : 0;
  return 0;
}

inline void AppendSurrogate(uint32_t unit, std::string* out) {
  out->push_back(static_cast<char>(0xE0 | (unit >> 12)));
  out->push_back(static_cast<char>(0x80 | ((unit >> 6) & 0x3F)));
  out->push_back(static_cast<char>(0x80 | (unit & 0x3F)));
}

inline bool NeedsWork(unsigned char c) { return c == 0x00 || c == 0xED || c >= 0xF0; }
inline bool NeedsDecodeWork(unsigned char c) { return c == 0x00 || c == 0xED; }

// Decodes one component starting at key[*pos]; on success *pos is just past
// the terminator.
bool DecodeComponent(std::string_view key, size_t* pos, std::string* out) {
  out->clear();
  size_t i = *pos;
  const size_t n = key.size();
  while (true) {
    // Copy the run of bytes that need no translation in one go.
    size_t run = i;
    while (run < n && !NeedsDecodeWork(static_cast<unsigned char>(key[run]))) ++run;
    out->append(key.data() + i, run - i);
    i = run;
    if (i >= n) return false;  // missing terminator
    auto c = static_cast<unsigned char>(key[i]);
    if (c == 0x00) {
      if (i + 1 >= n) return false;
      auto e = static_cast<unsigned char>(key[i + 1]);
      i += 2;
      if (e == 0x01) break;
      if (e == 0xFF) {
        out->push_back('\0');
      } else if (e == 0xFE) {
        if (i >= n || static_cast<unsigned char>(key[i]) != 0xED) return false;
        out->push_back(static_cast<char>(0xED));
        ++i;
      } else {
        return false;
      }
      continue;
    }
    // c == 0xED: an encoded surrogate pair, or (only in corrupt input) a lone byte.
    if (i + 6 <= n) {
      auto h1 = static_cast<unsigned char>(key[i + 1]);
      auto h2 = static_cast<unsigned char>(key[i + 2]);
      auto l0 = static_cast<unsigned char>(key[i + 3]);
      auto l1 = static_cast<unsigned char>(key[i + 4]);
      auto l2 = static_cast<unsigned char>(key[i + 5]);
      if (h1 >= 0xA0 && h1 <= 0xAF && IsCont(h2) && l0 == 0xED && l1 >= 0xB0 && l1 <= 0xBF && IsCont(l2)) {
        uint32_t hi = 0xD000u | ((h1 & 0x3Fu) << 6) | (h2 & 0x3Fu);
        uint32_t lo = 0xD000u | ((l1 & 0x3Fu) << 6) | (l2 & 0x3Fu);
        uint32_t cp = 0x10000u + ((hi - 0xD800u) << 10) + (lo - 0xDC00u);
        out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        i += 6;
        continue;
      }
    }
    // Our encoder never writes a bare ED A0..BF; anything else after ED is
    // ordinary text (ED 80..9F is valid UTF-8 for U+D000..U+D7FF).
    if (i + 1 < n) {
      auto next = static_cast<unsigned char>(key[i + 1]);
      if (next >= 0xA0 && next <= 0xBF) return false;
    }
    out->push_back(static_cast<char>(0xED));
    ++i;
  }
  *pos = i;
  return true;
}

}  // namespace

void AppendTableId(uint64_t id, std::string* out) {
  char buf[kTableIdBytes];
  for (size_t i = 0; i < kTableIdBytes; ++i) buf[i] = static_cast<char>(id >> (8 * (kTableIdBytes - 1 - i)));
  out->append(buf, kTableIdBytes);
}

bool ReadTableId(std::string_view key, uint64_t* id) {
  if (key.size() < kTableIdBytes) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < kTableIdBytes; ++i) v = (v << 8) | static_cast<unsigned char>(key[i]);
  *id = v;
  return true;
}

void AppendKeyComponent(std::string_view s, std::string* out) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    size_t run = i;
    while (run < n && !NeedsWork(static_cast<unsigned char>(s[run]))) ++run;
    out->append(s.data() + i, run - i);
    i = run;
    if (i >= n) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c == 0x00) {
      out->push_back('\0');
      out->push_back(static_cast<char>(0xFF));
      ++i;
    } else if (c == 0xED) {
      if (i + 1 < n && static_cast<unsigned char>(s[i + 1]) >= 0xA0 &&
          static_cast<unsigned char>(s[i + 1]) <= 0xBF) {
        out->push_back('\0');
        out->push_back(static_cast<char>(0xFE));
      }
      out->push_back(static_cast<char>(0xED));
      ++i;
    } else if (FourByteAt(s, i) == 4) {
      uint32_t cp = ((static_cast<unsigned char>(s[i]) & 0x07u) << 18) |
                    ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
                    ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) |
                    (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
      cp -= 0x10000;
      AppendSurrogate(0xD800u + (cp >> 10), out);
      AppendSurrogate(0xDC00u + (cp & 0x3FFu), out);
      i += 4;
    } else {
      out->push_back(static_cast<char>(c));
      ++i;
    }
  }
  out->push_back('\0');
  out->push_back('\x01');
}

void EncodeEntityKey(uint64_t table_id, std::string_view pk, std::string_view rk, std::string* out) {
  out->clear();
  out->reserve(kTableIdBytes + pk.size() + rk.size() + 8);
  AppendTableId(table_id, out);
  AppendKeyComponent(pk, out);
  AppendKeyComponent(rk, out);
}

std::string EncodeEntityKey(uint64_t table_id, std::string_view pk, std::string_view rk) {
  std::string out;
  EncodeEntityKey(table_id, pk, rk, &out);
  return out;
}

bool DecodeEntityKey(std::string_view key, uint64_t* table_id, std::string* pk, std::string* rk) {
  if (!ReadTableId(key, table_id)) return false;
  size_t pos = kTableIdBytes;
  if (!DecodeComponent(key, &pos, pk)) return false;
  if (!DecodeComponent(key, &pos, rk)) return false;
  return pos == key.size();
}

bool DecodeEntityRowKey(std::string_view key, size_t row_key_offset, std::string* rk) {
  size_t pos = row_key_offset;
  if (pos > key.size() || !DecodeComponent(key, &pos, rk)) return false;
  return pos == key.size();
}

std::string TableStart(uint64_t table_id) {
  std::string out;
  AppendTableId(table_id, &out);
  return out;
}

std::string TableEnd(uint64_t table_id) { return TableStart(table_id + 1); }

std::string PartitionStart(uint64_t table_id, std::string_view pk) {
  std::string out;
  PartitionStart(table_id, pk, &out);
  return out;
}

void PartitionStart(uint64_t table_id, std::string_view pk, std::string* out) {
  out->clear();
  AppendTableId(table_id, out);
  AppendKeyComponent(pk, out);  // ends with 00 01: the first row key byte follows
}

std::string PartitionEnd(uint64_t table_id, std::string_view pk) {
  std::string out;
  PartitionEnd(table_id, pk, &out);
  return out;
}

void PartitionEnd(uint64_t table_id, std::string_view pk, std::string* out) {
  PartitionStart(table_id, pk, out);
  out->back() = '\x02';  // 00 02: above every 00 01 <row>, below 00 FE/00 FF and any byte >= 01
}

std::string KeySuccessor(std::string_view key) {
  std::string out(key);
  out.push_back('\0');
  return out;
}

}  // namespace tablestone::storage
