// Which kernel runs which op: factories keyed by (domain, op_type) and the first opset version
// they implement, like ONNX's own schema versions.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

class KernelRegistry {
 public:
  // `since_opset`: the first opset whose definition this factory follows; a later entry for the
  // same op takes over from its own since_opset on.
  void add(const std::string& domain, const std::string& op_type, int since_opset,
           KernelFactory factory);
  // The factory for this opset, or nullptr.
  KernelFactory find(const std::string& domain, const std::string& op_type, int opset) const;
  // Creates the node's kernel. Errors: no kernel for the op (names op and opset), or the
  // factory's own.
  Expected<std::unique_ptr<Kernel>> create(const NodeInfo& node) const;
  std::vector<std::string> op_types() const;  // "Conv", "com.microsoft:Foo"...
  // Channels per block of the channel-blocked values these kernels hold (kernel.h, BlockedIo): 16
  // or 8 where the blocked convolutions run on this CPU, 0 where none do.
  int channel_block() const { return channel_block_; }
  void set_channel_block(int block) { channel_block_ = block; }

  // Every kernel of this runtime.
  static const KernelRegistry& standard();

 private:
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<int, KernelFactory>>>
      entries_;
  int channel_block_ = 0;
};

// One per kernel family (runtime/kernels/<family>/); standard() calls them all.
void register_math_kernels(KernelRegistry& r);
void register_linalg_kernels(KernelRegistry& r);
void register_data_kernels(KernelRegistry& r);
void register_sequence_kernels(KernelRegistry& r);
void register_string_kernels(KernelRegistry& r);

}  // namespace sod2::rt
