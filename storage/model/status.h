// Status and StatusOr: the error vocabulary inside tablestone (model, storage).
//
// Contract: a Status is a code plus a human-readable message. It is cheap to
// copy when OK. Code values are the *kinds* of failure the engine can report,
// and callers branch on the code, never on the message text (which is for
// logs and may change). protocol/api_error.cc FromStatus maps each code to
// exactly one Azure error, so the mapping lives in one place; the message of a
// 5xx-class code reaches only the log (ApiError::cause), never the client.
// operator== compares codes only.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tablestone {

enum class StatusCode : unsigned char {
  kOk = 0,
  kNotFound,            // the addressed entity does not exist (ResourceNotFound)
  kTableNotFound,       // the addressed table does not exist (TableNotFound)
  kAlreadyExists,       // entity insert on an existing key (EntityAlreadyExists)
  kTableAlreadyExists,  // create of an existing table name (TableAlreadyExists)
  kConditionNotMet,     // If-Match did not match (UpdateConditionNotSatisfied)
  kInvalidArgument,     // caller error not covered by a more precise code
  kTooManyProperties,   // merged entity exceeds 255 properties
  kEntityTooLarge,      // merged entity exceeds 1 MiB by the service formula
  kCorruption,          // stored bytes could not be decoded
  kIoError,             // RocksDB/file system failure
  kNoSpace,             // disk full
  kReadOnly,            // data dir cannot be written
  kDataDirLocked,       // another process holds the data directory's lock file
  kBusy,                // transient contention; retry
  kWouldBlock,          // a ReadWait::kNoWait read needed the disk; run it again where waiting is allowed
  kTimedOut,
  kShuttingDown,
  kInternal,
};

// Returns a stable name such as "NotFound" for logs and tests.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status NotFound(std::string m = {}) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status TableNotFound(std::string m = {}) { return {StatusCode::kTableNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m = {}) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status TableAlreadyExists(std::string m = {}) {
    return {StatusCode::kTableAlreadyExists, std::move(m)};
  }
  static Status ConditionNotMet(std::string m = {}) { return {StatusCode::kConditionNotMet, std::move(m)}; }
  static Status InvalidArgument(std::string m = {}) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status TooManyProperties(std::string m = {}) {
    return {StatusCode::kTooManyProperties, std::move(m)};
  }
  static Status EntityTooLarge(std::string m = {}) { return {StatusCode::kEntityTooLarge, std::move(m)}; }
  static Status Corruption(std::string m = {}) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m = {}) { return {StatusCode::kIoError, std::move(m)}; }
  static Status NoSpace(std::string m = {}) { return {StatusCode::kNoSpace, std::move(m)}; }
  static Status ReadOnly(std::string m = {}) { return {StatusCode::kReadOnly, std::move(m)}; }
  static Status DataDirLocked(std::string m = {}) { return {StatusCode::kDataDirLocked, std::move(m)}; }
  static Status Busy(std::string m = {}) { return {StatusCode::kBusy, std::move(m)}; }
  static Status WouldBlock(std::string m = {}) { return {StatusCode::kWouldBlock, std::move(m)}; }
  static Status TimedOut(std::string m = {}) { return {StatusCode::kTimedOut, std::move(m)}; }
  static Status ShuttingDown(std::string m = {}) { return {StatusCode::kShuttingDown, std::move(m)}; }
  static Status Internal(std::string m = {}) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: message" for logs.
  std::string ToString() const;
  // Marks a deliberately ignored status (keeps -Werror=unused-result honest).
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : v_(status) { assert(!status.ok()); }  // NOLINT: implicit by design
  StatusOr(Status&& status) : v_(std::move(status)) { assert(!std::get<0>(v_).ok()); }  // NOLINT
  StatusOr(const T& value) : v_(value) {}  // NOLINT
  StatusOr(T&& value) : v_(std::move(value)) {}  // NOLINT

  bool ok() const { return v_.index() == 1; }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<0>(v_);
  }
  const T& value() const& { return std::get<1>(v_); }
  T& value() & { return std::get<1>(v_); }
  T&& value() && { return std::get<1>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

#define TABLESTONE_CONCAT_INNER_(a, b) a##b
#define TABLESTONE_CONCAT_(a, b) TABLESTONE_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` yields a non-OK Status.
#define TABLESTONE_RETURN_IF_ERROR(expr)        \
  do {                                          \
    ::tablestone::Status _st = (expr);          \
    if (!_st.ok()) return _st;                  \
  } while (0)

// `lhs = value of expr` or return its Status.
#define TABLESTONE_ASSIGN_OR_RETURN(lhs, expr) \
  TABLESTONE_ASSIGN_OR_RETURN_IMPL_(TABLESTONE_CONCAT_(_so_, __LINE__), lhs, expr)
#define TABLESTONE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                      \
  if (!tmp.ok()) return tmp.status();                     \
  lhs = std::move(tmp).value()

}  // namespace tablestone
