#include "runtime/kernels/linalg/common.h"

#include <algorithm>

namespace sod2::rt {

Status unsupported_dtype(const char* op, const char* input, DType t) {
  return unsupported(std::string(op) + ": dtype " + dtype_name(t) + " of input " + input +
                     " is not supported (float32 only)");
}

Status require_float_inputs(const NodeInfo& node) {
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    if (i < node.input_present.size() && !node.input_present[i]) continue;
    const DType t = node.input_dtypes[i];
    // Integer side inputs (sequence_lens, Resize sizes/roi...) are checked by the ops themselves.
    if (t != DType::kFloat && t != DType::kUndefined)
      return unsupported_dtype(node.op_type.c_str(), std::to_string(i).c_str(), t);
  }
  return Status::ok_status();
}

Expected<float*> scratch_floats(KernelContext& ctx, int64_t count) {
  SOD2_ASSIGN_OR_RETURN(
      void* p, ctx.scratch(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float)));
  return static_cast<float*>(p);
}

bool broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b,
                      std::vector<int64_t>* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

std::string dims_string(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

}  // namespace sod2::rt
