#include "core/package/manifest_builder.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "core/version.h"
#include "runtime/package/format.h"
#include "runtime/package/sha256.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2::package {
namespace {

// Attribute tensors up to this size stay in the manifest: they are copied when the kernel is
// created anyway, and a blob slot costs up to 63 bytes of padding.
constexpr size_t kInlineAttributeBytes = 256;

}  // namespace

Status ManifestBuilder::build(const rt::ProgramDesc& p, pkg::Manifest* m, bool with_constants) {
  m->set_producer(std::string("sod2 ") + SOD2_VERSION_STRING);
  for (const rt::SymbolDesc& s : p.symbols) {
    pkg::Symbol* o = m->add_symbols();
    o->set_name(s.name);
    o->set_execution(s.execution);
    o->set_lo(s.lo);
    o->set_hi(s.hi);
    o->set_multiple(s.multiple);
  }
  for (const rt::InputSignature& s : p.inputs) {
    pkg::InputSignature* o = m->add_inputs();
    o->set_name(s.name);
    o->set_dtype(static_cast<uint32_t>(s.dtype));
    o->set_rank(s.rank);
    o->set_type(static_cast<uint32_t>(s.type));
  }
  for (const rt::InputDimDesc& d : p.input_dims) {
    pkg::InputDim* o = m->add_input_dims();
    o->set_input(d.input);
    o->set_dim(d.dim);
    o->set_fixed(d.fixed);
    o->set_symbol(d.symbol);
  }
  for (size_t c = 0; with_constants && c < p.constants.size(); ++c) {
    pkg::TensorRef* ref = m->add_constants();
    if (add_narrow(p.constants[c].view(), ref)) continue;
    SOD2_RETURN_IF_ERROR(
        add_to_blob(p.constants[c].view(), ref, false, "constant " + std::to_string(c)));
  }
  for (const rt::GraphDesc& g : p.graphs) SOD2_RETURN_IF_ERROR(add_graph(g, m->add_graphs()));
  add_program(p.plan_program, m->mutable_plan_program());
  m->set_num_arena_tensors(p.num_arena_tensors);
  add_program(p.assumption_program, m->mutable_assumption_program());
  for (const rt::AssumptionDesc& a : p.assumptions) {
    pkg::Assumption* o = m->add_assumptions();
    o->set_text(a.text);
    o->set_node(a.node);
  }
  for (size_t k = 0; k < p.plan_grid.symbols.size(); ++k) {
    pkg::PlanGridSymbol* o = m->mutable_plan_grid()->add_symbols();
    o->set_symbol(p.plan_grid.symbols[k]);
    for (int64_t u : p.plan_grid.uppers[k]) o->add_upper(u);
  }
  for (int32_t v : p.version_of_cell) m->add_version_of_cell(v);
  for (const rt::ShapeProgram& v : p.plan_versions) add_program(v, m->add_plan_versions());
  if (p.execution_bounds.num_outputs() != 0)
    add_program(p.execution_bounds, m->mutable_execution_bounds());
  for (int32_t s : p.arena_known_steps) m->add_arena_known_steps(s);
  if (p.step_work.num_outputs() != 0) add_program(p.step_work, m->mutable_step_work());
  for (const rt::GpuKernelDesc& k : p.gpu_kernels) {
    pkg::GpuKernel* o = m->add_gpu_kernels();
    o->set_name(k.name);
    for (int32_t n : k.nodes) o->add_nodes(n);
    for (int32_t v : k.inputs) o->add_inputs(v);
    o->set_output(k.output);
    o->set_rank(k.rank);
    o->set_spirv(std::string(reinterpret_cast<const char*>(k.spirv.data()), k.spirv.size() * 4));
    o->set_source(k.source);
  }
  return Status::ok_status();
}

Status ManifestBuilder::add_to_blob(const rt::Tensor& t, pkg::TensorRef* o, bool allow_inline,
                                    const std::string& what) {
  const size_t elem = rt::dtype_size(t.dtype);
  if (elem == 0) {
    return unsupported(what + ": type " + rt::dtype_name(t.dtype) +
                       " has no fixed size and cannot be stored in a package");
  }
  o->set_dtype(static_cast<uint32_t>(t.dtype));
  for (int64_t d : t.shape.dims()) o->add_dims(d);
  const uint64_t bytes = t.bytes();
  o->set_length(bytes);
  if (allow_inline && bytes <= kInlineAttributeBytes) {
    o->set_is_inline(true);
    o->set_inline_data(t.data, bytes);
    return Status::ok_status();
  }
  o->set_offset(blob_.add(t));
  return Status::ok_status();
}

