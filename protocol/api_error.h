// ApiError: the error vocabulary at the edge. Every failure that reaches a
// client is one of these: an HTTP status, an Azure error code and a message
// (the description part; RequestId/Time are appended when rendered).
//
// Codes and messages follow the Table service (Learn: table-service-error-codes).
// FromStatus() is the one place that maps engine Status codes to Azure errors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "storage/model/status.h"

namespace tablestone::protocol {

struct ApiError {
  int http_status = 500;
  std::string code;     // e.g. "TableNotFound"
  std::string message;  // e.g. "The table specified does not exist."
  // Set on the failure of one operation of a $batch changeset: the zero-based
  // index of the operation to blame. The batch handler answers such an error
  // inside the 202 envelope, and the renderer prefixes the message with
  // "<index>:" as every SDK parses it.
  std::optional<size_t> failed_index;
  // Why the server failed, for the one log line of a 500 (the engine Status
  // or the exception text); never rendered: clients see only `message`.
  std::string cause;
  // Sent as WWW-Authenticate when set (a refused bearer token).
  std::string www_authenticate;

  // ---- factories for the codes we emit (status, code, default message) ----
  static ApiError InvalidInput(std::string message = "One of the request inputs is not valid.");
  // 400 InvalidInput for a property value that does not convert to its
  // declared Edm type (an Int64 beyond range, "" as Edm.DateTime): the service
  // words these "An error occurred while processing this request." (recorded in
  // azure-sdk-for-python's tests/test_encoder.py; docs/compatibility.md).
  static ApiError ValueNotConvertible();
  static ApiError OutOfRangeInput(std::string message = "One of the request inputs is out of range.");
  static ApiError InvalidResourceName();
  static ApiError TableNameLengthOutOfRange();  // OutOfRangeInput with the name-length text
  static ApiError ResourceNotFound();
  static ApiError TableNotFound();
  static ApiError TableAlreadyExists();
  // 409 while a deleted table's name is held (realistic mode, server/faults).
  static ApiError TableBeingDeleted();
  static ApiError EntityAlreadyExists();
  static ApiError UpdateConditionNotSatisfied();
  static ApiError PropertiesNeedValue();
  static ApiError PropertyValueTooLarge();
  static ApiError PropertyNameTooLong();
  static ApiError PropertyNameInvalid();
  static ApiError TooManyProperties();
  static ApiError EntityTooLarge();
  static ApiError DuplicatePropertiesSpecified();
  static ApiError PrimaryKeyPropertyIsInvalidType();
  static ApiError InvalidValueType(std::string message = "The value specified is invalid.");
  static ApiError InvalidDuplicateRow();
  static ApiError CommandsInBatchActOnDifferentPartitions();
  static ApiError RequestBodyTooLarge();
  static ApiError NotImplemented();
  static ApiError MethodNotAllowed();
  static ApiError UnsupportedHttpVerb();
  static ApiError AtomFormatNotSupported();
  static ApiError JsonVerboseFormatNotSupported();
  static ApiError MediaTypeNotSupported();
  static ApiError XMethodNotUsingPost();
  static ApiError XMethodIncorrectValue();
  static ApiError XMethodIncorrectCount();
  static ApiError InvalidHeaderValue(std::string message =
                                         "The value for one of the HTTP headers is not in the correct format.");
  static ApiError MissingRequiredHeader();
  static ApiError InvalidQueryParameterValue(
      std::string message = "Value for one of the query parameters specified in the request URI is invalid.");
  static ApiError InvalidUri();
  static ApiError InvalidXmlDocument();
  static ApiError InvalidXmlNodeValue();
  static ApiError InvalidAuthenticationInfo();
  // 401 InvalidAuthenticationInfo for a refused bearer token, with the
  // service's WWW-Authenticate challenge for `challenge`.
  // 401 InvalidAuthenticationInfo with the WWW-Authenticate challenge; a
  // non-empty `detail` (the failed check) follows the message on its own line,
  // as AuthenticationFailed's detail does.
  static ApiError BearerRefused(std::string challenge, std::string detail = {});
  static ApiError AuthenticationFailed(std::string detail = {});
  static ApiError AuthorizationFailure();
  static ApiError AuthorizationPermissionMismatch();
  static ApiError AuthorizationProtocolMismatch();
  static ApiError AuthorizationSourceIPMismatch(const std::string& ip);
  static ApiError AuthorizationServiceMismatch();
  static ApiError AuthorizationResourceTypeMismatch();
  static ApiError CorsPreflightFailure();
  static ApiError WriteOnSecondary();  // 403 on the read-only secondary endpoint
  static ApiError InternalError();
  static ApiError ServerBusy();
  static ApiError OperationTimedOut();
  static ApiError InsufficientStorage();  // disk full (500 InternalError-class, see .cc)

  // A copy blaming operation `index` of a batch (sets failed_index).
  ApiError WithBatchIndex(size_t index) const;
};

// The single mapping from engine Status to the Azure error a client sees.
// A 500 keeps status.ToString() as its `cause`.
ApiError FromStatus(const Status& status);

// Either a value or an ApiError (a small std::expected stand-in).
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(ApiError error) : v_(std::move(error)) {}  // NOLINT: implicit by design
  ApiResult(T value) : v_(std::move(value)) {}         // NOLINT
  bool ok() const { return v_.index() == 1; }
  const ApiError& error() const { return std::get<0>(v_); }
  const T& value() const& { return std::get<1>(v_); }
  T& value() & { return std::get<1>(v_); }
  T&& value() && { return std::get<1>(std::move(v_)); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<ApiError, T> v_;
};

}  // namespace tablestone::protocol
