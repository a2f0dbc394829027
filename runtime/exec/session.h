// Executes a ProgramDesc (DESIGN §6): bind input dims → check ranges and assumptions → evaluate
// the plan program → run the nodes in the planned order inside the arena → outputs as views.
//
// Execution symbols (an EDO op's output size, an If's choice) are bound when the node producing
// them asks for its output's memory; the plan program is evaluated again then, and the arena
// grows if the tensors after that point need more. Tensors written before keep their offsets
// (the planner gives each tensor an offset over sizes known by its first step, DESIGN §5), so
// growing only copies bytes; each new layout is still verified sound before a kernel writes.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/exec/device_backend.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/memory/arena.h"
#include "runtime/memory/offset_allocator.h"
#include "runtime/program/binding_layout.h"
#include "runtime/program/plan_layout.h"
#include "runtime/program/program.h"
#include "runtime/threads/thread_pool.h"

namespace sod2::rt {

// What one run may take (DESIGN §6, untrusted packages). Reaching a limit ends the run with
// kResourceExhausted naming the limit and how to raise it; the session stays usable.
struct RunLimits {
  // Bytes one run may hold: the arena, values outside the plan (bodies, heap values) and kernel
  // scratch, all sizes overflow-checked. 0: the default, half of the physical memory.
  int64_t max_bytes = 0;
  // Iterations of one Loop or Scan node in one run. 0: the default, 10,000,000.
  int64_t max_loop_iterations = 0;
  // Wall-clock time of one run in milliseconds, checked between nodes and loop iterations.
  // 0: no limit.
  int64_t max_run_ms = 0;
};
inline constexpr int64_t kDefaultMaxLoopIterations = 10'000'000;
// The most worker threads a session takes: this many per hardware thread.
inline constexpr int kMaxThreadsPerCore = 4;

struct SessionOptions {
  int threads = 0;       // 0: one per hardware thread; at most kMaxThreadsPerCore per core
  bool profile = false;  // time every node, main graph and bodies (NodeTimes)
  // For sessions that never run at the same time (a family's variants): one arena, grown to the
  // largest plan among them, and one set of worker threads (then `threads` is ignored). A run's
  // outputs are then valid until any of them runs. Null: the session's own.
  std::shared_ptr<Arena> shared_arena = nullptr;
  std::shared_ptr<ThreadPool> shared_pool = nullptr;
  // Runs what it can of the main graph on a device (DESIGN §6), the rest on the CPU. Null: CPU
  // only. Not with a shared arena: the backend supplies the arena's memory.
  std::shared_ptr<DeviceBackend> backend = nullptr;
  RunLimits limits = {};
  // Hold values between the kernels that can take them channel-blocked (kernel.h, BlockedIo).
  // false keeps every value NCHW (for comparisons; results differ only in rounding).
  bool channel_blocked = true;
  // Let 3x3 convolutions run as Winograd F(2x2, 3x3) where oneDNN offers it and its transformed
  // weights and scratchpads take no more memory than the conv's output (conv_blocked.cpp).
  // false runs every conv directly (for comparisons; results differ only in rounding).
  bool winograd = true;
};

// Where a main-graph node runs, for `sod2 plan` and the studio.
struct NodeBackend {
  bool device = false;
  // When !device and a backend was asked for: why the CPU runs it.
  CpuReason reason = CpuReason::kNone;
  std::string why_cpu;  // the specifics ("Conv: only float32 is on Vulkan")
};

// Time spent per node over the runs since the last reset, for `sod2 run --profile` and the
// agent. A main-graph control-flow node's time includes its bodies.
struct NodeTimes {
  std::vector<double> total_ms;  // per main-graph node, in execution order
  int64_t runs = 0;
  // The last run, per main-graph node: when it started (ms after the run began), how long it took,
  // its first output's shape and the bytes of all its outputs (what a profile trace shows).
  std::vector<double> last_start_ms, last_ms;
  std::vector<Shape> last_output_shape;
  std::vector<int64_t> last_output_bytes;
  // Per body graph g (ProgramDesc::graphs[g] for g >= 1: If branches, Loop, Scan and SequenceMap
  // bodies, nested ones too; [0] stays empty), per node: its time and how often it ran. Calls,
  // not runs, count a body node: it runs once per iteration, or never in an untaken branch.
  std::vector<std::vector<double>> body_total_ms;
  std::vector<std::vector<int64_t>> body_calls;
};

class Frame;

class Session {
 public:
  // Creates every node's kernel. Errors: an op without a kernel, a bad attribute (named).
  static Expected<std::unique_ptr<Session>> create(ProgramDesc program,
                                                   const KernelRegistry& registry,
                                                   SessionOptions options = {});
  ~Session();

