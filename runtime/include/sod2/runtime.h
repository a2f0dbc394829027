// SoD2 runtime: run a compiled model package (.sod2, made by `sod2 compile`) on a device.
//
// The one header an app includes; link the sod2_runtime_api library. Standard library only.
//
//   std::shared_ptr<const sod2::api::Package> package;
//   sod2::api::Status st = sod2::api::Package::load("model.sod2", &package);
//   std::unique_ptr<sod2::api::Session> session;
//   st = sod2::api::Session::create(package, /*threads=*/2, &session);
//   std::vector<sod2::api::TensorView> outputs;
//   st = session->run({input}, &outputs);   // outputs valid until the next run()
//
// Nothing throws; every call returns a Status whose message says what to fix. A Package is
// immutable and may be shared by sessions on different threads; one Session runs one call at a
// time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sod2::api {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // wrong inputs: count, type, rank, a size outside the compiled range
  kNotFound,           // no such file
  kParseError,         // not a package, or a corrupt one
  kInvalidModel,       // a package describing an invalid program
  kUnsupported,        // valid, but outside what this runtime handles (e.g. a newer format)
  kIoError,            // the operating system refused a read
  kInternal,           // a bug in sod2
  kCancelled,          // the run was cancelled through its flag
  kResourceExhausted,  // a limit was reached: memory, time, loop iterations, threads
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Element types, numbered like ONNX's TensorProto.DataType.
enum class ElementType : uint8_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,
  // 8-bit floats (ONNX opset 19), one byte each: the bits as ONNX defines them.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
};

// Bytes per element (0 for kUndefined).
size_t element_size(ElementType t);

// A dense, row-major tensor someone else owns. For inputs, `data` must hold
// product(shape) * element_size(type) bytes; the runtime only reads it.
struct TensorView {
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;
  const void* data = nullptr;

  size_t size_bytes() const;
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data);
  }
};

struct IoInfo {
  std::string name;
  ElementType type = ElementType::kUndefined;  // kUndefined: decided at run time
  int rank = -1;                               // -1: unknown (outputs)
};

class Package {
 public:
  // Maps the file read-only and validates it (checksum, every offset and index); the weights stay
  // in the mapping. Errors: a missing file, a truncated or corrupt package, a newer format.
  static Status load(const std::string& path, std::shared_ptr<const Package>* out);

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;

  ~Package();

 private:
  friend class Session;
  struct Impl;
  explicit Package(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

enum class Backend : uint8_t {
  kCpu,     // every node on the CPU
  kVulkan,  // what the Vulkan device can run on it (generated and hand-written compute
            // shaders), the rest on the CPU
};

struct SessionConfig {
  int threads = 0;  // worker threads for CPU kernels, 0 for one per hardware thread
  Backend backend = Backend::kCpu;
  int vulkan_device = -1;  // -1: the first discrete GPU, else integrated, else any
  // What one run may take; reaching a limit ends the run with kResourceExhausted. A package is
  // data from outside: these bound what it can make a run do.
  int64_t max_run_bytes = 0;        // arena + other values + scratch; 0: half the physical memory
  int64_t max_loop_iterations = 0;  // per Loop/Scan node and run; 0: 10,000,000
  int64_t max_run_ms = 0;           // wall-clock per run; 0: none
};

class Session {
 public:
  // threads: worker threads for kernels, 0 for one per hardware thread. Errors: an op this
  // runtime has no kernel for.
  static Status create(std::shared_ptr<const Package> package, int threads,
                       std::unique_ptr<Session>* out);
  // Errors as above, and for kVulkan: no Vulkan device, or a runtime built without Vulkan.
  static Status create(std::shared_ptr<const Package> package, const SessionConfig& config,
                       std::unique_ptr<Session>* out);
  ~Session();

  // Inputs in the order of Package::inputs(). On success `outputs` holds views into the
  // session's memory, valid until the next run() or until the session is destroyed; copy what
  // must outlive that.
  // `cancel` (optional), set from another thread, ends the run with kCancelled between nodes
  // and loop iterations.
  Status run(std::span<const TensorView> inputs, std::vector<TensorView>* outputs,
             const std::atomic<bool>* cancel = nullptr);

  // Gives back memory held for the largest input sizes seen so far.
  void trim();

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sod2::api
