// runtime/include/sod2/runtime.h over the loader and rt::Session: converts between the public
// types and the runtime's, so apps never see core or runtime headers.
#include <utility>

#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/package_loader.h"
#ifdef SOD2_HAVE_VULKAN
#include "runtime/vulkan/vulkan_backend.h"
#endif
#include "sod2/runtime.h"

namespace sod2::api {
namespace {

static_assert(static_cast<int>(StatusCode::kResourceExhausted) ==
                  static_cast<int>(sod2::StatusCode::kResourceExhausted),
              "the public status codes mirror core/status's");
// The public header cannot include the runtime's, so ElementType mirrors rt::DType (the project's
// one element-type enum) value for value; the API converts by cast.
static_assert(static_cast<int>(ElementType::kFloat32) == static_cast<int>(rt::DType::kFloat) &&
                  static_cast<int>(ElementType::kInt64) == static_cast<int>(rt::DType::kInt64) &&
                  static_cast<int>(ElementType::kBool) == static_cast<int>(rt::DType::kBool) &&
                  static_cast<int>(ElementType::kFloat64) == static_cast<int>(rt::DType::kDouble) &&
                  static_cast<int>(ElementType::kUint64) == static_cast<int>(rt::DType::kUint64) &&
                  static_cast<int>(ElementType::kBFloat16) ==
                      static_cast<int>(rt::DType::kBFloat16) &&
                  static_cast<int>(ElementType::kFloat8E4M3FN) ==
                      static_cast<int>(rt::DType::kFloat8E4M3FN) &&
                  static_cast<int>(ElementType::kFloat8E5M2FNUZ) ==
                      static_cast<int>(rt::DType::kFloat8E5M2FNUZ),
              "the public element types mirror rt::DType");

Status from(const sod2::Status& s) {
  return s.ok() ? Status() : Status(static_cast<StatusCode>(s.code()), s.message());
}

}  // namespace

size_t element_size(ElementType t) { return rt::dtype_size(static_cast<rt::DType>(t)); }

size_t TensorView::size_bytes() const {
  size_t n = element_size(type);
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

struct Package::Impl {
  rt::ProgramDesc program;
  std::vector<IoInfo> inputs, outputs;
};

Package::Package(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Package::~Package() = default;

const std::vector<IoInfo>& Package::inputs() const { return impl_->inputs; }
const std::vector<IoInfo>& Package::outputs() const { return impl_->outputs; }

Status Package::load(const std::string& path, std::shared_ptr<const Package>* out) {
  auto program = rt::load_package_file(path);
  if (!program.ok()) return from(program.status());
  auto impl = std::make_unique<Impl>();
  impl->program = std::move(*program);
  // TensorView carries tensors only: a package exchanging sequences or optionals runs through
  // rt::Session (and sod2 run --test-data), not this API.
  for (const rt::InputSignature& s : impl->program.inputs)
    if (s.type != rt::ValueType::kTensor)
      return Status(StatusCode::kUnsupported, path + ": input '" + s.name + "' is a " +
                                                  rt::value_type_name(s.type) +
                                                  "; this API exchanges tensors only");
  for (const rt::InputSignature& s : impl->program.inputs)
    impl->inputs.push_back({s.name, static_cast<ElementType>(s.dtype), s.rank});
  const rt::GraphDesc& main = impl->program.graphs[0];
  for (int32_t v : main.outputs) {
    const rt::ValueDesc& d = main.values[static_cast<size_t>(v)];
    if (d.type != rt::ValueType::kTensor)
      return Status(StatusCode::kUnsupported, path + ": output '" + d.name + "' is a " +
                                                  rt::value_type_name(d.type) +
                                                  "; this API exchanges tensors only");
    impl->outputs.push_back({d.name, static_cast<ElementType>(d.dtype), -1});
  }
  *out = std::shared_ptr<const Package>(new Package(std::move(impl)));
  return Status();
}

struct Session::Impl {
  std::shared_ptr<const Package> package;  // owns the mapping the constants point into
  std::unique_ptr<rt::Session> session;
  std::vector<rt::Tensor> inputs;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Status Session::create(std::shared_ptr<const Package> package, int threads,
                       std::unique_ptr<Session>* out) {
  SessionConfig config;
  config.threads = threads;
  return create(std::move(package), config, out);
}

Status Session::create(std::shared_ptr<const Package> package, const SessionConfig& config,
                       std::unique_ptr<Session>* out) {
  if (!package) return Status(StatusCode::kInvalidArgument, "no package given");
  if (config.threads < 0) return Status(StatusCode::kInvalidArgument, "threads must be >= 0");
  rt::SessionOptions options;
  options.threads = config.threads;
  options.limits.max_bytes = config.max_run_bytes;
  options.limits.max_loop_iterations = config.max_loop_iterations;
  options.limits.max_run_ms = config.max_run_ms;
  if (config.backend == Backend::kVulkan) {
#ifdef SOD2_HAVE_VULKAN
    rt::vk::VulkanOptions vk;
    vk.device = config.vulkan_device;
    auto context = rt::vk::VulkanContext::create(vk);
    if (!context.ok()) return from(context.status());
    auto backend = rt::vk::VulkanBackend::create(*context);
    if (!backend.ok()) return from(backend.status());
    options.backend = *backend;
#else
    return Status(StatusCode::kUnsupported,
                  "this build of the runtime has no Vulkan backend (the runtime-only cross builds "
                  "leave it out)");
#endif
  }
  // The program is copied (graphs, attributes); constants stay views into the one mapping.
  auto s = rt::Session::create(package->impl_->program, rt::KernelRegistry::standard(), options);
  if (!s.ok()) return from(s.status());
  auto impl = std::make_unique<Impl>();
  impl->package = std::move(package);
  impl->session = std::move(*s);
  *out = std::unique_ptr<Session>(new Session(std::move(impl)));
  return Status();
}

Status Session::run(std::span<const TensorView> inputs, std::vector<TensorView>* outputs,
                    const std::atomic<bool>* cancel) {
  std::vector<rt::Tensor>& ins = impl_->inputs;
  ins.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView& v = inputs[i];
    if (!rt::Shape::fits(v.shape.size())) {
      return Status(StatusCode::kInvalidArgument,
                    "input " + std::to_string(i) + " has rank " + std::to_string(v.shape.size()) +
                        ", above the maximum " + std::to_string(rt::kMaxRank));
    }
    for (int64_t d : v.shape) {
      if (d < 0) {
        return Status(StatusCode::kInvalidArgument,
                      "input " + std::to_string(i) + " has a negative dim");
      }
    }
    ins[i].dtype = static_cast<rt::DType>(v.type);
    ins[i].shape = rt::Shape(std::span<const int64_t>(v.shape));
    ins[i].data = const_cast<void*>(v.data);  // kernels only read inputs
  }
  auto result = impl_->session->run(ins, cancel);
  if (!result.ok()) return from(result.status());
  outputs->resize(result->size());
  for (size_t i = 0; i < result->size(); ++i) {
    const rt::Tensor& t = (*result)[i];
    if (!t.is_tensor()) {
      return Status(StatusCode::kUnsupported,
                    "output " + std::to_string(i) + " is " +
                        (t.none ? "an optional holding no value" : "a sequence") +
                        "; this API exchanges tensors only");
    }
    TensorView& o = (*outputs)[i];
    o.type = static_cast<ElementType>(t.dtype);
    o.shape.assign(t.shape.dims().begin(), t.shape.dims().end());
    o.data = t.data;
  }
  return Status();
}

void Session::trim() { impl_->session->trim(); }

}  // namespace sod2::api
