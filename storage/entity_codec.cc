// Entity value format, version 1 (also in docs/storage-format.md).
//
//   value     := version:u8 (= 0x01)
//                timestamp:fixed64       (ticks, see storage/model/datetime.h)
//                count:varint32          (number of custom properties)
//                property{count}
//   property  := name_len:varint32 name:byte[name_len] tag:u8 payload
//   tag payload
//    0x01 String    len:varint32 byte[len]          (UTF-8)
//    0x02 Int32     zigzag:varint32                 (must fit int32)
//    0x03 Int64     zigzag:varint64
//    0x04 Double    fixed64                         (IEEE-754 bits)
//    0x05 Boolean   u8                              (0 or 1)
//    0x06 DateTime  fixed64                         (ticks, two's complement)
//    0x07 Guid      byte[16]                        (canonical text on decode)
//    0x08 Binary    len:varint32 byte[len]
//    0x87 GuidText  len:varint32 byte[len]          (a Guid whose text is not the
//                                                    canonical 36-char lower-case
//                                                    form; kept verbatim)
//   fixed64 = 8 bytes little-endian; varint = LEB128 (7 bits per byte, low
//   group first, at most 5 bytes for varint32, 10 for varint64);
//   zigzag(n) = (n << 1) ^ (n >> 63).
// Tags 0x01..0x08 equal model::EdmType values (persisted, never renumber).
// No bytes may follow the last property.
//
// Why binary rather than JSON: decoding is on the hot path of every scan;
// this form decodes with one pass, no parsing of numbers, and no allocation
// when the target Entity is reused.
#include "storage/entity_codec.h"

#include <algorithm>
#include <cstring>

namespace tablestone::storage {
namespace {

using model::EdmType;
using model::EdmValue;

constexpr uint8_t kTagGuidText = 0x87;

void PutVarint64(uint64_t v, std::string* out) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

void PutFixed64(uint64_t v, std::string* out) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(v >> (8 * i));
  out->append(buf, 8);
}

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Canonical "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case) -> 16 bytes.
bool GuidToBytes(std::string_view text, unsigned char* bytes) {
  if (text.size() != 36) return false;
  size_t b = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    int hi = HexValue(text[i]);
    int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes[b++] = static_cast<unsigned char>(hi << 4 | lo);
    i += 2;
  }
  return true;
}

// 16 bytes -> the 36 characters of the canonical text at p.
void PrintGuid(const unsigned char* bytes, char* p) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
    *p++ = kHex[bytes[i] >> 4];
    *p++ = kHex[bytes[i] & 0xF];
  }
}

// Bounds-checked reader over the value bytes.
class Reader {
 public:
  explicit Reader(std::string_view in) : p_(reinterpret_cast<const unsigned char*>(in.data())), end_(p_ + in.size()) {}

  bool Byte(uint8_t* v) {
    if (p_ == end_) return false;
    *v = *p_++;
    return true;
  }
  bool Fixed64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    uint64_t r = 0;
    for (int i = 7; i >= 0; --i) r = (r << 8) | p_[i];
    p_ += 8;
    *v = r;
    return true;
  }
  bool Varint(uint64_t* v, int max_bytes) {
    uint64_t r = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (p_ == end_) return false;
      uint8_t b = *p_++;
      r |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) {
        *v = r;
        return true;
      }
    }
    return false;
  }
  bool Varint32(uint32_t* v) {
    uint64_t r;
    if (!Varint(&r, 5) || r > 0xFFFFFFFFu) return false;
    *v = static_cast<uint32_t>(r);
    return true;
  }
  // A length-prefixed byte string, as a view into the input.
  bool Bytes(std::string_view* out) {
    uint32_t len;
    if (!Varint32(&len) || static_cast<size_t>(end_ - p_) < len) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    return true;
  }
  bool Raw(size_t n, const unsigned char** out) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    *out = p_;
    p_ += n;
    return true;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  const unsigned char* p_;
  const unsigned char* end_;
};

Status Corrupt(const char* what) { return Status::Corruption(std::string("entity value: ") + what); }

