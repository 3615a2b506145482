#include "protocol/api_error.h"

namespace tablestone::protocol {
namespace {
ApiError Make(int status, const char* code, std::string message) {
  ApiError error;
  error.http_status = status;
  error.code = code;
  error.message = std::move(message);
  return error;
}
}  // namespace

ApiError ApiError::InvalidInput(std::string m) { return Make(400, "InvalidInput", std::move(m)); }
ApiError ApiError::ValueNotConvertible() {
  return Make(400, "InvalidInput", "An error occurred while processing this request.");
}
ApiError ApiError::OutOfRangeInput(std::string m) { return Make(400, "OutOfRangeInput", std::move(m)); }
ApiError ApiError::InvalidResourceName() {
  return Make(400, "InvalidResourceName", "The specified resource name contains invalid characters.");
}
ApiError ApiError::TableNameLengthOutOfRange() {
  return Make(400, "OutOfRangeInput", "The specified resource name length is not within the permissible limits.");
}
ApiError ApiError::ResourceNotFound() {
  return Make(404, "ResourceNotFound", "The specified resource does not exist.");
}
ApiError ApiError::TableNotFound() { return Make(404, "TableNotFound", "The table specified does not exist."); }
ApiError ApiError::TableAlreadyExists() {
  return Make(409, "TableAlreadyExists", "The table specified already exists.");
}
ApiError ApiError::TableBeingDeleted() {
  return Make(409, "TableBeingDeleted", "The specified table is being deleted.");
}
ApiError ApiError::EntityAlreadyExists() {
  return Make(409, "EntityAlreadyExists", "The specified entity already exists.");
}
ApiError ApiError::UpdateConditionNotSatisfied() {
  return Make(412, "UpdateConditionNotSatisfied",
              "The update condition specified in the request was not satisfied.");
}
ApiError ApiError::PropertiesNeedValue() {
  return Make(400, "PropertiesNeedValue", "The values are not specified for all properties in the entity.");
}
ApiError ApiError::PropertyValueTooLarge() {
  return Make(400, "PropertyValueTooLarge",
              "The property value exceeds the maximum allowed size (64KB). If the property value is a string, "
              "it is UTF-16 encoded and the maximum number of characters should be 32K or less.");
}
ApiError ApiError::PropertyNameTooLong() {
  return Make(400, "PropertyNameTooLong", "The property name exceeds the maximum allowed length (255).");
}
ApiError ApiError::PropertyNameInvalid() { return Make(400, "PropertyNameInvalid", "The property name is invalid."); }
ApiError ApiError::TooManyProperties() {
  return Make(400, "TooManyProperties", "The entity has more properties than allowed.");
}
ApiError ApiError::EntityTooLarge() {
  return Make(400, "EntityTooLarge", "The entity is larger than the maximum allowed size (1MB).");
}
ApiError ApiError::DuplicatePropertiesSpecified() {
  return Make(400, "DuplicatePropertiesSpecified", "A property is specified more than one time.");
}
ApiError ApiError::PrimaryKeyPropertyIsInvalidType() {
  return Make(400, "PrimaryKeyPropertyIsInvalidType", "The type of the primary key property is invalid.");
}
ApiError ApiError::InvalidValueType(std::string m) { return Make(400, "InvalidValueType", std::move(m)); }
ApiError ApiError::InvalidDuplicateRow() {
  return Make(400, "InvalidDuplicateRow",
              "The batch request contains multiple changes with same row key. An entity can appear only once in "
              "a batch request.");
}
ApiError ApiError::CommandsInBatchActOnDifferentPartitions() {
  return Make(400, "CommandsInBatchActOnDifferentPartitions",
              "All commands in a batch must operate on same entity group.");
}
ApiError ApiError::RequestBodyTooLarge() {
  return Make(413, "RequestBodyTooLarge",
              "The request body is too large and exceeds the maximum permissible limit.");
}
ApiError ApiError::NotImplemented() {
  return Make(501, "NotImplemented", "The requested operation is not implemented on the specified resource.");
}
ApiError ApiError::MethodNotAllowed() {
  return Make(405, "MethodNotAllowed", "The requested method is not allowed on the specified resource.");
}
ApiError ApiError::UnsupportedHttpVerb() {
  return Make(405, "UnsupportedHttpVerb", "The resource doesn't support the specified HTTP verb.");
}
ApiError ApiError::AtomFormatNotSupported() {
  return Make(415, "AtomFormatNotSupported", "Atom format is not supported.");
}
ApiError ApiError::JsonVerboseFormatNotSupported() {
  return Make(415, "JsonVerboseFormatNotSupported", "Verbose JSON format is not supported.");
}
ApiError ApiError::MediaTypeNotSupported() {
  return Make(415, "MediaTypeNotSupported", "None of the provided media types are supported.");
}
ApiError ApiError::XMethodNotUsingPost() {
  return Make(400, "XMethodNotUsingPost",
              "The request uses X-HTTP-Method with an HTTP verb other than POST.");
}
ApiError ApiError::XMethodIncorrectValue() {
  return Make(400, "XMethodIncorrectValue", "The specified X-HTTP-Method is invalid.");
}
ApiError ApiError::XMethodIncorrectCount() {
  return Make(400, "XMethodIncorrectCount", "More than one X-HTTP-Method is specified.");
}
ApiError ApiError::InvalidHeaderValue(std::string m) { return Make(400, "InvalidHeaderValue", std::move(m)); }
ApiError ApiError::MissingRequiredHeader() {
  return Make(400, "MissingRequiredHeader", "An HTTP header that's mandatory for this request is not specified.");
}
ApiError ApiError::InvalidQueryParameterValue(std::string m) {
  return Make(400, "InvalidQueryParameterValue", std::move(m));
}
ApiError ApiError::InvalidUri() {
  return Make(400, "InvalidUri", "The requested URI does not represent any resource on the server.");
}
ApiError ApiError::InvalidXmlDocument() {
  return Make(400, "InvalidXmlDocument", "XML specified is not syntactically valid.");
}
ApiError ApiError::InvalidXmlNodeValue() {
  return Make(400, "InvalidXmlNodeValue", "The value for one of the XML nodes is not in the correct format.");
}
ApiError ApiError::InvalidAuthenticationInfo() {
  return Make(400, "InvalidAuthenticationInfo",
              "Authentication information is not given in the correct format. Check the value of Authorization "
              "header.");
}
ApiError ApiError::BearerRefused(std::string challenge, std::string detail) {
  std::string m =
      "Server failed to authenticate the request. Please refer to the information in the "
      "www-authenticate header.";
  if (!detail.empty()) m += "\n" + detail;
  ApiError e = Make(401, "InvalidAuthenticationInfo", std::move(m));
  e.www_authenticate = std::move(challenge);
  return e;
}
ApiError ApiError::AuthenticationFailed(std::string detail) {
  std::string m =
      "Server failed to authenticate the request. Make sure the value of Authorization header is formed "
      "correctly including the signature.";
  if (!detail.empty()) m += "\n" + detail;
  return Make(403, "AuthenticationFailed", std::move(m));
}
ApiError ApiError::AuthorizationFailure() {
  return Make(403, "AuthorizationFailure", "This request is not authorized to perform this operation.");
}
ApiError ApiError::AuthorizationPermissionMismatch() {
  return Make(403, "AuthorizationPermissionMismatch",
              "This request is not authorized to perform this operation using this permission.");
}
ApiError ApiError::AuthorizationProtocolMismatch() {
  return Make(403, "AuthorizationProtocolMismatch",
              "This request is not authorized to perform this operation using this protocol.");
}
ApiError ApiError::AuthorizationSourceIPMismatch(const std::string& ip) {
  return Make(403, "AuthorizationSourceIPMismatch",
              "This request is not authorized to perform this operation using this source IP " + ip + ".");
}
ApiError ApiError::AuthorizationServiceMismatch() {
  return Make(403, "AuthorizationServiceMismatch",
              "This request is not authorized to perform this operation using this service.");
}
ApiError ApiError::AuthorizationResourceTypeMismatch() {
  return Make(403, "AuthorizationResourceTypeMismatch",
              "This request is not authorized to perform this operation using this resource type.");
}
ApiError ApiError::CorsPreflightFailure() {
  return Make(403, "CorsPreflightFailure", "CORS not enabled or no matching rule found for this request.");
}
ApiError ApiError::WriteOnSecondary() {
  return Make(403, "AuthorizationFailure",
              "This request is not authorized to perform this operation. The secondary endpoint is read-only.");
}
ApiError ApiError::InternalError() {
  return Make(500, "InternalError", "The server encountered an internal error. Please retry the request.");
}
ApiError ApiError::ServerBusy() {
  return Make(503, "ServerBusy", "The server is currently unable to receive requests. Please retry your request.");
}
ApiError ApiError::OperationTimedOut() {
  return Make(500, "OperationTimedOut", "Operation could not be completed within the specified time.");
}
ApiError ApiError::InsufficientStorage() {
  // The service has no disk-full error for tables; 503 ServerBusy tells SDK
  // retry policies to back off and try again, which is right once space returns.
  return Make(503, "ServerBusy",
              "The server is currently unable to receive requests. Please retry your request. (disk full)");
}

ApiError ApiError::WithBatchIndex(size_t index) const {
  ApiError e = *this;
  e.failed_index = index;
  return e;
}

namespace {

ApiError MapStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return ApiError::InternalError();  // caller bug: no error to map
    case StatusCode::kNotFound: return ApiError::ResourceNotFound();
    case StatusCode::kTableNotFound: return ApiError::TableNotFound();
    case StatusCode::kAlreadyExists: return ApiError::EntityAlreadyExists();
    case StatusCode::kTableAlreadyExists: return ApiError::TableAlreadyExists();
    case StatusCode::kConditionNotMet: return ApiError::UpdateConditionNotSatisfied();
    case StatusCode::kInvalidArgument:
      return s.message().empty() ? ApiError::InvalidInput() : ApiError::InvalidInput(s.message());
    case StatusCode::kTooManyProperties: return ApiError::TooManyProperties();
    case StatusCode::kEntityTooLarge: return ApiError::EntityTooLarge();
    case StatusCode::kNoSpace: return ApiError::InsufficientStorage();
    case StatusCode::kBusy:
    case StatusCode::kWouldBlock:  // the dispatcher reruns such a read on a lane; a retry is right if one leaks
    case StatusCode::kShuttingDown: return ApiError::ServerBusy();
    case StatusCode::kTimedOut: return ApiError::OperationTimedOut();
    case StatusCode::kReadOnly:
    case StatusCode::kDataDirLocked:  // only Engine::Open reports it; no request sees it
    case StatusCode::kCorruption:
    case StatusCode::kIoError:
    case StatusCode::kInternal: return ApiError::InternalError();
  }
  return ApiError::InternalError();
}

}  // namespace

ApiError FromStatus(const Status& s) {
  ApiError e = MapStatus(s);
  if (e.http_status == 500) e.cause = s.ToString();
  return e;
}

}  // namespace tablestone::protocol
