// TfIdfVectorizer (opset 9) over int32/int64 token ids: counts the n-grams of a pool in each row,
// n-grams of more than one item also with up to max_skip_count items skipped between their
// items, and weighs the counts (TF: the count, IDF: the weight where the count is positive,
// TFIDF: count * weight). String tokens are not supported: the runtime has no string tensors.
//
// The pool is pool_int64s split by ngram_counts (where each n-gram size starts: 1-grams first);
// the k-th n-gram of the pool (all sizes, in pool order) adds to output ngram_indexes[k]. As in
// ONNX's reference (and onnxruntime), weights are indexed by output index and unigrams are
// counted once, not once per skip distance.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

enum class TfIdfMode : uint8_t { kTf, kIdf, kTfIdf };

// N-gram starts one run may try (rows x tokens x skip distances): about a minute of work.
constexpr int64_t kMaxWork = int64_t{1} << 36;

// A trie of the pool's n-grams: node 0 is the root; a node's `output` is the output index of
// the n-gram ending there, or -1 when it ends none that is counted.
struct NgramTrie {
  struct Node {
    std::unordered_map<int64_t, int32_t> next;
    int64_t output = -1;
  };
  std::vector<Node> nodes{Node{}};

  int32_t child(int32_t node, int64_t token) const {
    const auto& next = nodes[static_cast<size_t>(node)].next;
    const auto it = next.find(token);
    return it == next.end() ? -1 : it->second;
  }
  void insert(const int64_t* gram, int64_t n, int64_t output) {
    int32_t node = 0;
    for (int64_t i = 0; i < n; ++i) {
      int32_t c = child(node, gram[i]);
      if (c < 0) {
        c = static_cast<int32_t>(nodes.size());
        nodes[static_cast<size_t>(node)].next.emplace(gram[i], c);
        nodes.emplace_back();
      }
      node = c;
    }
    nodes[static_cast<size_t>(node)].output = output;
  }
};

class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(NgramTrie trie, int64_t min_n, int64_t max_n, int64_t max_skip, TfIdfMode mode,
              std::vector<float> weights, int64_t out_size)
      : trie_(std::move(trie)),
        min_n_(min_n),
        max_n_(max_n),
        max_skip_(max_skip),
        mode_(mode),
        weights_(std::move(weights)),
        out_size_(out_size) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("TfIdfVectorizer: input is missing");
    if (x->dtype != DType::kInt32 && x->dtype != DType::kInt64) {
      return unsupported(std::string("TfIdfVectorizer: input type ") + dtype_name(x->dtype) +
                         " is not supported (int32 and int64 only; the runtime has no string " +
                         "tensors)");
    }
    const int rank = x->shape.rank();
    if (rank != 1 && rank != 2) {
      return invalid_argument("TfIdfVectorizer: input must be [C] or [N, C], got " +
                              x->shape.to_string());
    }
    const int64_t rows = rank == 2 ? x->shape[0] : 1, cols = x->shape[rank - 1];
    // Each row tries every start at every skip distance that fits (only the first when only
    // unigrams count): rows * cols * skips, quadratic in the row length with a large
    // max_skip_count, is bounded so that a hostile model cannot run for hours.
    const int64_t skips =
        max_n_ <= 1 ? 1 : std::min<int64_t>(max_skip_ + 1, std::max<int64_t>(cols, 1));
    int64_t work = 0;
    if (__builtin_mul_overflow(rows * cols, skips, &work) || work > kMaxWork) {
      return resource_exhausted("TfIdfVectorizer: " + x->shape.to_string() +
                                " with max_skip_count " + std::to_string(max_skip_) +
                                " needs more than " + std::to_string(kMaxWork) + " n-gram starts");
    }
    const Shape out_shape = rank == 2 ? Shape{rows, out_size_} : Shape{out_size_};
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out_shape));
    float* out = y->as<float>();
    std::fill(out, out + y->numel(), 0.0f);
    if (x->numel() == 0) return Status::ok_status();
    const bool i64 = x->dtype == DType::kInt64;
    auto token = [&](int64_t i) -> int64_t {
      return i64 ? x->as<const int64_t>()[i] : x->as<const int32_t>()[i];
    };
    ctx.pool().parallel_for(rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) count_row(r * cols, cols, token, out + r * out_size_);
    });
    // Counts to weights.
    for (int64_t r = 0; r < rows; ++r) {
      float* row = out + r * out_size_;
      for (int64_t i = 0; i < out_size_; ++i) {
        const float w = weights_.empty() ? 1.0f : weights_[static_cast<size_t>(i)];
        if (mode_ == TfIdfMode::kIdf) row[i] = row[i] > 0 ? w : 0.0f;
        if (mode_ == TfIdfMode::kTfIdf) row[i] *= w;
      }
    }
    return Status::ok_status();
  }

 private:
  template <class Token>
  void count_row(int64_t base, int64_t cols, const Token& token, float* counts) const {
    int64_t start_n = min_n_;
    for (int64_t skip = 1; skip <= max_skip_ + 1; ++skip) {
      if (start_n > 1 && skip >= cols) break;  // no n-gram of two or more items fits any more
      for (int64_t start = 0; start < cols; ++start) {
        // No n-gram of the smallest size still counted fits from here.
        if (start + skip * (start_n - 1) >= cols) break;
        int32_t node = 0;
        int64_t item = start;
        for (int64_t n = 1; n <= max_n_ && item < cols; ++n, item += skip) {
          node = trie_.child(node, token(base + item));
          if (node < 0) break;
          const int64_t o = trie_.nodes[static_cast<size_t>(node)].output;
          if (n >= start_n && o >= 0) counts[o] += 1.0f;
        }
      }
      // Unigrams do not depend on the skip distance: count them at the first only.
      if (start_n == 1) {
        start_n = 2;
        if (start_n > max_n_) break;
      }
    }
  }

  NgramTrie trie_;
  int64_t min_n_, max_n_, max_skip_;
  TfIdfMode mode_;
  std::vector<float> weights_;
  int64_t out_size_;
};