// The value of a property with this tag as a view into the input (Guid bytes
// printed into guid_text), or false for a malformed value. Always inlined:
// it runs once per property of every decoded row, and as a call the view is
// built and then copied.
[[gnu::always_inline]] inline bool ViewValue(Reader& r, uint8_t tag, model::ValueView* v, char* guid_text) {
  std::string_view bytes;
  uint64_t u;
  switch (tag) {
    case static_cast<uint8_t>(EdmType::kString):
    case static_cast<uint8_t>(EdmType::kBinary):
    case kTagGuidText:
      if (!r.Bytes(&bytes)) return false;
      *v = {tag == kTagGuidText ? EdmType::kGuid : static_cast<EdmType>(tag), 0, 0, bytes};
      return true;
    case static_cast<uint8_t>(EdmType::kGuid): {
      const unsigned char* raw;
      if (!r.Raw(16, &raw)) return false;
      PrintGuid(raw, guid_text);
      *v = {EdmType::kGuid, 0, 0, std::string_view(guid_text, 36)};
      return true;
    }
    case static_cast<uint8_t>(EdmType::kInt32): {
      if (!r.Varint(&u, 5)) return false;
      const int64_t n = UnZigZag(u);
      if (n < INT32_MIN || n > INT32_MAX) return false;
      *v = {EdmType::kInt32, n, 0, {}};
      return true;
    }
    case static_cast<uint8_t>(EdmType::kInt64):
      if (!r.Varint(&u, 10)) return false;
      *v = {EdmType::kInt64, UnZigZag(u), 0, {}};
      return true;
    case static_cast<uint8_t>(EdmType::kBoolean): {
      uint8_t b;
      if (!r.Byte(&b) || b > 1) return false;
      *v = {EdmType::kBoolean, b, 0, {}};
      return true;
    }
    case static_cast<uint8_t>(EdmType::kDateTime):
      if (!r.Fixed64(&u)) return false;
      *v = {EdmType::kDateTime, static_cast<int64_t>(u), 0, {}};
      return true;
    case static_cast<uint8_t>(EdmType::kDouble): {
      if (!r.Fixed64(&u)) return false;
      double d;
      std::memcpy(&d, &u, sizeof d);
      *v = {EdmType::kDouble, 0, d, {}};
      return true;
    }
    default:
      return false;
  }
}

// Steps over the payload of a property with this tag that is not looked at:
// only its size matters, so nothing is converted (no Guid printed, no
// zigzag) and a number's range is not checked (DecodeEntityValue checks it
// when the row is decoded). False if the payload is cut short or the tag is
// unknown.
[[gnu::always_inline]] inline bool SkipValue(Reader& r, uint8_t tag) {
  std::string_view bytes;
  uint64_t u;
  const unsigned char* raw;
  switch (tag) {
    case static_cast<uint8_t>(EdmType::kString):
    case static_cast<uint8_t>(EdmType::kBinary):
    case kTagGuidText:
      return r.Bytes(&bytes);
    case static_cast<uint8_t>(EdmType::kGuid):
      return r.Raw(16, &raw);
    case static_cast<uint8_t>(EdmType::kInt32):
      return r.Varint(&u, 5);
    case static_cast<uint8_t>(EdmType::kInt64):
      return r.Varint(&u, 10);
    case static_cast<uint8_t>(EdmType::kBoolean):
      return r.Raw(1, &raw);
    case static_cast<uint8_t>(EdmType::kDateTime):
    case static_cast<uint8_t>(EdmType::kDouble):
      return r.Raw(8, &raw);
    default:
      return false;
  }
}

// The value of a property with this tag, copied out of the input. Inlined
// into both whole and $select decodes: it runs once per decoded property.
[[gnu::always_inline]] inline bool DecodeValue(Reader& r, uint8_t tag, EdmValue* v) {
  char guid_text[36];
  model::ValueView view;
  if (!ViewValue(r, tag, &view, guid_text)) return false;
  v->type = view.type;
  v->int_value = view.int_value;
  v->double_value = view.double_value;
  // clear() for the numbers: an empty assign() is an out-of-line call.
  if (view.text.empty()) {
    v->text.clear();
  } else {
    v->text.assign(view.text.data(), view.text.size());
  }
  return true;
}

}  // namespace

bool ReadEncodedProperties(std::string_view value, const std::string_view* names, size_t n, EncodedProperty* out,
                           int64_t* timestamp) {
  Reader r(value);
  uint8_t version;
  uint64_t ts;
  uint32_t count;
  if (!r.Byte(&version) || version != kEntityFormatVersion || !r.Fixed64(&ts) || !r.Varint32(&count)) return false;
  *timestamp = static_cast<int64_t>(ts);
  for (size_t i = 0; i < n; ++i) out[i].found = false;
  size_t missing = n;
  for (uint32_t i = 0; i < count && missing > 0; ++i) {
    std::string_view name;
    uint8_t tag;
    if (!r.Bytes(&name) || !r.Byte(&tag)) return false;
    EncodedProperty* wanted = nullptr;
    for (size_t j = 0; j < n; ++j) {
      if (!out[j].found && names[j] == name) {
        wanted = &out[j];
        break;
      }
    }
    if (wanted == nullptr) {
      if (!SkipValue(r, tag)) return false;
      continue;
    }
    if (!ViewValue(r, tag, &wanted->view, wanted->guid_text)) return false;
    wanted->found = true;
    --missing;
  }
  return true;
}

void EncodeEntityValue(const model::Entity& e, std::string* out) { EncodeEntityValue(e.timestamp, e.properties, out); }

