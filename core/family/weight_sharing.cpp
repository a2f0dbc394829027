#include "core/family/weight_sharing.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "runtime/family/weight_view.h"

namespace sod2::family {
namespace {

using rt::ResidualCode;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// The code that turns the product `p` into `t`, by bits (so -0 and +0 differ).
ResidualCode code_for(float p, float t) {
  if (bits(p) == bits(t)) return ResidualCode::kExact;
  if (bits(std::nextafter(p, INFINITY)) == bits(t)) return ResidualCode::kUp;
  if (bits(std::nextafter(p, -INFINITY)) == bits(t)) return ResidualCode::kDown;
  return ResidualCode::kEscape;
}

bool same_bytes(const rt::Tensor& a, const rt::Tensor& b) {
  return a.dtype == b.dtype && a.shape == b.shape &&
         (a.bytes() == 0 || std::memcmp(a.data, b.data, a.bytes()) == 0);
}

uint64_t hash_bytes(const rt::Tensor& t) {
  // FNV-1a over the dtype, the dims and the bytes: only narrows the exact comparison.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  const auto dt = static_cast<uint32_t>(t.dtype);
  mix(&dt, sizeof dt);
  for (int64_t d : t.shape.dims()) mix(&d, sizeof d);
  mix(t.data, t.bytes());
  return h;
}

// Every window of `base` with t's dims that is leading or centred in each dim.
std::vector<std::vector<int64_t>> candidate_windows(const rt::Shape& base, const rt::Shape& t) {
  std::vector<std::vector<int64_t>> out{{}};
  for (int d = 0; d < t.rank(); ++d) {
    std::vector<int64_t> starts{0};
    const int64_t slack = base[d] - t[d];
    if (slack > 0 && slack % 2 == 0) starts.push_back(slack / 2);
    std::vector<std::vector<int64_t>> next;
    for (const auto& prefix : out) {
      for (int64_t s : starts) {
        next.push_back(prefix);
        next.back().push_back(s);
      }
    }
    out = std::move(next);
  }
  return out;
}

rt::WeightView plain_view(const rt::Shape& dims, const std::vector<int64_t>& offsets) {
  rt::WeightView v;
  v.dims = dims;
  for (size_t d = 0; d < offsets.size(); ++d) v.offsets[d] = offsets[d];
  return v;
}

// A scaled view of `window` (the base's window, materialised) that reproduces `t`, with the
// scale per index of `axis`; empty scales if no scale fits well enough.
// What a scaled view stores besides its base: float32 scales, residual bytes, float32 escapes.
uint64_t view_bytes(const std::vector<float>& scales, const std::vector<uint8_t>& residual,
                    const std::vector<uint32_t>& escapes) {
  return scales.size() * 4 + residual.size() + escapes.size() * 4;
}

struct ScaledFit {
  std::vector<float> scales;
  std::vector<uint8_t> residual;
  std::vector<uint32_t> escapes;
  uint64_t cost() const { return view_bytes(scales, residual, escapes); }
};

ScaledFit fit_scales(const float* window, const float* t, const rt::Shape& dims, int axis,
                     uint64_t max_cost) {
  int64_t strides[rt::kMaxRank];
  rt::row_major_strides(dims, strides);
  const int64_t n = dims.numel();
  const int64_t rows = dims[axis];
  const int64_t stride = strides[axis];
  auto row_of = [&](int64_t i) { return (i / stride) % rows; };
  // The first guess per row: the ratio at the element of largest magnitude in the base.
  std::vector<int64_t> pivot(static_cast<size_t>(rows), -1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t& p = pivot[static_cast<size_t>(row_of(i))];
    if (window[i] != 0.0f && (p < 0 || std::fabs(window[i]) > std::fabs(window[p]))) p = i;
  }
  ScaledFit fit;
  fit.scales.resize(static_cast<size_t>(rows), 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t p = pivot[static_cast<size_t>(r)];
    if (p >= 0) {
      const double s = static_cast<double>(t[p]) / static_cast<double>(window[p]);
      if (!std::isfinite(s)) return {};
      fit.scales[static_cast<size_t>(r)] = static_cast<float>(s);
    }
  }
  // Neighbouring floats of the guess may reproduce more elements exactly: score five per row.
  // tries[r * kTries + k]: the guess moved by kStep[k] float steps.
  constexpr int kTries = 5;
  constexpr int kStep[kTries] = {0, 1, -1, 2, -2};
  std::vector<float> tries(static_cast<size_t>(rows * kTries));
  for (int64_t r = 0; r < rows; ++r) {
    for (int k = 0; k < kTries; ++k) {
      float s = fit.scales[static_cast<size_t>(r)];
      for (int step = kStep[k]; step > 0; --step) s = std::nextafter(s, INFINITY);
      for (int step = kStep[k]; step < 0; ++step) s = std::nextafter(s, -INFINITY);
      tries[static_cast<size_t>(r * kTries + k)] = s;
    }
  }
  std::vector<int64_t> score(tries.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row_of(i);
    for (int k = 0; k < kTries; ++k) {
      const auto at = static_cast<size_t>(r * kTries + k);
      const ResidualCode c = code_for(window[i] * tries[at], t[i]);
      score[at] += c == ResidualCode::kExact ? 0 : (c == ResidualCode::kEscape ? 64 : 1);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const auto first = score.begin() + r * kTries;
    const auto best = std::min_element(first, first + kTries) - score.begin();
    fit.scales[static_cast<size_t>(r)] = tries[static_cast<size_t>(best)];
  }
  fit.residual.assign(static_cast<size_t>((n + 3) / 4), 0);
  bool any_code = false;
  for (int64_t i = 0; i < n; ++i) {
    const float p = window[i] * fit.scales[static_cast<size_t>(row_of(i))];
    const ResidualCode c = code_for(p, t[i]);
    if (c == ResidualCode::kEscape) {
      fit.escapes.push_back(bits(t[i]));
      if (fit.cost() > max_cost) return {};
    }
    if (c != ResidualCode::kExact) {
      rt::set_residual_code(fit.residual, i, c);
      any_code = true;
    }
  }
  if (!any_code) fit.residual.clear();
  if (fit.cost() > max_cost) return {};
  return fit;
}

// Up to 32 elements of the first slice along `axis` (all of it for a plain window), as indices
// into the window and into the base: enough to reject nearly every wrong base before building it.
struct Probe {
  std::vector<int64_t> window_index, base_index;
};
Probe probe(const rt::Shape& dims, const rt::Shape& base, const std::vector<int64_t>& offsets,
            int axis) {
  int64_t ws[rt::kMaxRank], bs[rt::kMaxRank];
  rt::row_major_strides(dims, ws);
  rt::row_major_strides(base, bs);
  Probe p;
  // The slice at index 0 along `axis` (the whole window when axis < 0), sampled evenly.
  const int64_t slice = axis < 0 ? dims.numel() : (dims[axis] == 0 ? 0 : dims.numel() / dims[axis]);
  const int64_t step = std::max<int64_t>(1, slice / 32);
  for (int64_t j = 0; j < slice; j += step) {
    int64_t rem = j, w = 0, b = 0;
    for (int d = dims.rank() - 1; d >= 0; --d) {
      if (d == axis) {
        b += offsets[static_cast<size_t>(d)] * bs[d];
        continue;
      }
      const int64_t k = rem % dims[d];
      rem /= dims[d];
      w += k * ws[d];
      b += (k + offsets[static_cast<size_t>(d)]) * bs[d];
    }
    p.window_index.push_back(w);
    p.base_index.push_back(b);
  }
  return p;
}

// Whether the probed elements are equal (axis < 0) or in one ratio to about float precision.
bool probe_matches(const Probe& p, const rt::Tensor& base, const rt::Tensor& t, int axis) {
  const size_t elem = rt::dtype_size(t.dtype);
  const auto* bb = static_cast<const uint8_t*>(base.data);
  const auto* tb = static_cast<const uint8_t*>(t.data);
  if (axis < 0) {
    for (size_t k = 0; k < p.window_index.size(); ++k) {
      if (std::memcmp(bb + p.base_index[k] * elem, tb + p.window_index[k] * elem, elem) != 0)
        return false;
    }
    return true;
  }
  const float* bf = base.as<const float>();
  const float* tf = t.as<const float>();
  double ratio = 0;
  for (size_t k = 0; k < p.window_index.size(); ++k) {
    const float x = bf[p.base_index[k]], y = tf[p.window_index[k]];
    if (x == 0.0f || y == 0.0f) {
      if (x != y) return false;
      continue;
    }
    const double r = static_cast<double>(y) / x;
    if (ratio == 0) ratio = r;
    if (std::fabs(r - ratio) > 1e-5 * std::fabs(ratio)) return false;
  }
  return true;
}

class Planner {
 public:
  explicit Planner(const WeightSharingOptions& options) : options_(options) {}

  Expected<uint32_t> add(const rt::Tensor& t) {
    ++plan_.stats.constants;
    plan_.stats.constant_bytes += t.bytes();
    const uint64_t h = hash_bytes(t);
    auto [lo, hi] = by_hash_.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      if (same_bytes(plan_.weights[it->second].tensor, t)) {
        ++plan_.stats.identical;
        return it->second;
      }
    }
    const auto index = static_cast<uint32_t>(plan_.weights.size());
    SharedWeight w;
    w.tensor = t;
    if (t.numel() >= options_.min_view_elements) SOD2_RETURN_IF_ERROR(find_view(t, &w));
    if (w.stored) {
      ++plan_.stats.stored;
      plan_.stats.stored_bytes += t.bytes();
      stored_.push_back(index);
    } else {
      ++(w.scale_axis < 0 ? plan_.stats.windows : plan_.stats.scaled);
      plan_.stats.view_bytes += view_bytes(w.scales, w.residual, w.escapes);
      plan_.stats.escapes += w.escapes.size();
    }
    plan_.weights.push_back(std::move(w));
    by_hash_.emplace(h, index);
    return index;
  }

  WeightSharingPlan take() { return std::move(plan_); }

 private:
  // Fills `w` as a view if one is found; leaves it stored otherwise.
  Status find_view(const rt::Tensor& t, SharedWeight* w) {
    const rt::Shape& dims = t.shape;
    const size_t elem = rt::dtype_size(t.dtype);
    if (elem == 0) return Status::ok_status();
    std::vector<uint8_t> window(t.bytes());
    uint64_t best_cost =
        static_cast<uint64_t>(options_.max_view_cost * static_cast<double>(t.bytes()));
    bool found = false;
    for (uint32_t b : stored_) {
      const rt::Tensor& base = plan_.weights[b].tensor;
      if (base.dtype != t.dtype || base.shape.rank() != dims.rank()) continue;
      bool fits = true;
      for (int d = 0; d < dims.rank(); ++d) fits = fits && dims[d] <= base.shape[d];
      if (!fits) continue;
      for (const std::vector<int64_t>& offsets : candidate_windows(base.shape, dims)) {
        const rt::WeightView plain = plain_view(dims, offsets);
        bool built = false;
        if (probe_matches(probe(dims, base.shape, offsets, -1), base, t, -1)) {
          rt::materialize_weight_view(plain, base, window.data());
          built = true;
          if (std::memcmp(window.data(), t.data, t.bytes()) == 0) {
            SOD2_RETURN_IF_ERROR(accept(t, b, offsets, -1, {}, w));
            return Status::ok_status();
          }
        }
        if (t.dtype != rt::DType::kFloat || dims.rank() < 2) continue;
        // The output channel: dim 0 (Conv, Gemm with transB) or the last dim of a matrix
        // (MatMul's [K, N]).
        for (int axis : {0, dims.rank() == 2 ? 1 : -1}) {
          if (axis < 0 || !probe_matches(probe(dims, base.shape, offsets, axis), base, t, axis))
            continue;
          if (!built) rt::materialize_weight_view(plain, base, window.data());
          built = true;
          ScaledFit fit = fit_scales(reinterpret_cast<const float*>(window.data()),
                                     t.as<const float>(), dims, axis, best_cost);
          if (fit.scales.empty() || (found && fit.cost() >= best_cost)) continue;
          SharedWeight candidate;
          candidate.tensor = t;
          if (!accept(t, b, offsets, axis, std::move(fit), &candidate).ok()) continue;
          best_cost = view_bytes(candidate.scales, candidate.residual, candidate.escapes);
          *w = std::move(candidate);
          found = true;
        }
      }
    }
    return Status::ok_status();
  }

  // Decodes the view with the runtime's decoder and keeps it only if every bit matches.
  Status accept(const rt::Tensor& t, uint32_t base, const std::vector<int64_t>& offsets, int axis,
                ScaledFit fit, SharedWeight* w) {
    rt::WeightView v = plain_view(t.shape, offsets);
    v.scale_axis = axis;
    v.scales = fit.scales;
    v.residual = fit.residual;
    v.escapes = fit.escapes;
    const rt::Tensor& b = plan_.weights[base].tensor;
    SOD2_RETURN_IF_ERROR(rt::check_weight_view(v, b, "weight view"));
    std::vector<uint8_t> decoded(t.bytes());
    rt::materialize_weight_view(v, b, decoded.data());
    if (std::memcmp(decoded.data(), t.data, t.bytes()) != 0) {
      return internal_error("a weight view does not decode to the tensor it stands for");
    }
    w->stored = false;
    w->base = base;
    w->offsets = offsets;
    w->scale_axis = axis;
    w->scales = std::move(fit.scales);
    w->residual = std::move(fit.residual);
    w->escapes = std::move(fit.escapes);
    return Status::ok_status();
  }

  WeightSharingOptions options_;
  WeightSharingPlan plan_;
  std::vector<uint32_t> stored_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
};

uint64_t constant_bytes(const rt::ProgramDesc& p) {
  uint64_t b = 0;
  for (const rt::ConstantTensor& c : p.constants) b += c.view().bytes();
  return b;
}

}  // namespace

Expected<WeightSharingPlan> plan_weight_sharing(const std::vector<const rt::ProgramDesc*>& programs,
                                                const WeightSharingOptions& options) {
  // Every constant of every program, largest first, so that a base is always seen before the
  // windows of it, whichever variant either belongs to; ties go to the program with more
  // constant bytes (the supernet-like one), then to the order given.
  std::vector<uint64_t> program_bytes;
  for (const rt::ProgramDesc* p : programs) program_bytes.push_back(constant_bytes(*p));
  std::vector<size_t> order(programs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return program_bytes[a] > program_bytes[b]; });
  std::vector<std::pair<size_t, size_t>> all;  // (program, constant)
  for (size_t p : order)
    for (size_t c = 0; c < programs[p]->constants.size(); ++c) all.emplace_back(p, c);
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    return programs[a.first]->constants[a.second].view().bytes() >
           programs[b.first]->constants[b.second].view().bytes();
  });
  Planner planner(options);
  std::vector<std::vector<uint32_t>> constant_weights(programs.size());
  for (size_t p = 0; p < programs.size(); ++p)
    constant_weights[p].resize(programs[p]->constants.size());
  for (const auto& [p, c] : all) {
    SOD2_ASSIGN_OR_RETURN(const uint32_t w, planner.add(programs[p]->constants[c].view()));
    constant_weights[p][c] = w;
  }
  WeightSharingPlan plan = planner.take();
  plan.constant_weights = std::move(constant_weights);
  return plan;
}

}  // namespace sod2::family
