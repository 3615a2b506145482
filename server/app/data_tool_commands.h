// The data commands (tool_commands.h): `tablestone export`, `import` and
// `copy`, over tools/data_commands.h and tools/copy_command.h.
#pragma once

#include <memory>

#include "server/app/tool_common.h"

namespace tablestone::app {

std::unique_ptr<ToolCommand> NewExportCommand();
std::unique_ptr<ToolCommand> NewImportCommand();
std::unique_ptr<ToolCommand> NewCopyCommand();

}  // namespace tablestone::app