Expected<std::unique_ptr<Kernel>> tfidf_factory(const NodeInfo& node) {
  constexpr const char* kOp = "TfIdfVectorizer";
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  const DType in = node.input_dtypes.empty() ? DType::kUndefined : node.input_dtypes[0];
  if (in != DType::kUndefined && in != DType::kInt32 && in != DType::kInt64) {
    return unsupported(std::string(kOp) + ": input type " + dtype_name(in) +
                       " is not supported (int32 and int64 only; the runtime has no string " +
                       "tensors)");
  }
  if (node.attrs.has("pool_strings"))
    return unsupported(std::string(kOp) + ": pool_strings is not supported (no string tensors)");
  SOD2_ASSIGN_OR_RETURN(int64_t min_n, node.attrs.get_int("min_gram_length", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t max_n, node.attrs.get_int("max_gram_length", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t max_skip, node.attrs.get_int("max_skip_count", 0));
  std::string mode_name;
  SOD2_RETURN_IF_ERROR(get_string_attr(node, "mode", "", &mode_name));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> counts, node.attrs.get_ints("ngram_counts"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, node.attrs.get_ints("ngram_indexes"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> pool, node.attrs.get_ints("pool_int64s"));
  SOD2_ASSIGN_OR_RETURN(std::vector<float> weights, node.attrs.get_floats("weights"));
  TfIdfMode mode = TfIdfMode::kTf;
  if (mode_name == "TF") {
    mode = TfIdfMode::kTf;
  } else if (mode_name == "IDF") {
    mode = TfIdfMode::kIdf;
  } else if (mode_name == "TFIDF") {
    mode = TfIdfMode::kTfIdf;
  } else {
    return invalid_model(std::string(kOp) + ": mode must be TF, IDF or TFIDF, got '" + mode_name +
                         "'");
  }
  if (min_n < 1 || max_n < min_n || max_skip < 0 || max_skip > (int64_t{1} << 30)) {
    return invalid_model(std::string(kOp) + ": need 1 <= min_gram_length <= max_gram_length and " +
                         "max_skip_count >= 0, got " + std::to_string(min_n) + ", " +
                         std::to_string(max_n) + ", " + std::to_string(max_skip));
  }
  if (indexes.empty()) return invalid_model(std::string(kOp) + ": ngram_indexes is empty");
  for (int64_t v : indexes) {
    if (v < 0 || v >= (int64_t{1} << 31))
      return invalid_model(std::string(kOp) + ": ngram_indexes holds " + std::to_string(v));
  }
  const int64_t out_size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < out_size) {
    return invalid_model(std::string(kOp) + ": " + std::to_string(weights.size()) +
                         " weights for " + std::to_string(out_size) + " outputs");
  }
  const auto pool_size = static_cast<int64_t>(pool.size());
  NgramTrie trie;
  size_t id = 0;  // the pool's n-gram number, across sizes
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size) {
      return invalid_model(std::string(kOp) + ": ngram_counts " + std::to_string(begin) + ".." +
                           std::to_string(end) + " for " + std::to_string(n) +
                           "-grams is outside the pool of " + std::to_string(pool_size));
    }
    if ((end - begin) % n != 0) {
      return invalid_model(std::string(kOp) + ": the pool's " + std::to_string(n) + "-grams hold " +
                           std::to_string(end - begin) + " items, not a multiple of " +
                           std::to_string(n));
    }
    for (int64_t g = begin; g < end; g += n, ++id) {
      if (id >= indexes.size()) {
        return invalid_model(std::string(kOp) + ": the pool holds more n-grams than the " +
                             std::to_string(indexes.size()) + " ngram_indexes");
      }
      if (n >= min_n && n <= max_n) trie.insert(pool.data() + g, n, indexes[id]);
    }
  }
  // No n-gram is longer than the pool's longest size: bounding the lengths by one more than
  // that counts the same and keeps count_row's skip * (n - 1) from overflowing on huge values.
  const auto longest = static_cast<int64_t>(counts.size());
  min_n = std::min(min_n, longest + 1);
  max_n = std::min(max_n, longest + 1);
  return std::unique_ptr<Kernel>(std::make_unique<TfIdfKernel>(
      std::move(trie), min_n, max_n, max_skip, mode, std::move(weights), out_size));
}

}  // namespace

void register_tfidf(KernelRegistry& r) { r.add("", "TfIdfVectorizer", 9, &tfidf_factory); }

}  // namespace sod2::rt::math
