// The commands a test drives a running server with (tool_commands.h):
// `tablestone faults add|list|clear` (docs/testing-with-faults.md) and
// `trace on|off|status` (docs/observability.md), each an admin route signed
// for the user (docs/admin-api.md).
#pragma once

#include <memory>

#include "server/app/tool_common.h"

namespace tablestone::app {

std::unique_ptr<ToolCommand> NewFaultsCommand();
std::unique_ptr<ToolCommand> NewTraceCommand();

}  // namespace tablestone::app
