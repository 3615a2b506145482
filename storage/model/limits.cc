#include "storage/model/limits.h"

#include <cstdint>
#include <cstring>

namespace tablestone::model {

size_t Utf16Length(std::string_view s) {
  // ASCII 8 bytes at a time: each byte is one unit. Every write measures all
  // its strings against the limits, so this is on every write's path.
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if ((word & 0x8080808080808080ull) != 0) break;
  }
  size_t units = i;
  for (; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      i += 1;
      units += 1;
    } else if ((c >> 5) == 0x6) {
      i += 2;
      units += 1;
    } else if ((c >> 4) == 0xE) {
      i += 3;
      units += 1;
    } else if ((c >> 3) == 0x1E) {
      i += 4;
      units += 2;  // surrogate pair
    } else {
      i += 1;
      units += 1;
    }
  }
  return units;
}

size_t ValueSizeForLimit(const EdmValue& v) {
  switch (v.type) {
    case EdmType::kString: return 4 + 2 * Utf16Length(v.text);
    case EdmType::kBinary: return 4 + v.text.size();
    case EdmType::kGuid: return 16;
    case EdmType::kInt32: return 4;
    case EdmType::kBoolean: return 1;
    case EdmType::kInt64:
    case EdmType::kDouble:
    case EdmType::kDateTime: return 8;
  }
  return 8;
}

size_t EntitySizeForLimit(const Entity& e) {
  size_t total = 4 + 2 * Utf16Length(e.partition_key) + 2 * Utf16Length(e.row_key);
  for (const Property& p : e.properties) {
    total += 8 + 2 * Utf16Length(p.name) + ValueSizeForLimit(p.value);
  }
  return total;
}

}  // namespace tablestone::model
