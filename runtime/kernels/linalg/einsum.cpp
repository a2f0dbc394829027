// Einsum (opset 12) on float32, float64, int32, int64, uint32 and uint64 (all operands of one
// type; integers wrap around like the other integer kernels): any number of operands (up to 8),
// explicit or implicit output, ellipsis broadcasting, repeated labels in an operand (diagonals). A
// direct loop over the output elements and, per element, the reduced labels; each operand's offset
// is a sum of per-label strides, so a repeated label simply adds its dims' strides.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

constexpr int kMaxOps = 8;
constexpr int kLetters = 52;                     // a-z, A-Z
constexpr int kMaxLabels = kLetters + kMaxRank;  // letters, then ellipsis dims
constexpr int kEllipsis = -1;
// Products one run may take (outputs times reduced terms): the direct loop does about 10^9 a
// second, so this is minutes of work.
constexpr int64_t kMaxWork = int64_t{1} << 40;

int label_of(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -2;
}
char char_of(int l) {
  return l < 26 ? static_cast<char>('a' + l) : static_cast<char>('A' + l - 26);
}

struct Equation {
  std::vector<std::vector<int>> inputs;  // labels, kEllipsis where "..." stands
  std::vector<int> output;
  bool explicit_output = false;
};

Expected<std::vector<int>> parse_term(const std::string& t, const std::string& eq) {
  std::vector<int> out;
  bool ell = false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '.') {
      if (ell || t.compare(i, 3, "...") != 0)
        return invalid_argument("Einsum: bad ellipsis in '" + eq + "'");
      ell = true;
      out.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int l = label_of(t[i]);
    if (l < 0)
      return invalid_argument("Einsum: bad character '" + std::string(1, t[i]) + "' in '" + eq +
                              "'");
    out.push_back(l);
  }
  return out;
}

Expected<Equation> parse_equation(const std::string& raw) {
  std::string eq;
  for (char c : raw)
    if (c != ' ') eq += c;
  Equation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    SOD2_ASSIGN_OR_RETURN(std::vector<int> term, parse_term(lhs.substr(start, comma - start), raw));
    e.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    SOD2_ASSIGN_OR_RETURN(e.output, parse_term(eq.substr(arrow + 2), raw));
    for (size_t i = 0; i < e.output.size(); ++i)
      for (size_t j = i + 1; j < e.output.size(); ++j)
        if (e.output[i] == e.output[j] && e.output[i] != kEllipsis)
          return invalid_argument("Einsum: output label repeated in '" + raw + "'");
  }
  if (e.inputs.size() > static_cast<size_t>(kMaxOps))
    return unsupported("Einsum: more than 8 operands");
  return e;
}

bool einsum_type(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUint32:
    case DType::kUint64: return true;
    default: return false;
  }
}

// What one contraction needs: per label its size, per operand and label its stride, the output
// labels (outermost first) and the reduced ones (odometer order, last fastest).
struct Contraction {
  int nops = 0;
  const int64_t* size = nullptr;
  const int64_t (*stride)[kMaxLabels] = nullptr;
  const int* out_labels = nullptr;
  int n_out = 0;
  const int* red_labels = nullptr;
  int n_red = 0;
  int64_t red_total = 1;
};

// Products in T and sums in double for floats (float products as before, a double's own
// precision for double); integers multiply and add modulo 2^64 and truncate to T.
template <class T>
void contract(ThreadPool& pool, const Contraction& c, const void* const* operands, T* Y,
              int64_t total) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  using Prod = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
  const T* data[kMaxOps];
  for (int o = 0; o < c.nops; ++o) data[o] = static_cast<const T*>(operands[o]);
  const int nops = c.nops;
  pool.parallel_for(total, std::max<int64_t>(1, 8192 / std::max<int64_t>(c.red_total, 1)),
                    [&](int64_t i0, int64_t i1) {
                      for (int64_t i = i0; i < i1; ++i) {
                        int64_t base[kMaxOps] = {};
                        int64_t rem = i;
                        for (int k = c.n_out; k-- > 0;) {
                          const int l = c.out_labels[k];
                          const int64_t v = rem % c.size[l];
                          rem /= c.size[l];
                          for (int o = 0; o < nops; ++o) base[o] += v * c.stride[o][l];
                        }
                        Acc acc = 0;
                        int64_t idx[kMaxLabels] = {};
                        int64_t off[kMaxOps];
                        std::copy(base, base + nops, off);
                        for (int64_t r = 0; r < c.red_total; ++r) {
                          Prod prod = 1;
                          for (int o = 0; o < nops; ++o) prod *= static_cast<Prod>(data[o][off[o]]);
                          acc += prod;
                          // Odometer step over the reduced labels, last fastest.
                          for (int k = c.n_red; k-- > 0;) {
                            const int l = c.red_labels[k];
                            for (int o = 0; o < nops; ++o) off[o] += c.stride[o][l];
                            if (++idx[k] < c.size[l]) break;
                            for (int o = 0; o < nops; ++o) off[o] -= c.stride[o][l] * c.size[l];
                            idx[k] = 0;
                          }
                        }
                        Y[i] = static_cast<T>(acc);
                      }
                    });
}

