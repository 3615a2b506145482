// Entity group transactions (POST /$batch, spec §6). The dispatcher calls
// HandleBatch for Operation::kBatch after routing and authenticating the
// outer request. Sub-requests must be validated with entity_ops.h
// (BuildWriteOp / RenderWriteSuccess) so they behave exactly like
// top-level requests, and authorised with Authenticator::AuthorizeBatchOperation.
#pragma once

#include "server/api/api_context.h"
#include "server/http/handler.h"

namespace tablestone::api {

// Writes the complete response (202 multipart, or a plain JSON error for
// batch-level failures such as malformed multipart).
void HandleBatch(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

}  // namespace tablestone::api
