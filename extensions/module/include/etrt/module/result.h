// Error and Result<T> in the shape ExecuTorch's C++ Module returns them, over
// libetrt's status codes. A Result also keeps libetrt's message, which names
// the input, dtype, shape, operator or plugin that failed (Error alone cannot).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "etrt/etrt.hpp"

namespace etrt::extension {

// The values of ExecuTorch's runtime::Error, so a host that logs or compares
// them sees the same numbers.
enum class Error : uint32_t {
  Ok = 0x00,
  Internal = 0x01,
  InvalidState = 0x02,
  EndOfMethod = 0x03,
  AlreadyLoaded = 0x04,
  NotSupported = 0x10,
  NotImplemented = 0x11,
  InvalidArgument = 0x12,
  InvalidType = 0x13,
  OperatorMissing = 0x14,
  NotFound = 0x20,
  MemoryAllocationFailed = 0x21,
  AccessFailed = 0x22,
  InvalidProgram = 0x23,
  InvalidExternalData = 0x24,
  OutOfResources = 0x25,
  DelegateInvalidCompatibility = 0x30,
  DelegateMemoryAllocationFailed = 0x31,
  DelegateInvalidHandle = 0x32,
};

// libetrt's status code (et_status_code) as the nearest ExecuTorch error.
inline Error error_from_status(int32_t status) {
  switch (status) {
    case ET_OK: return Error::Ok;
    case ET_ERR_INVALID_ARGUMENT: return Error::InvalidArgument;
    case ET_ERR_NOT_FOUND: return Error::NotFound;
    case ET_ERR_ABI_MISMATCH: return Error::NotSupported;
    case ET_ERR_OUT_OF_MEMORY: return Error::MemoryAllocationFailed;
    case ET_ERR_NOT_SUPPORTED: return Error::NotSupported;
    case ET_ERR_INVALID_FILE: return Error::AccessFailed;
    case ET_ERR_INVALID_PROGRAM: return Error::InvalidProgram;
    case ET_ERR_INVALID_STATE: return Error::InvalidState;
    default: return Error::Internal;
  }
}

inline const char* to_string(Error error) {
  switch (error) {
    case Error::Ok: return "Ok";
    case Error::Internal: return "Internal";
    case Error::InvalidState: return "InvalidState";
    case Error::EndOfMethod: return "EndOfMethod";
    case Error::AlreadyLoaded: return "AlreadyLoaded";
    case Error::NotSupported: return "NotSupported";
    case Error::NotImplemented: return "NotImplemented";
    case Error::InvalidArgument: return "InvalidArgument";
    case Error::InvalidType: return "InvalidType";
    case Error::OperatorMissing: return "OperatorMissing";
    case Error::NotFound: return "NotFound";
    case Error::MemoryAllocationFailed: return "MemoryAllocationFailed";
    case Error::AccessFailed: return "AccessFailed";
    case Error::InvalidProgram: return "InvalidProgram";
    case Error::InvalidExternalData: return "InvalidExternalData";
    case Error::OutOfResources: return "OutOfResources";
    case Error::DelegateInvalidCompatibility: return "DelegateInvalidCompatibility";
    case Error::DelegateMemoryAllocationFailed: return "DelegateMemoryAllocationFailed";
    case Error::DelegateInvalidHandle: return "DelegateInvalidHandle";
  }
  return "Unknown";
}

// Either a value or an error (never Error::Ok) with its message.
template <typename T>
class Result {
 public:
  /* implicit */ Result(T value) : value_(std::move(value)) {}
  /* implicit */ Result(Error error, std::string message = {}) : error_(error), message_(std::move(message)) {
    if (error_ == Error::Ok) {
      error_ = Error::Internal;
      message_ = "a Result was made from Error::Ok without a value";
    }
  }

  bool ok() const { return value_.has_value(); }
  Error error() const { return ok() ? Error::Ok : error_; }
  // What failed, in libetrt's words ("" when the Result holds a value).
  const std::string& message() const { return message_; }

  // Reading the value of a failed Result throws etrt::Error with its message.
  T& get() { return checked(); }
  const T& get() const { return const_cast<Result*>(this)->checked(); }
  T& operator*() { return checked(); }
  const T& operator*() const { return const_cast<Result*>(this)->checked(); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->checked(); }

 private:
  T& checked() {
    if (!value_) throw ::etrt::Error(ET_ERR_INVALID_STATE, std::string("Result holds Error::") + to_string(error_) +
                                                               (message_.empty() ? "" : ": " + message_));
    return *value_;
  }
  std::optional<T> value_;
  Error error_ = Error::Ok;
  std::string message_;
};

}  // namespace etrt::extension