  // Inputs in the main graph's input order. The outputs are views valid until the next run().
  // Errors: wrong count, dtype or rank; a dim outside its symbol's range or off its multiple;
  // dims that disagree about one symbol; a broken assumption; a kernel's error (with the node);
  // a limit of SessionOptions::limits (kResourceExhausted); `cancel` set by another thread while
  // the run goes on (kCancelled: checked between nodes and loop iterations).
  Expected<std::span<const Tensor>> run(std::span<const Tensor> inputs,
                                        const std::atomic<bool>* cancel = nullptr);

  const ProgramDesc& program() const { return program_; }
  size_t arena_capacity() const { return arena_->capacity(); }
  int64_t arena_bytes() const { return arena_bytes_; }  // of the last run's plan
  // The plan version the last run used: -1 for the whole-range plan (ProgramDesc::plan_versions),
  // plan::kBindingGreedyVersion for greedy by size at the run's sizes, kBindingLayeringVersion
  // for a layering chosen at them (plan::ExecutionLayout).
  int32_t plan_version() const { return plan_version_; }
  // The last run's instantiated plan as the plan program gave it with every symbol the run bound:
  // each arena tensor's size, then each offset, then the arena size (what `sod2 run --dump-plan`
  // writes, to compare with the plan `sod2 plan` and the studio show).
  std::span<const int64_t> plan_values() const { return plan_values_; }
  // ProgramDesc::symbols[i] in the last run, and whether the run bound it (an execution symbol
  // whose producing node did not run is not bound; its value is then a stand-in).
  int64_t symbol_value(size_t i) const { return symbol_values_[i]; }
  bool symbol_bound(size_t i) const { return symbol_bound_[i] != 0; }
  // Bytes of the buffer that holds control-flow body values (and any value the plan cannot size).
  size_t value_buffer_capacity() const { return value_buffer_.capacity(); }
  void trim() {
    if (backend_) (void)backend_->sync();
    arena_->trim();
    value_buffer_.trim();
  }
  const NodeTimes& node_times() const { return times_; }
  // Per main-graph node (after generated groups replaced their nodes), where it runs.
  const std::vector<NodeBackend>& node_backends() const { return node_backends_; }
  DeviceBackend* backend() const { return backend_.get(); }
  // Channels per block of the values held channel-blocked (0: none is), and whether main-graph
  // value v is one of them (blocked_values.h).
  int channel_block() const { return channel_block_; }
  bool value_blocked(size_t v) const { return v < blocked_values_.size() && blocked_values_[v]; }
  void reset_node_times();
  int threads() const { return pool_->num_threads(); }

 private:
  friend class Frame;
  friend class NodeOutputs;
  Session(ProgramDesc program, SessionOptions options);