void EncodeEntityValue(int64_t timestamp, const std::vector<model::Property>& properties, std::string* out) {
  // Sized once: at most the version, the timestamp and the count, and per
  // property two varints, its name, a tag and its value (text, or 16 bytes).
  size_t bound = 1 + 8 + 10;
  for (const model::Property& p : properties) {
    bound += 10 + p.name.size() + 1 + 10 + std::max<size_t>(p.value.text.size(), 16);
  }
  out->reserve(out->size() + bound);
  out->push_back(static_cast<char>(kEntityFormatVersion));
  PutFixed64(static_cast<uint64_t>(timestamp), out);
  PutVarint64(properties.size(), out);
  for (const model::Property& p : properties) {
    PutVarint64(p.name.size(), out);
    out->append(p.name);
    const EdmValue& v = p.value;
    switch (v.type) {
      case EdmType::kString:
      case EdmType::kBinary:
        out->push_back(static_cast<char>(v.type));
        PutVarint64(v.text.size(), out);
        out->append(v.text);
        break;
      case EdmType::kGuid: {
        unsigned char raw[16];
        if (GuidToBytes(v.text, raw)) {
          out->push_back(static_cast<char>(EdmType::kGuid));
          out->append(reinterpret_cast<const char*>(raw), 16);
        } else {
          out->push_back(static_cast<char>(kTagGuidText));
          PutVarint64(v.text.size(), out);
          out->append(v.text);
        }
        break;
      }
      case EdmType::kInt32:
      case EdmType::kInt64:
        out->push_back(static_cast<char>(v.type));
        PutVarint64(ZigZag(v.int_value), out);
        break;
      case EdmType::kBoolean:
        out->push_back(static_cast<char>(EdmType::kBoolean));
        out->push_back(v.int_value != 0 ? '\x01' : '\x00');
        break;
      case EdmType::kDateTime:
        out->push_back(static_cast<char>(EdmType::kDateTime));
        PutFixed64(static_cast<uint64_t>(v.int_value), out);
        break;
      case EdmType::kDouble: {
        uint64_t bits;
        std::memcpy(&bits, &v.double_value, sizeof bits);
        out->push_back(static_cast<char>(EdmType::kDouble));
        PutFixed64(bits, out);
        break;
      }
    }
  }
}

std::string EncodeEntityValue(const model::Entity& entity) {
  std::string out;
  EncodeEntityValue(entity, &out);
  return out;
}

Status DecodeEntityTimestamp(std::string_view value, int64_t* ticks) {
  Reader r(value);
  uint8_t version;
  uint64_t ts;
  if (!r.Byte(&version)) return Corrupt("empty");
  if (version != kEntityFormatVersion) return Corrupt("unknown format version");
  if (!r.Fixed64(&ts)) return Corrupt("truncated timestamp");
  *ticks = static_cast<int64_t>(ts);
  return Status::Ok();
}

namespace {

// DecodeEntityValue with every property (kAll) or only those in *select: one
// body, instantiated twice so the common case keeps its tight loop.
template <bool kAll>
Status DecodeValueWith(std::string_view value, model::Entity* entity, const std::vector<std::string>* select) {
  Reader r(value);
  uint8_t version;
  uint64_t ts;
  uint32_t count;
  if (!r.Byte(&version)) return Corrupt("empty");
  if (version != kEntityFormatVersion) return Corrupt("unknown format version");
  if (!r.Fixed64(&ts)) return Corrupt("truncated timestamp");
  if (!r.Varint32(&count)) return Corrupt("bad property count");
  // Each property needs at least 3 bytes; reject absurd counts before resizing.
  if (count > r.remaining() / 3) return Corrupt("property count exceeds value size");
  entity->timestamp = static_cast<int64_t>(ts);
  auto& props = entity->properties;
  props.resize(count);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view name;
    uint8_t tag;
    if (!r.Bytes(&name)) return Corrupt("truncated property name");
    if (!r.Byte(&tag)) return Corrupt("truncated property type");
    if constexpr (!kAll) {
      if (std::find(select->begin(), select->end(), name) == select->end()) {
        model::ValueView skipped;  // validated, not copied
        char guid_text[36];
        if (!ViewValue(r, tag, &skipped, guid_text)) return Corrupt("bad property payload");
        continue;
      }
    }
    model::Property& p = props[kAll ? i : kept++];
    p.name.assign(name.data(), name.size());
    if (!DecodeValue(r, tag, &p.value)) return Corrupt("bad property payload");
  }
  if (r.remaining() != 0) return Corrupt("trailing bytes");
  if constexpr (!kAll) props.resize(kept);
  return Status::Ok();
}

}  // namespace

Status DecodeEntityValue(std::string_view value, model::Entity* entity) {
  return DecodeValueWith<true>(value, entity, nullptr);
}

Status DecodeEntityValueSelected(std::string_view value, model::Entity* entity,
                                 const std::vector<std::string>& select) {
  return DecodeValueWith<false>(value, entity, &select);
}

}  // namespace tablestone::storage
