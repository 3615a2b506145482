// The commit the binary was built from: a short git hash ("-dirty" when the
// tree differed from it), TABLESTONE_COMMIT of the build's environment, or
// "unknown". Defined in a file cmake/build_commit.cmake writes at build time.
#pragma once

namespace tablestone::app {

const char* BuildCommit();

}  // namespace tablestone::app
