// StringNormalizer (ai.onnx, opset 10): removes stopwords from a [C] or [1, C] string tensor and
// changes case. Case mapping and case-insensitive matching are ASCII-only: bytes of other UTF-8
// characters pass unchanged (the `locale` attribute is accepted and not consulted).
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/strings/string_kernels.h"

namespace sod2::rt {
namespace {

enum class CaseChange { kNone, kLower, kUpper };

std::string ascii_case(const std::string& s, CaseChange c) {
  std::string r = s;
  for (char& ch : r) {
    if (c == CaseChange::kLower && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
    if (c == CaseChange::kUpper && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 32);
  }
  return r;
}

class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(CaseChange change, bool case_sensitive,
                         const std::vector<std::string>& stopwords)
      : change_(change), case_sensitive_(case_sensitive) {
    for (const std::string& w : stopwords)
      stop_.insert(case_sensitive ? w : ascii_case(w, CaseChange::kLower));
  }
  bool takes_strings() const override { return true; }

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype != DType::kString)
      return invalid_argument("StringNormalizer: input must be a string tensor");
    const int rank = x->shape.rank();
    if (!(rank == 1 || (rank == 2 && x->shape[0] == 1)))
      return invalid_argument("StringNormalizer: input must be [C] or [1, C], got " +
                              x->shape.to_string());
    const auto* in = x->as<const std::string>();
    std::vector<const std::string*> kept;
    for (int64_t i = 0; i < x->numel(); ++i) {
      const std::string& s = in[i];
      if (!stop_.empty() &&
          stop_.count(case_sensitive_ ? s : ascii_case(s, CaseChange::kLower)) != 0)
        continue;
      kept.push_back(&s);
    }
    // Everything removed: one empty string, so the output is never empty.
    const int64_t c = std::max<int64_t>(static_cast<int64_t>(kept.size()), 1);
    const Shape shape = rank == 1 ? Shape{c} : Shape{1, c};
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kString, shape));
    auto* out = y->as<std::string>();
    if (kept.empty()) out[0].clear();
    for (size_t i = 0; i < kept.size(); ++i) out[i] = ascii_case(*kept[i], change_);
    return Status::ok_status();
  }

 private:
  CaseChange change_;
  bool case_sensitive_;
  std::unordered_set<std::string> stop_;
};

Expected<std::unique_ptr<Kernel>> make_string_normalizer(const NodeInfo& node) {
  CaseChange change = CaseChange::kNone;
  if (const AttrValue* a = node.attrs.find("case_change_action")) {
    if (a->kind != AttrValue::Kind::kString)
      return invalid_model("StringNormalizer: case_change_action must be a string");
    if (a->s == "LOWER")
      change = CaseChange::kLower;
    else if (a->s == "UPPER")
      change = CaseChange::kUpper;
    else if (a->s != "NONE")
      return invalid_model("StringNormalizer: case_change_action '" + a->s +
                           "' is not LOWER, UPPER or NONE");
  }
  SOD2_ASSIGN_OR_RETURN(const int64_t sensitive, node.attrs.get_int("is_case_sensitive", 0));
  std::vector<std::string> stopwords;
  if (const AttrValue* a = node.attrs.find("stopwords")) {
    if (a->kind != AttrValue::Kind::kStrings)
      return invalid_model("StringNormalizer: stopwords must be strings");
    stopwords = a->strings;
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<StringNormalizerKernel>(change, sensitive != 0, stopwords));
}

}  // namespace

void register_string_normalizer(KernelRegistry& r) {
  r.add("", "StringNormalizer", 10, make_string_normalizer);
}

}  // namespace sod2::rt
