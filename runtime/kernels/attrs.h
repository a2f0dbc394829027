// A node's attributes as the runtime stores them (from a package or built from core's IR).
// Kernels read them once, when they are created, and keep what they need in their own fields,
// so running a kernel never looks up a name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/tensor/tensor.h"

namespace sod2::rt {

struct AttrValue {
  enum class Kind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  HostTensor tensor;
  int32_t graph = -1;  // index of a subgraph in the program (If/Loop/Scan bodies)
};

class Attrs {
 public:
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const AttrValue* find(const std::string& name) const;

  // Typed readers: the default when absent; an error naming the attribute when present with
  // another kind.
  Expected<int64_t> get_int(const std::string& name, int64_t fallback) const;
  Expected<float> get_float(const std::string& name, float fallback) const;
  Expected<std::string> get_string(const std::string& name, const std::string& fallback) const;
  Expected<std::vector<int64_t>> get_ints(const std::string& name,
                                          std::vector<int64_t> fallback = {}) const;
  Expected<std::vector<float>> get_floats(const std::string& name,
                                          std::vector<float> fallback = {}) const;
  // Errors: absent or not a tensor.
  Expected<const HostTensor*> get_tensor(const std::string& name) const;

  const std::map<std::string, AttrValue>& all() const { return values_; }

 private:
  std::map<std::string, AttrValue> values_;
};

}  // namespace sod2::rt