bool ManifestBuilder::add_narrow(const rt::Tensor& t, pkg::TensorRef* o) {
  if (weights_ == WeightStorage::kAsIs || t.dtype != rt::DType::kFloat ||
      t.shape.numel() < kNarrowMinElements) {
    return false;
  }
  const int64_t n = t.shape.numel();
  const float* values = static_cast<const float*>(t.data);
  std::vector<uint8_t> bytes;
  if (weights_ == WeightStorage::kFloat16) {
    // Rounding is fine; overflowing to infinity (a Clip bound of FLT_MAX) or losing a NaN is not.
    constexpr float kHalfMax = 65504.f;
    for (int64_t i = 0; i < n; ++i)
      if (!(std::fabs(values[i]) <= kHalfMax)) return false;
    std::vector<uint16_t> half(static_cast<size_t>(n));
    rt::narrow_from_float(rt::DType::kFloat16, values, half.data(), n);
    bytes.resize(half.size() * 2);
    std::memcpy(bytes.data(), half.data(), bytes.size());
    o->set_stored_dtype(static_cast<uint32_t>(rt::DType::kFloat16));
  } else {
    // Weights only: a bias or a normalisation's scale (rank 1) keeps its precision.
    if (t.shape.rank() < 2) return false;
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(values[i])) return false;
    // Symmetric codes in [-127, 127], one scale per output channel (slice of the first dim),
    // rounded half to even like every other narrowing here.
    const int64_t slices = t.shape[0], slice = n / slices;
    bytes.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < slices; ++k) {
      float largest = 0;
      for (int64_t i = k * slice; i < (k + 1) * slice; ++i)
        largest = std::max(largest, std::fabs(values[i]));
      const float scale = largest / 127.f;
      o->add_scales(scale);
      for (int64_t i = k * slice; i < (k + 1) * slice; ++i) {
        const float code = scale > 0 ? std::nearbyint(values[i] / scale) : 0.f;
        bytes[static_cast<size_t>(i)] =
            static_cast<uint8_t>(static_cast<int8_t>(std::clamp(code, -127.f, 127.f)));
      }
    }
    o->set_stored_dtype(static_cast<uint32_t>(rt::DType::kInt8));
  }
  o->set_dtype(static_cast<uint32_t>(rt::DType::kFloat));
  for (int64_t d : t.shape.dims()) o->add_dims(d);
  o->set_length(bytes.size());
  o->set_offset(blob_.add_owned(std::move(bytes)));
  ++narrow_constants_;
  return true;
}

Status ManifestBuilder::add_graph(const rt::GraphDesc& g, pkg::Graph* o) {
  o->set_name(g.name);
  for (const rt::ValueDesc& v : g.values) {
    pkg::Value* ov = o->add_values();
    ov->set_name(v.name);
    ov->set_dtype(static_cast<uint32_t>(v.dtype));
    ov->set_storage(static_cast<pkg::ValueStorage>(v.storage));
    ov->set_constant(v.constant);
    ov->set_arena_tensor(v.arena_tensor);
    ov->set_outer_value(v.outer_value);
    ov->set_outer_levels(v.outer_levels);
    ov->set_dims(v.dims);
    ov->set_type(static_cast<uint32_t>(v.type));
    for (const rt::ExecDim& e : v.exec_dims) {
      pkg::ExecDim* oe = ov->add_exec_dims();
      oe->set_dim(e.dim);
      oe->set_symbol(e.symbol);
    }
  }
  for (const rt::NodeDesc& n : g.nodes) SOD2_RETURN_IF_ERROR(add_node(n, o->add_nodes()));
  for (int32_t v : g.inputs) o->add_inputs(v);
  for (int32_t v : g.outputs) o->add_outputs(v);
  return Status::ok_status();
}

