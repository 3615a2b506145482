// What the members of one entity body may hold, by name (Learn:
// understanding-the-table-service-data-model): at most 255 named properties
// (PartitionKey, RowKey, Timestamp and null-valued ones included), at most one
// type annotation each, and a few more members of OData control information.
// Shared by the JSON parser, which stops reading a body as soon as its members
// cannot be one entity, and by the entity rules (protocol/odata_json.cc).
// Internal to protocol/; pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "storage/model/limits.h"

namespace tablestone::protocol {

inline constexpr std::string_view kTypeSuffix = "@odata.type";

// What a member of an entity body is, by its name: a type annotation
// ("<name>@odata.type"), other OData control information ("odata.*",
// "<name>@odata.*"; not data) or a property.
enum class MemberKind : uint8_t { kProperty, kAnnotation, kControl };

inline MemberKind ClassifyMember(std::string_view name) {
  if (name.ends_with(kTypeSuffix)) return MemberKind::kAnnotation;
  if (name.starts_with("odata.")) return MemberKind::kControl;
  // Most names hold no '@': one memchr instead of a search for "@odata.".
  if (std::memchr(name.data(), '@', name.size()) != nullptr && name.find("@odata.") != std::string_view::npos) {
    return MemberKind::kControl;
  }
  return MemberKind::kProperty;
}

// Counts the members of one body against those limits. A body past any of
// them cannot be an entity (TooManyProperties).
class EntityMemberBudget {
 public:
  // Counts one member; false once the budget is spent.
  bool Take(std::string_view name) {
    if (++members_ > kMaxMembers) return false;
    switch (ClassifyMember(name)) {
      case MemberKind::kAnnotation: return ++annotations_ <= model::kMaxProperties;
      case MemberKind::kControl: return true;
      case MemberKind::kProperty: break;
    }
    return ++named_ <= model::kMaxProperties;
  }

 private:
  // Properties, their type annotations, and as many other control members.
  static constexpr size_t kMaxMembers = 4 * model::kMaxProperties;
  size_t members_ = 0;
  size_t annotations_ = 0;
  size_t named_ = 0;
};

}  // namespace tablestone::protocol