  // run() without its handler for what the standard library throws.
  Expected<std::span<const Tensor>> run_checked(std::span<const Tensor> inputs);
  Status bind_inputs(std::span<const Tensor> inputs);
  // from_step: the first main-graph step whose tensors the layout must still keep apart (the
  // steps before it have run). changed_symbol: the execution symbol just bound, whose slice of
  // the plan program is all that needs evaluating again (-1: all of it).
  Status instantiate_plan(int32_t from_step = 0, int32_t changed_symbol = -1);
  // The slice of plan_ that symbol s reaches (ShapeProgram::slice_for_input), made on first use;
  // nullptr where evaluating all of it is as cheap.
  const std::vector<uint32_t>* plan_slice(int32_t s);
  Status run_graph(Frame& frame);
  // Whether a CPU kernel about to run must wait for the device work recorded so far.
  bool cpu_kernel_conflicts(const Frame& frame, const NodeDesc& node,
                            const Tensor* const* ins) const;
  // With a backend: each generated group the backend takes replaces its nodes by one node, and
  // each other main-graph node gets the backend's kernel where it has one.
  Status create_main_kernels(const KernelRegistry& registry);
  // Chooses the main-graph values held channel-blocked and tells their kernels.
  void hold_blocked_values(int block);
  Status run_node(Frame& frame, const NodeDesc& node, size_t node_index);
  Status run_if(Frame& frame, const NodeDesc& node);
  Status run_loop(Frame& frame, const NodeDesc& node);
  Status run_scan(Frame& frame, const NodeDesc& node);
  Status run_sequence_map(Frame& frame, const NodeDesc& node);
  // Runs graph `g` with these inputs in a child frame of `parent` and returns that frame; its
  // outputs stay valid until leave_body().
  Expected<Frame*> enter_body(Frame& parent, int32_t g, std::span<const Tensor> inputs);
  void leave_body(Frame& child);
  // enter_body, outputs copied into `out`, leave_body.
  Status run_body(Frame& parent, int32_t g, std::span<const Tensor> inputs,
                  std::vector<HostTensor>* out);
  // Gives value v's value-buffer range back to the allocator, if it holds one.
  void release_value(Frame& frame, size_t v);
  // Before a run: grows the value buffer to what earlier runs needed.
  Status prepare_value_buffer();
  // Fills values_in_arena_tensor_ and arena_values_ from the main graph's values.
  void index_arena_values();
  // Binds an execution symbol from a dim of the value `value_name`, written at main-graph step
  // `step` (0 where unknown); re-instantiates the plan if it changed.
  Status bind_execution_symbol(int32_t symbol, int64_t value, const std::string& value_name,
                               int32_t step);
  // Proves the layout plan_values_ describes sound (plan_layout.h) for the tensors live at
  // from_step or later, unless it is the layout proved last for those or more. Tensors dead
  // before from_step are left out: the steps that used their bytes have run, and no later write
  // can touch them.
  Status verify_instantiated_plan(int32_t from_step);
  // Swaps in greedy by size at this run's sizes when its arena is smaller (binding_layout.h).
  void use_binding_greedy();
  // Sets plan_version_ to kBindingLayeringVersion where the binding's layering is used.
  void choose_execution_layout();
  // Between nodes and loop iterations: the run's cancel flag and time limit.
  Status check_run_alive() const;
  // Before a Loop's or Scan's iteration `iteration` (from 0): the iteration limit, then
  // check_run_alive().
  Status loop_may_iterate(int64_t iteration) const;
  // Whether the scan outputs a loop gathered (`part_bytes` so far) fit the run's memory limit.
  Status parts_fit(uint64_t part_bytes) const;
  // The bytes a run may still hold outside the arena.
  uint64_t bytes_left_outside_arena() const {
    return max_bytes_ > arena_bytes_ ? static_cast<uint64_t>(max_bytes_ - arena_bytes_) : 0;
  }