Status ManifestBuilder::add_node(const rt::NodeDesc& n, pkg::Node* o) {
  const rt::NodeInfo& info = n.info;
  o->set_name(info.name);
  o->set_op_type(info.op_type);
  o->set_domain(info.domain);
  o->set_opset(info.opset);
  // Attrs is a std::map: attributes come out sorted by name, so packages are reproducible.
  for (const auto& [name, a] : info.attrs.all()) {
    pkg::Attribute* oa = o->add_attributes();
    oa->set_name(name);
    oa->set_kind(static_cast<pkg::AttrKind>(a.kind));
    using K = rt::AttrValue::Kind;
    switch (a.kind) {
      case K::kInt: oa->set_i(a.i); break;
      case K::kFloat: oa->set_f(a.f); break;
      case K::kString: oa->set_s(a.s); break;
      case K::kInts:
        for (int64_t x : a.ints) oa->add_ints(x);
        break;
      case K::kFloats:
        for (float x : a.floats) oa->add_floats(x);
        break;
      case K::kStrings:
        for (const std::string& x : a.strings) oa->add_strings(x);
        break;
      case K::kTensor:
        SOD2_RETURN_IF_ERROR(add_to_blob(a.tensor.view(), oa->mutable_tensor(), true,
                                         "node '" + info.name + "' attribute '" + name + "'"));
        break;
      case K::kGraph: oa->set_graph(a.graph); break;
    }
  }
  for (int32_t v : n.inputs) o->add_inputs(v);
  for (int32_t v : n.outputs) o->add_outputs(v);
  for (int32_t g : n.subgraphs) o->add_subgraphs(g);
  for (rt::DType t : info.input_dtypes) o->add_input_dtypes(static_cast<uint32_t>(t));
  for (bool b : info.input_present) o->add_input_present(b);
  for (rt::DType t : info.output_dtypes) o->add_output_dtypes(static_cast<uint32_t>(t));
  o->set_num_outputs(info.num_outputs);
  for (const std::string& s : n.fused_nodes) o->add_fused_nodes(s);
  for (const std::string& s : n.fused_op_types) o->add_fused_op_types(s);
  return Status::ok_status();
}

void ManifestBuilder::add_program(const rt::ShapeProgram& p, pkg::ShapeProgram* o) {
  o->set_num_inputs(p.num_inputs());
  o->set_num_outputs(p.num_outputs());
  o->set_num_registers(p.scratch_size());
  for (const rt::ShapeInstruction& ins : p.instructions()) {
    pkg::Instruction* oi = o->add_code();
    oi->set_op(static_cast<uint32_t>(ins.op));
    oi->set_dst(ins.dst);
    oi->set_a(ins.a);
    oi->set_b(ins.b);
    oi->set_imm(ins.imm);
  }
}

uint64_t BlobBuilder::add(const rt::Tensor& t) {
  size_ = rt::align_up(size_, rt::kPackageAlignment);
  const uint64_t at = size_;
  entries_.push_back({at, static_cast<const uint8_t*>(t.data), t.bytes()});
  size_ += t.bytes();
  return at;
}

uint64_t BlobBuilder::add_owned(std::vector<uint8_t> bytes) {
  owned_.push_back(std::move(bytes));
  const std::vector<uint8_t>& b = owned_.back();
  size_ = rt::align_up(size_, rt::kPackageAlignment);
  const uint64_t at = size_;
  entries_.push_back({at, b.data(), b.size()});
  size_ += b.size();
  return at;
}

Expected<std::vector<uint8_t>> seal_package(const pkg::Manifest& manifest, const BlobBuilder& blob,
                                            PackageStats* stats) {
  const size_t manifest_bytes = manifest.ByteSizeLong();
  if (manifest_bytes > static_cast<size_t>(INT_MAX)) {
    return unsupported("the package manifest would be " + std::to_string(manifest_bytes) +
                       " bytes, above protobuf's 2 GiB limit");
  }
  rt::PackageHeader h;
  h.manifest_offset = rt::kPackageHeaderSize;
  h.manifest_length = manifest_bytes;
  h.blob_offset = rt::align_up(h.manifest_offset + h.manifest_length, rt::kPackageAlignment);
  h.blob_length = rt::align_up(blob.size(), rt::kPackageAlignment);
  h.trailer_offset = h.blob_offset + h.blob_length;
  h.file_size = h.trailer_offset + rt::kPackageTrailerSize;

  std::vector<uint8_t> out(h.file_size, 0);  // zero padding everywhere
  rt::encode_package_header(
      h, std::span<uint8_t, rt::kPackageHeaderSize>(out.data(), rt::kPackageHeaderSize));
  if (!manifest.SerializeToArray(out.data() + h.manifest_offset,
                                 static_cast<int>(manifest_bytes))) {
    return internal_error("the package manifest could not be serialised");
  }
  for (const BlobBuilder::Entry& e : blob.entries()) {
    if (e.size > 0) std::memcpy(out.data() + h.blob_offset + e.offset, e.data, e.size);
  }
  const rt::Sha256Digest digest =
      rt::sha256(std::span<const uint8_t>(out.data(), h.trailer_offset));
  std::memcpy(out.data() + h.trailer_offset, digest.data(), digest.size());
  std::memcpy(out.data() + h.trailer_offset + rt::kPackageDigestSize, rt::kPackageTrailerMagic, 8);
  if (stats) {
    stats->file_bytes = h.file_size;
    stats->manifest_bytes = manifest_bytes;
    stats->blob_bytes = h.blob_length;
    stats->sha256 = rt::to_hex(digest);
  }
  return out;
}

}  // namespace sod2::package
