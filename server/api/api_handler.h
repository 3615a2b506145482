// Entry point of server/api: builds the RequestHandler that serves the Azure
// Table REST API, the /_tablestone routes (docs/admin-api.md) and the data
// browser on top of an Engine.
#pragma once

#include <memory>

#include "server/api/api_options.h"
#include "server/api/metrics.h"
#include "server/api/trace.h"
#include "server/exec/work_executor.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace tablestone::api {

// `engine` and `executor` (the lanes of the requests placed there) must
// outlive the returned handler, and the executor must be shut down before
// the handler is dropped (dispatcher.h, ~Dispatcher). `metrics` (may be
// null: no metrics route, nothing counted) must outlive the handler, as must
// `trace` (may be null: no request trace, no /_tablestone/trace route).
std::unique_ptr<http::RequestHandler> MakeApiHandler(storage::Engine& engine, exec::WorkExecutor& executor,
                                                     ApiOptions options, Metrics* metrics = nullptr,
                                                     TraceWriter* trace = nullptr);

}  // namespace tablestone::api
