#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {

Status normalize_axis(const char* op, int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank) {
    return invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                            " is out of range for rank " + std::to_string(rank));
  }
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return Status::ok_status();
}

Status read_scalar_int(const char* op, const char* what, const Tensor* t, int64_t* out) {
  if (!t) return invalid_argument(std::string(op) + ": input '" + what + "' is missing");
  if (t->numel() != 1) {
    return invalid_argument(std::string(op) + ": '" + what + "' should hold one value, not " +
                            t->shape.to_string());
  }
  if (t->dtype == DType::kInt64) {
    *out = *t->as<int64_t>();
  } else if (t->dtype == DType::kInt32) {
    *out = *t->as<int32_t>();
  } else {
    return invalid_argument(std::string(op) + ": '" + what + "' should be int32 or int64, not " +
                            dtype_name(t->dtype));
  }
  return Status::ok_status();
}

Status axes_to_mask(const char* op, const int64_t* axes, size_t n, int rank, bool* mask) {
  for (int i = 0; i < rank; ++i) mask[i] = false;
  for (size_t i = 0; i < n; ++i) {
    int a = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis(op, axes[i], rank, &a));
    if (mask[a]) {
      return invalid_argument(std::string(op) + ": axis " + std::to_string(axes[i]) +
                              " is listed twice");
    }
    mask[a] = true;
  }
  return Status::ok_status();
}

Status read_axes_tensor(const char* op, const Tensor* t, int rank, bool* mask, int* count) {
  int64_t axes[kMaxRank];
  const int64_t n = t->numel();
  if (n > rank) {
    return invalid_argument(std::string(op) + ": " + std::to_string(n) + " axes given for rank " +
                            std::to_string(rank));
  }
  if (t->dtype != DType::kInt64 && t->dtype != DType::kInt32) {
    return invalid_argument(std::string(op) + ": axes should be int64, not " +
                            dtype_name(t->dtype));
  }
  for (int64_t i = 0; i < n; ++i)
    axes[i] = t->dtype == DType::kInt64 ? t->as<int64_t>()[i] : t->as<int32_t>()[i];
  *count = static_cast<int>(n);
  return axes_to_mask(op, axes, static_cast<size_t>(n), rank, mask);
}

Status get_string_attr(const NodeInfo& node, const char* name, const char* fallback,
                       std::string* out) {
  const AttrValue* v = node.attrs.find(name);
  if (!v) {
    *out = fallback;
    return Status::ok_status();
  }
  if (v->kind != AttrValue::Kind::kString)
    return invalid_model(std::string("attribute '") + name + "' should be a string");
  *out = v->s;
  return Status::ok_status();
}

Status require_inputs(const NodeInfo& node, size_t min_inputs) {
  size_t present = 0;
  for (size_t i = 0; i < node.input_present.size() && i < min_inputs; ++i)
    present += node.input_present[i] ? 1 : 0;
  if (present < min_inputs) {
    return invalid_model(node.op_type + ": needs " + std::to_string(min_inputs) + " inputs, has " +
                         std::to_string(present));
  }
  return Status::ok_status();
}

}  // namespace sod2::rt::math
