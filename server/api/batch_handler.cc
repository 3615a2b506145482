// Placeholder until the $batch implementation lands: answers 501
// NotImplemented with the service's error shape.
#include "server/api/batch_handler.h"

#include "server/api/response.h"

namespace tablestone::api {

void HandleBatch(const ApiContext&, const RequestInfo& info, http::Response& response) {
  WriteError(info, protocol::ApiError::NotImplemented(), response);
}

}  // namespace tablestone::api
