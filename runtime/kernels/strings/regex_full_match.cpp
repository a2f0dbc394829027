// RegexFullMatch (opset 20): whether each string matches the pattern entirely, in RE2's syntax
// (as ONNX specifies). RE2 matches in linear time without backtracking, so a hostile pattern or
// string cannot hang a run; its memory for the compiled pattern is capped.
#include <memory>
#include <string>

#include "re2/re2.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/strings/string_kernels.h"

namespace sod2::rt {
namespace {

constexpr int64_t kMaxPatternMemory = 8 << 20;

class RegexFullMatchKernel final : public Kernel {
 public:
  explicit RegexFullMatchKernel(std::unique_ptr<re2::RE2> re) : re_(std::move(re)) {}
  bool takes_strings() const override { return true; }

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype != DType::kString)
      return invalid_argument("RegexFullMatch: input must be a string tensor");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kBool, x->shape));
    const auto* in = x->as<const std::string>();
    for (int64_t i = 0; i < x->numel(); ++i) y->as<bool>()[i] = re2::RE2::FullMatch(in[i], *re_);
    return Status::ok_status();
  }

 private:
  std::unique_ptr<re2::RE2> re_;
};

Expected<std::unique_ptr<Kernel>> make_regex_full_match(const NodeInfo& node) {
  const AttrValue* a = node.attrs.find("pattern");
  if (!a || a->kind != AttrValue::Kind::kString)
    return invalid_model("RegexFullMatch: attribute 'pattern' (a string) is missing");
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxPatternMemory);
  auto re = std::make_unique<re2::RE2>(a->s, options);
  if (!re->ok())
    return invalid_model("RegexFullMatch: pattern '" + a->s +
                         "' is not an RE2 expression: " + re->error());
  return std::unique_ptr<Kernel>(std::make_unique<RegexFullMatchKernel>(std::move(re)));
}

}  // namespace

void register_regex_full_match(KernelRegistry& r) {
  r.add("", "RegexFullMatch", 20, make_regex_full_match);
}

}  // namespace sod2::rt
