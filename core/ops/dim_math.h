// Shape arithmetic shared by the rule families: axes, broadcasting, and integer value propagation.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ops/infer_context.h"
#include "core/sym/ranges.h"

namespace sod2 {

// `axis` in [-rank, rank) mapped to [0, rank); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);
// The same for a list; nullopt when any is out of range or repeated.
std::optional<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);

// One broadcast dim of two (numpy rules). Requires equality where neither side can be 1.
Dim broadcast_dim(InferContext& ctx, const Dim& a, const Dim& b);
// Multidirectional broadcast of several inputs' dims; nullopt when some rank is unknown.
std::optional<DimList> broadcast_shapes(InferContext& ctx,
                                        const std::vector<const TensorFact*>& in);

// Output 0 = a copy of input `from`'s fact without its values (dtype kept unless given).
void same_shape_as_input(InferContext& ctx, size_t from = 0, size_t out = 0,
                         std::optional<DataType> dtype = std::nullopt);

// Elementwise over the known values of broadcast inputs (rank <= 1, at most
// kMaxTrackedElements); nullopt if some value is unknown or `fn` declines an element.
using ValueFn = std::function<std::optional<sym::SymExpr>(const std::vector<sym::SymExpr>&)>;
std::optional<std::vector<sym::SymExpr>> elementwise_values(
    const std::vector<const TensorFact*>& in, const DimList& out_dims, const ValueFn& fn);

// Whether a fact of this shape is small enough to carry values.
bool tracks_values(const DimList& dims);

// The element count of `dims` when every dim is constant and the count small enough to carry
// values at any rank. Only the rearranging ops (Reshape, Squeeze, Unsqueeze, Transpose, Slice)
// carry values above rank 1: torch's F.pad export reshapes its pads to [n, 2], reverses the
// rows and transposes them back, and the padded shape is lost unless the values survive.
std::optional<int64_t> tracked_count(const DimList& dims);

// Row-major strides of dims that are all constant (as where tracked_count holds).
std::vector<int64_t> row_major_strides(const DimList& dims);

// A strided view of row-major `values`: output element k, at multi-index i over `counts`
// (row-major), is values[base + sum_a i[a] * steps[a]] (what Transpose and Slice do to the
// values they carry). `steps` may be negative; every index must stay inside `values`.
std::vector<sym::SymExpr> strided_values(const std::vector<sym::SymExpr>& values, int64_t base,
                                         const std::vector<int64_t>& counts,
                                         const std::vector<int64_t>& steps);

// The symbolic number of elements of dims[from, to); nullopt when one is unknown.
std::optional<sym::SymExpr> dims_product(const DimList& dims, size_t from, size_t to);

// Converts a known value list to dims (for Reshape/Expand/ConstantOfShape shape inputs).
DimList values_to_dims(const std::vector<sym::SymExpr>& values);

// Dim i of `f`; unknown when the rank is unknown or not above i.
Dim dim_at(const TensorFact& f, size_t i);
// `d` simplified under the context's ranges; an unknown dim stays unknown.
Dim simplified(const InferContext& ctx, const Dim& d);
// Requires a == b when both are known and not the same expression.
void require_if_known(InferContext& ctx, const Dim& a, const Dim& b, std::string_view why);
// [lo, hi] of `d` within [0, kDefaultMaxDim], for execution-symbol bounds; unknown is anything.
std::pair<int64_t, int64_t> dim_bounds(const InferContext& ctx, const Dim& d);
// `rank` dims of output `out`, each a fresh execution dim in [0, kDefaultMaxDim].
DimList execution_dims(InferContext& ctx, size_t out, int64_t rank);

// The tracked values of input i; null when it is omitted or its values are unknown.
const std::vector<sym::SymExpr>* input_values(const InferContext& ctx, size_t i);
// The one tracked value of input i (a scalar or a one-element tensor), not simplified.
std::optional<sym::SymExpr> input_scalar(const InferContext& ctx, size_t i);

// The integers `dt` holds exactly (floats: up to 2^(mantissa bits + 1)); nullopt for non-numbers.
std::optional<sym::Interval> exact_integer_range(DataType dt);
// Whether `dt` holds every value `e` can take under the ranges (no wrap-around, no rounding).
bool representable(const InferContext& ctx, DataType dt, const sym::SymExpr& e);

}  // namespace sod2
