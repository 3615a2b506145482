// The git commit the binary was built from, for `tablestone --version`.
#pragma once

#include <string_view>

namespace tablestone::app {

// "0123abcd4567" (with "-modified" when the tree had changes), or "" when the
// build did not know it (no git checkout).
std::string_view BuildCommit();

}  // namespace tablestone::app
