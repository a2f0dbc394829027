// A device backend (DESIGN §6): runs some main-graph nodes, or whole fused groups, on an
// accelerator while the CPU kernels run the rest. The session stays backend-neutral: it asks the
// backend for a kernel per node and per generated group, lets it supply the arena's memory (so
// both sides see the planned tensors at the same offsets), and calls sync() before a CPU kernel
// reads or writes what device work still pending may touch. Today's one backend is Vulkan
// (runtime/vulkan).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "core/status/status.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/memory/arena.h"
#include "runtime/program/program.h"

namespace sod2::rt {

// What a backend did during the runs since the last reset (the bench and `sod2 run` report it).
struct BackendCounters {
  int64_t dispatches = 0;  // device kernel launches
  int64_t syncs = 0;       // submit-and-wait points (CPU-fallback boundaries, run ends)
  int64_t uploads = 0;     // host tensors copied to the device (graph inputs, heap values)
  int64_t upload_bytes = 0;
  int64_t cpu_kernels = 0;        // nodes the CPU ran in a session with this backend
  int64_t runtime_fallbacks = 0;  // device kernels that handed one run to their CPU kernel
};

// Why the CPU runs a main-graph node of a session that has a device backend: typed, so tools
// count and group the reasons without parsing text; Decline::detail says the specifics.
enum class CpuReason : uint8_t {
  kNone,            // the device runs it
  kNoShader,        // the backend has no shader written for the op
  kHostOnly,        // it reads only shapes (Shape, Size): the host answers without the device
  kNotInArena,      // an output is not in the memory plan, so the device cannot address it
  kControlFlow,     // If / Loop / Scan: their bodies run on the CPU
  kCaseNotCovered,  // the op's shader declines this node: its dtypes, attributes or shapes
  kGroupDeclined,   // a generated group it belongs to was declined (the detail says why)
};
inline const char* cpu_reason_name(CpuReason r) {
  switch (r) {
    case CpuReason::kNone: return "on the device";
    case CpuReason::kNoShader: return "no shader for the op";
    case CpuReason::kHostOnly: return "reads only shapes, on the host";
    case CpuReason::kNotInArena: return "output not in the memory plan";
    case CpuReason::kControlFlow: return "control flow runs on the CPU";
    case CpuReason::kCaseNotCovered: return "the shader does not cover this case";
    case CpuReason::kGroupDeclined: return "its generated group was declined";
  }
  return "unknown";
}

// A backend's answer when it does not take a node or a group.
struct Decline {
  CpuReason reason = CpuReason::kNone;
  std::string detail;  // "Conv: only float32 is on Vulkan"
};

// Host bytes [begin, end) a kernel reads or writes.
struct ByteRange {
  const void* begin = nullptr;
  const void* end = nullptr;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string name() const = 0;  // "vulkan (llvmpipe ...)"

  // The device kernel for a main-graph node, or nullptr with `why` set when the CPU runs it.
  // `cpu` is the node's CPU kernel factory source, for device kernels that hand a run to the
  // CPU when its shapes are beyond them.
  virtual Expected<std::unique_ptr<Kernel>> make_kernel(const ProgramDesc& program,
                                                        const NodeDesc& node,
                                                        const KernelRegistry& cpu,
                                                        Decline* why) = 0;
  // The kernel for generated group `group` (ProgramDesc::gpu_kernels), or nullptr with `why`.
  virtual Expected<std::unique_ptr<Kernel>> make_group_kernel(const ProgramDesc& program,
                                                              size_t group, Decline* why) = 0;
  // A session takes the backend before asking for kernels and gives it back when it ends: a
  // backend holds one program's device state (its constants, its shaders) at a time. Error: it
  // serves another session.
  virtual Status attach() = 0;
  virtual void detach() = 0;
  // After every kernel exists: copies the constants device kernels read to the device.
  virtual Status prepare(const ProgramDesc& program) = 0;
  // Memory both the host and the device address: the session's arena is allocated from it.
  virtual std::shared_ptr<ArenaMemory> arena_memory() = 0;

  // Errors: the device was lost (a sync timed out or failed).
  virtual Status begin_run() = 0;
  // Submits the device work recorded so far and waits for it.
  virtual Status sync() = 0;
  virtual bool pending() const = 0;
  // Whether a CPU kernel reading `reads` and writing `writes` must wait for the device work
  // recorded so far: it reads bytes that work writes, or writes bytes it reads or writes. A CPU
  // kernel that touches none of them runs while the device works.
  virtual bool conflicts(std::span<const ByteRange> reads,
                         std::span<const ByteRange> writes) const = 0;

  virtual const BackendCounters& counters() const = 0;
  virtual void reset_counters() = 0;
  // A CPU kernel is about to run: counted, and copies of host bytes staged before it are
  // forgotten (it may rewrite them; a later shader reads them afresh).
  virtual void on_cpu_kernel() = 0;
};

}  // namespace sod2::rt
