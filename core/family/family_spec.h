// A family file (variants.json): the sub-networks of one supernet that a family package holds,
// with what the runtime manager orders them by (MACs, parameters, accuracy when known).
//
//   {"family": "dofa_mbv3",
//    "variants": [{"name": "small", "file": "small/model.onnx", "macs_224": 54740184,
//                  "params": 999808, "accuracy": 0.71, "config": {...}}, ...]}
//
// `macs` may also be spelled `macs_<resolution>`; `accuracy` (or `top1`) is optional.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::family {

struct VariantSpec {
  std::string name;
  std::string model_path;  // resolved against the family file's folder
  uint64_t macs = 0;
  uint64_t params = 0;
  bool has_accuracy = false;
  double accuracy = 0;
  std::string config;  // the variant's "config" as compact JSON ("" if none)
};

struct FamilySpec {
  std::string name;
  std::string path;  // of the family file
  std::vector<VariantSpec> variants;
};

// Errors name the file and the entry: not JSON, no variants, a variant without a name or file,
// two variants with one name, a model file that does not exist, a negative or non-numeric count.
Expected<FamilySpec> read_family_spec(const std::string& path);

}  // namespace sod2::family
