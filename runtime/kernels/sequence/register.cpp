// The sequence family: ONNX's sequence and optional ops (SequenceMap runs in the session, which
// owns bodies).
#include "runtime/kernels/sequence/sequence_kernels.h"

namespace sod2::rt {

void register_sequence_kernels(KernelRegistry& r) {
  register_sequence_element_kernels(r);
  register_sequence_split_concat_kernels(r);
  register_optional_kernels(r);
}

}  // namespace sod2::rt
