#include "storage/model/status.h"

namespace tablestone {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kTableNotFound: return "TableNotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kTableAlreadyExists: return "TableAlreadyExists";
    case StatusCode::kConditionNotMet: return "ConditionNotMet";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kTooManyProperties: return "TooManyProperties";
    case StatusCode::kEntityTooLarge: return "EntityTooLarge";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIoError: return "IoError";
    case StatusCode::kNoSpace: return "NoSpace";
    case StatusCode::kReadOnly: return "ReadOnly";
    case StatusCode::kDataDirLocked: return "DataDirLocked";
    case StatusCode::kBusy: return "Busy";
    case StatusCode::kWouldBlock: return "WouldBlock";
    case StatusCode::kTimedOut: return "TimedOut";
    case StatusCode::kShuttingDown: return "ShuttingDown";
    case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  std::string out(StatusCodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace tablestone
