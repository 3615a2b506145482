// The admin commands (tool_commands.h): `tablestone snapshot` (of a data
// directory, or through a running server's admin route), `reset` (signed for
// the user, docs/admin-api.md) and `health` (no credential).
#pragma once

#include <memory>

#include "server/app/tool_common.h"

namespace tablestone::app {

std::unique_ptr<ToolCommand> NewSnapshotCommand();
std::unique_ptr<ToolCommand> NewResetCommand();
std::unique_ptr<ToolCommand> NewHealthCommand();

}  // namespace tablestone::app