class EinsumKernel : public Kernel {
 public:
  EinsumKernel(Equation e, std::string text) : e_(std::move(e)), text_(std::move(text)) {}

  Status run(KernelContext& ctx) override {
    const int nops = static_cast<int>(e_.inputs.size());
    if (static_cast<int>(ctx.num_inputs()) != nops)
      return invalid_argument("Einsum: '" + text_ + "' names " + std::to_string(nops) +
                              " operands, got " + std::to_string(ctx.num_inputs()));
    int64_t size[kMaxLabels];
    int64_t stride[kMaxOps][kMaxLabels];
    int count[kMaxLabels];
    std::fill(size, size + kMaxLabels, -1);
    std::fill(count, count + kMaxLabels, 0);
    int ell_rank = 0;
    const void* data[kMaxOps];
    const DType dtype = ctx.input(0) ? ctx.input(0)->dtype : DType::kUndefined;
    for (int o = 0; o < nops; ++o) {
      const Tensor* t = ctx.input(o);
      if (!t) return invalid_argument("Einsum: operand " + std::to_string(o) + " is missing");
      if (!einsum_type(t->dtype))
        return unsupported_dtype("Einsum", std::to_string(o).c_str(), t->dtype);
      if (t->dtype != dtype)
        return invalid_argument("Einsum: operand " + std::to_string(o) + " is " +
                                dtype_name(t->dtype) + ", operand 0 " + dtype_name(dtype));
      const auto& term = e_.inputs[o];
      const bool has_ell = std::count(term.begin(), term.end(), kEllipsis) > 0;
      const int letters = static_cast<int>(term.size()) - (has_ell ? 1 : 0);
      if (t->shape.rank() < letters || (!has_ell && t->shape.rank() != letters))
        return invalid_argument("Einsum: operand " + std::to_string(o) + " " +
                                t->shape.to_string() + " does not fit '" + text_ + "'");
      ell_rank = std::max(ell_rank, t->shape.rank() - letters);
      data[o] = t->data;
    }
    for (int o = 0; o < nops; ++o) {
      const Tensor* t = ctx.input(o);
      std::fill(stride[o], stride[o] + kMaxLabels, 0);
      int64_t strides[kMaxRank];
      row_major_strides(t->shape, strides);
      const auto& term = e_.inputs[o];
      const int letters =
          static_cast<int>(term.size()) - (std::count(term.begin(), term.end(), kEllipsis) ? 1 : 0);
      const int er = t->shape.rank() - letters;
      int dim = 0;
      for (int l : term) {
        const int first = l == kEllipsis ? kLetters + ell_rank - er : l;
        const int n = l == kEllipsis ? er : 1;
        for (int k = 0; k < n; ++k, ++dim) {
          const int lab = first + k;
          const int64_t d = t->shape[dim];
          if (lab < kLetters) ++count[lab];
          if (d == 1 && lab >= kLetters) {  // an ellipsis dim of 1 broadcasts
            if (size[lab] < 0) size[lab] = 1;
            continue;
          }
          if (size[lab] >= 0 && size[lab] != d && !(lab >= kLetters && size[lab] == 1))
            return invalid_argument("Einsum: label '" +
                                    (lab < kLetters ? std::string(1, char_of(lab)) : "...") +
                                    "' has sizes " + std::to_string(size[lab]) + " and " +
                                    std::to_string(d) + " in '" + text_ + "'");
          size[lab] = d;
          stride[o][lab] += strides[dim];
        }
      }
    }
    // Output labels: explicit, or the ellipsis then the letters used once, in character order.
    int out_labels[kMaxLabels], n_out = 0;
    bool in_out[kMaxLabels] = {};
    auto add_out = [&](int l) {
      out_labels[n_out++] = l;
      in_out[l] = true;
    };
    if (e_.explicit_output) {
      for (int l : e_.output) {
        if (l == kEllipsis) {
          for (int k = 0; k < ell_rank; ++k) add_out(kLetters + k);
        } else {
          if (size[l] < 0)
            return invalid_argument("Einsum: output label '" + std::string(1, char_of(l)) +
                                    "' is not in any input of '" + text_ + "'");
          add_out(l);
        }
      }
    } else {
      for (int k = 0; k < ell_rank; ++k) add_out(kLetters + k);
      for (int l :
           {26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
            44, 45, 46, 47, 48, 49, 50, 51, 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
            10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})  // 'A' < 'a' in ASCII
        if (count[l] == 1) add_out(l);
    }
    if (!Shape::fits(static_cast<size_t>(n_out))) return unsupported("Einsum: output rank above 8");
    int red_labels[kMaxLabels], n_red = 0;
    for (int l = 0; l < kMaxLabels; ++l)
      if (size[l] >= 0 && !in_out[l]) red_labels[n_red++] = l;
    Shape out;
    for (int i = 0; i < n_out; ++i) out.push_back(size[out_labels[i]]);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, dtype, out));
    const int64_t total = out.numel();
    if (total == 0) return Status::ok_status();
    Contraction c;
    c.nops = nops;
    c.size = size;
    c.stride = stride;
    c.out_labels = out_labels;
    c.n_out = n_out;
    c.red_labels = red_labels;
    c.n_red = n_red;
    // The reduced labels may come from different operands, so their product is bounded by no
    // tensor: it is checked, and so is the work (a handful of small operands with distinct
    // reduced labels would otherwise overflow it or loop for ages).
    bool empty_reduction = false;
    for (int i = 0; i < n_red; ++i) empty_reduction |= size[red_labels[i]] == 0;
    int64_t work = 0;
    for (int i = 0; i < n_red && !empty_reduction; ++i) {
      if (__builtin_mul_overflow(c.red_total, size[red_labels[i]], &c.red_total))
        c.red_total = INT64_MAX;
    }
    if (empty_reduction) c.red_total = 0;
    if (__builtin_mul_overflow(total, c.red_total, &work) || work > kMaxWork)
      return resource_exhausted(
          "Einsum: '" + text_ + "' needs " + std::to_string(total) + " outputs times " +
          (c.red_total == INT64_MAX ? std::string("more than 2^63") : std::to_string(c.red_total)) +
          " reduced terms, above the limit of " + std::to_string(kMaxWork));
    switch (dtype) {
      case DType::kFloat: contract(ctx.pool(), c, data, y->as<float>(), total); break;
      case DType::kDouble: contract(ctx.pool(), c, data, y->as<double>(), total); break;
      case DType::kInt32: contract(ctx.pool(), c, data, y->as<int32_t>(), total); break;
      case DType::kInt64: contract(ctx.pool(), c, data, y->as<int64_t>(), total); break;
      case DType::kUint32: contract(ctx.pool(), c, data, y->as<uint32_t>(), total); break;
      case DType::kUint64: contract(ctx.pool(), c, data, y->as<uint64_t>(), total); break;
      default: return unsupported_dtype("Einsum", "0", dtype);
    }
    return Status::ok_status();
  }

 private:
  Equation e_;
  std::string text_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_einsum(const NodeInfo& node) {
  for (size_t i = 0; i < node.input_dtypes.size(); ++i) {
    const DType t = node.input_dtypes[i];
    if (t != DType::kUndefined && !einsum_type(t))
      return unsupported_dtype("Einsum", std::to_string(i).c_str(), t);
  }
  std::string eq;
  SOD2_ATTR(eq, node.attrs.get_string("equation", ""));
  if (eq.empty()) return invalid_argument("Einsum: needs the equation attribute");
  SOD2_ASSIGN_OR_RETURN(Equation e, parse_equation(eq));
  if (!node.input_dtypes.empty() && node.input_dtypes.size() != e.inputs.size())
    return invalid_argument("Einsum: '" + eq + "' names " + std::to_string(e.inputs.size()) +
                            " operands, the node has " + std::to_string(node.input_dtypes.size()));
  return std::unique_ptr<Kernel>(new EinsumKernel(std::move(e), eq));
}

}  // namespace sod2::rt
