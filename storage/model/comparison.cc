#include "storage/model/comparison.h"

namespace tablestone::model {

// The table is indexed by the EdmType values: it must follow them.
static_assert(static_cast<int>(EdmType::kString) == 1 && static_cast<int>(EdmType::kBinary) == 8,
              "kCompareTable rows and columns follow the EdmType values 1..8");

std::string_view CompareKindName(CompareKind kind) {
  switch (kind) {
    case CompareKind::kMismatch: return "Mismatch";
    case CompareKind::kInt64: return "Int64";
    case CompareKind::kDouble: return "Double";
    case CompareKind::kBoolean: return "Boolean";
    case CompareKind::kDateTime: return "DateTime";
    case CompareKind::kString: return "String";
    case CompareKind::kGuid: return "Guid";
    case CompareKind::kBinary: return "Binary";
  }
  return "?";
}

}  // namespace tablestone::model
