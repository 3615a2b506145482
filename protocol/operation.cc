#include "protocol/operation.h"

namespace tablestone::protocol {

std::span<const std::string_view> OperationNames() {
  static constexpr auto names = [] {
    std::array<std::string_view, kOperationCount> all{};
    for (size_t i = 0; i < all.size(); ++i) all[i] = kOperationTable[i].name;
    return all;
  }();
  return names;
}

}  // namespace tablestone::protocol
