// A dimension as a model file declares it. RDP turns these into SymExprs; the IR keeps the
// declaration verbatim so it can be compared against what RDP derives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sod2 {

class DimDecl {
 public:
  enum class Kind { kUnknown, kConstant, kParam };

  static DimDecl unknown() { return DimDecl(Kind::kUnknown, 0, {}); }
  static DimDecl constant(int64_t v) { return DimDecl(Kind::kConstant, v, {}); }
  static DimDecl param(std::string name) { return DimDecl(Kind::kParam, 0, std::move(name)); }

  Kind kind() const { return kind_; }
  bool is_unknown() const { return kind_ == Kind::kUnknown; }
  bool is_constant() const { return kind_ == Kind::kConstant; }
  bool is_param() const { return kind_ == Kind::kParam; }
  int64_t value() const { return value_; }
  const std::string& param() const { return param_; }

  // "3", "batch" or "?".
  std::string to_string() const;

  bool operator==(const DimDecl&) const = default;

 private:
  DimDecl(Kind k, int64_t v, std::string p) : kind_(k), value_(v), param_(std::move(p)) {}
  Kind kind_;
  int64_t value_;
  std::string param_;
};

// nullopt = rank unknown (no shape in the file); an empty vector = a scalar.
using ShapeDecl = std::optional<std::vector<DimDecl>>;

std::string shape_to_string(const ShapeDecl& shape);

inline std::string DimDecl::to_string() const {
  switch (kind_) {
    case Kind::kConstant: return std::to_string(value_);
    case Kind::kParam: return param_;
    case Kind::kUnknown: break;
  }
  return "?";
}

inline std::string shape_to_string(const ShapeDecl& shape) {
  if (!shape) return "<unknown rank>";
  std::string out = "[";
  for (size_t i = 0; i < shape->size(); ++i) {
    if (i) out += ", ";
    out += (*shape)[i].to_string();
  }
  return out + "]";
}

}  // namespace sod2
