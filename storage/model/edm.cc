#include "storage/model/edm.h"

#include <cmath>

namespace tablestone::model {

std::string_view EdmTypeName(EdmType type) {
  switch (type) {
    case EdmType::kString: return "Edm.String";
    case EdmType::kInt32: return "Edm.Int32";
    case EdmType::kInt64: return "Edm.Int64";
    case EdmType::kDouble: return "Edm.Double";
    case EdmType::kBoolean: return "Edm.Boolean";
    case EdmType::kDateTime: return "Edm.DateTime";
    case EdmType::kGuid: return "Edm.Guid";
    case EdmType::kBinary: return "Edm.Binary";
  }
  return "Edm.String";
}

std::optional<EdmType> EdmTypeFromName(std::string_view name) {
  // Every type annotation of an entity body comes here: the letters after
  // "Edm." pick the one candidate, which is then compared whole.
  if (name.size() < 6) return std::nullopt;
  EdmType type;
  switch (name[4]) {
    case 'S': type = EdmType::kString; break;
    case 'I': type = name.size() > 7 && name[7] == '3' ? EdmType::kInt32 : EdmType::kInt64; break;
    case 'D': type = name[5] == 'o' ? EdmType::kDouble : EdmType::kDateTime; break;
    case 'B': type = name[5] == 'o' ? EdmType::kBoolean : EdmType::kBinary; break;
    case 'G': type = EdmType::kGuid; break;
    default: return std::nullopt;
  }
  if (EdmTypeName(type) != name) return std::nullopt;
  return type;
}

bool operator==(const EdmValue& a, const EdmValue& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case EdmType::kString:
    case EdmType::kBinary:
    case EdmType::kGuid:
      return a.text == b.text;
    case EdmType::kDouble:
      if (std::isnan(a.double_value) && std::isnan(b.double_value)) return true;
      return a.double_value == b.double_value;
    default:
      return a.int_value == b.int_value;
  }
}

}  // namespace tablestone::model
