// The one error type of core and runtime: a Status carries a code and a message a user can act on;
// Expected<T> is a value or a Status. Neither throws; callers branch on ok().
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace sod2 {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad user input: a flag, a binding, a range
  kNotFound,           // a file, a value or a symbol that does not exist
  kParseError,         // bytes that do not form a valid model/package
  kInvalidModel,       // a well-formed file describing an invalid graph
  kUnsupported,        // valid, but outside what this version handles
  kIoError,            // the operating system refused a read or write
  kInternal,           // a bug in sod2 itself
  kCancelled,          // the user stopped long work before it finished
  kResourceExhausted,  // a limit was reached: memory, time, iterations, threads, queued bytes
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("file model.onnx: ") so errors read outermost-first.
  Status with_context(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

  std::string to_string() const {
    return ok() ? std::string("ok") : std::string(status_code_name(code_)) + ": " + message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kParseError: return "parse error";
    case StatusCode::kInvalidModel: return "invalid model";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kResourceExhausted: return "resource exhausted";
  }
  return "unknown";
}

inline Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status parse_error(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
inline Status invalid_model(std::string m) { return {StatusCode::kInvalidModel, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status resource_exhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}

template <typename T>
class [[nodiscard]] Expected {
  static_assert(!std::is_same_v<T, Status>, "Expected<Status> is meaningless; return Status");

 public:
  Expected(T value) : data_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(data_).ok() && "an Expected built from a Status must hold an error");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace sod2

// Returns early with the error of a Status-returning expression.
#define SOD2_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::sod2::Status sod2_status_ = (expr);        \
    if (!sod2_status_.ok()) return sod2_status_; \
  } while (0)

#define SOD2_CONCAT_INNER(a, b) a##b
#define SOD2_CONCAT(a, b) SOD2_CONCAT_INNER(a, b)
// Declares `lhs` from an Expected, or returns its error.
#define SOD2_ASSIGN_OR_RETURN(lhs, expr) \
  SOD2_ASSIGN_OR_RETURN_IMPL(SOD2_CONCAT(sod2_expected_, __LINE__), lhs, expr)
#define SOD2_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
