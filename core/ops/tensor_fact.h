// What RDP knows about one value: its rank, each dim as a SymExpr (or unknown), and for small
// integer tensors the element values as SymExprs — what carries Shape → Gather → Concat → Reshape.
//
// The lattice: rank unknown < rank known; a dim unknown < a dim known; values unknown < values
// known. RDP only ever moves facts up (or replaces an execution symbol by an expression of older
// symbols), which is what makes its worklist terminate.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/data_type.h"
#include "core/ir/value.h"
#include "core/sym/sym_expr.h"

namespace sod2 {

using Dim = std::optional<sym::SymExpr>;  // nullopt: unknown
using DimList = std::vector<Dim>;

// Values are tracked for integer (and integral float) tensors of rank <= 1 with at most this many
// elements: shape vectors, indices, scalars.
inline constexpr int64_t kMaxTrackedElements = 64;

struct TensorFact {
  TypeCategory category = TypeCategory::kTensor;
  DataType dtype = DataType::kUndefined;
  std::optional<DimList> dims;                     // nullopt: rank unknown
  std::optional<std::vector<sym::SymExpr>> value;  // row-major element values, when known
  std::shared_ptr<const TensorFact> element;       // for sequences: what each element is

  static TensorFact unknown(DataType dtype = DataType::kUndefined) {
    TensorFact f;
    f.dtype = dtype;
    return f;
  }
  static TensorFact ranked(DataType dtype, int64_t rank) {
    TensorFact f;
    f.dtype = dtype;
    f.dims = DimList(static_cast<size_t>(rank));
    return f;
  }
  static TensorFact shaped(DataType dtype, DimList dims) {
    TensorFact f;
    f.dtype = dtype;
    f.dims = std::move(dims);
    return f;
  }
  // A tensor of rank <= 1 whose values are known; rank 0 when `scalar`.
  static TensorFact with_value(DataType dtype, std::vector<sym::SymExpr> values, bool scalar);

  bool rank_known() const { return dims.has_value(); }
  int64_t rank() const { return dims ? static_cast<int64_t>(dims->size()) : -1; }
  bool all_dims_known() const;
  // Product of the dims, when every dim is known.
  std::optional<sym::SymExpr> numel() const;
  // Values as integers, when every element is a constant.
  std::optional<std::vector<int64_t>> int_values() const;

  // "[batch, seq+1, 128]", "[?, 3]", "<unknown rank>"; values appended as " = (2, h)".
  std::string to_string() const;

  friend bool operator==(const TensorFact& a, const TensorFact& b);
};

}  // namespace sod2
