#include "runtime/kernels/attrs.h"

namespace sod2::rt {
namespace {

Status wrong_kind(const std::string& name, const char* want) {
  return invalid_model("attribute '" + name + "' should be " + want);
}

}  // namespace

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Expected<int64_t> Attrs::get_int(const std::string& name, int64_t fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (v->kind != AttrValue::Kind::kInt) return wrong_kind(name, "an int");
  return v->i;
}

Expected<float> Attrs::get_float(const std::string& name, float fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (v->kind != AttrValue::Kind::kFloat) return wrong_kind(name, "a float");
  return v->f;
}

Expected<std::string> Attrs::get_string(const std::string& name,
                                        const std::string& fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (v->kind != AttrValue::Kind::kString) return wrong_kind(name, "a string");
  return v->s;
}

Expected<std::vector<int64_t>> Attrs::get_ints(const std::string& name,
                                               std::vector<int64_t> fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (v->kind != AttrValue::Kind::kInts) return wrong_kind(name, "a list of ints");
  return v->ints;
}

Expected<std::vector<float>> Attrs::get_floats(const std::string& name,
                                               std::vector<float> fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (v->kind != AttrValue::Kind::kFloats) return wrong_kind(name, "a list of floats");
  return v->floats;
}

Expected<const HostTensor*> Attrs::get_tensor(const std::string& name) const {
  const AttrValue* v = find(name);
  if (!v) return invalid_model("attribute '" + name + "' is missing");
  if (v->kind != AttrValue::Kind::kTensor) return wrong_kind(name, "a tensor");
  return &v->tensor;
}

}  // namespace sod2::rt