  ProgramDesc program_;
  std::shared_ptr<ThreadPool> pool_;  // never null
  bool winograd_ = true;              // SessionOptions::winograd
  // kernels_[g][n]: nullptr for the control-flow ops the session runs itself.
  std::vector<std::vector<std::unique_ptr<Kernel>>> kernels_;
  std::unique_ptr<Frame> main_;
  // One frame per body graph, kept across runs so body values reuse their heap bytes (a body
  // never runs inside itself, so one frame per graph suffices).
  std::vector<std::unique_ptr<Frame>> body_frames_;
  std::vector<std::vector<HostTensor>> body_results_;  // per Loop/Scan body graph, reused likewise
  // releases_after_[g][n]: the values of graph g whose last reader is node n (reads from nested
  // bodies count as reads by the control-flow node), freed from the value buffer after it runs.
  std::vector<std::vector<std::vector<int32_t>>> releases_after_;
  OffsetAllocator value_offsets_;
  Arena value_buffer_;
  struct LoopBuffers {
    std::vector<HostTensor> state;               // loop-carried values
    std::vector<std::vector<HostTensor>> parts;  // per scan output, one per iteration
    std::vector<size_t> parts_used;
    HostTensor iter, cond;
    std::vector<Tensor> inputs;
  };
  std::vector<LoopBuffers> loop_buffers_;   // per Loop body graph
  std::shared_ptr<DeviceBackend> backend_;  // null: CPU only
  bool attached_ = false;                   // to backend_
  std::vector<NodeBackend> node_backends_;  // per main-graph node
  int channel_block_ = 0;
  std::vector<char> blocked_values_;  // per main-graph value
  std::shared_ptr<Arena> arena_;      // never null
  std::vector<int64_t> symbol_values_;
  std::vector<char> symbol_bound_;
  const rt::ShapeProgram* plan_ = nullptr;  // the plan_program or version of this run
  int32_t plan_version_ = -1;
  std::vector<int64_t> plan_values_;  // sizes, offsets, arena size
  std::vector<int64_t> plan_scratch_;
  // plan_'s own outputs at the symbols bound so far (plan_values_ before a layout made at the
  // binding replaces offsets), which a slice updates in place.
  std::vector<int64_t> plan_outputs_;
  const rt::ShapeProgram* plan_outputs_of_ = nullptr;
  // Slices per execution symbol of the plan programs used lately.
  struct PlanSlices {
    const rt::ShapeProgram* plan = nullptr;
    std::vector<std::vector<uint32_t>> slices;
    std::vector<char> made, useful;
  };
  std::vector<PlanSlices> plan_slices_;
  int64_t arena_bytes_ = 0;
  std::vector<uint8_t> scratch_;  // kernel scratch, reused
  size_t scratch_used_ = 0;
  std::vector<Tensor> outputs_;
  // Where kernels write the optional outputs a model omits (per node run, reused).
  static constexpr size_t kMaxDiscarded = 8;
  HostTensor discarded_[kMaxDiscarded];
  Tensor discarded_views_[kMaxDiscarded];
  bool profile_ = false;
  NodeTimes times_;
  std::chrono::steady_clock::time_point run_start_;
  const std::atomic<bool>* cancel_ = nullptr;  // of the run in progress
  // Limits (SessionOptions::limits with defaults filled in).
  int64_t max_bytes_ = 0;
  int64_t max_loop_iterations_ = 0;
  int64_t max_run_ms_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  // The arena tensors' lifetimes over main-graph nodes (runtime/program/program_dataflow.h), and
  // the layout proved last with the buffers that prove it.
  std::vector<plan::Lifetime> arena_life_;
  std::vector<char> arena_used_;
  std::vector<plan::PlacedTensor> placed_;
  plan::LayoutVerifier layout_verifier_;
  std::vector<int64_t> verified_plan_values_;
  int32_t verified_from_step_ = 0;  // the step verified_plan_values_ was proved from
  // The main graph's values in the arena by arena tensor (values_in_arena_tensor_[k] ..
  // [k + 1] index arena_values_), and the plan values before an execution symbol's binding: the
  // values already written that a binding must not move are only those of tensors it moves.
  std::vector<int32_t> values_in_arena_tensor_, arena_values_;
  std::vector<int64_t> plan_values_before_;
  // A binding's greedy layout (binding_layout.h), for programs without execution symbols; the
  // last plan values it was asked about and its answer, so a repeated binding costs a compare.
  bool binding_greedy_ = false;
  plan::GreedyLayout greedy_layout_;
  std::vector<int64_t> greedy_in_, greedy_out_, greedy_scratch_;
  bool greedy_used_ = false;
  // For programs with execution symbols: the layerings chosen for the last few bindings (input
  // symbols and version; binding_layout.h), the current one first, and the bounds every bound
  // execution symbol is checked against.
  struct ChosenLayout {
    std::vector<int64_t> key;
    plan::ExecutionLayout layout;
  };
  static constexpr size_t kExecLayoutsKept = 8;
  bool exec_layout_applies_ = false;
  std::vector<ChosenLayout> exec_layouts_;
  std::vector<int64_t> exec_layout_key_;  // the run's, reused
  plan::ExecutionBounds exec_bounds_;
};

}  // namespace sod2::rt
