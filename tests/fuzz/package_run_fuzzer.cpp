// libFuzzer target that loads a package and then RUNS it: whatever the manifest says (value ids,
// storage, arena offsets, shapes, attributes, plan programs, loops), a session either refuses it
// or runs it to an output or a Status: never a crash, a sanitizer report, a hang or an unbounded
// allocation. The package loader fuzzer stops at loading; most memory-unsafe packages load fine
// and go wrong only when kernels write where the plan says.
//
// Mutations are semantic (LLVMFuzzerCustomMutator): the manifest is parsed, one field that
// matters to execution is changed to a nearby or an extreme value, and the package is written
// back with a valid layout and digest, so every mutant reaches the session. Half of the
// mutations are libFuzzer's own byte-level ones, for the parsers.
//
// Built like the other fuzzers: package_run_fuzzer with SOD2_FUZZ=ON (make fuzz
// FUZZ_TARGET=package_run_fuzzer), and package_run_fuzz_replay, which ctest runs over the seeds
// and saved reproducers.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/format.h"
#include "runtime/package/package_loader.h"
#include "runtime/package/sha256.h"
#include "runtime/package/sod2_package.pb.h"

namespace {

using namespace sod2::rt;
namespace pkg = sod2::pkg;

// Small sizes keep each execution fast; the limits make a hostile package stop early.
constexpr int64_t kMaxInputElements = 1 << 14;

int64_t pick_dim(const ProgramDesc& p, const InputDimDesc& d, bool high) {
  if (d.symbol < 0) return d.fixed;
  const SymbolDesc& s = p.symbols[static_cast<size_t>(d.symbol)];
  int64_t v = s.lo;
  if (high && s.lo < s.hi) v = s.hi - s.lo > 7 ? s.lo + 7 : s.hi;
  int64_t up = 0;
  if (s.multiple > 1 && v > 0 && v % s.multiple != 0 &&
      !__builtin_add_overflow(v, s.multiple - v % s.multiple, &up))
    v = up;
  return v;
}

// Inputs the program accepts where it can: dims from the symbols' ranges, small data (indices
// and counts must stay small to mean anything).
bool make_inputs(const ProgramDesc& p, bool high, std::vector<HostTensor>& storage) {
  storage.clear();
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const InputSignature& sig = p.inputs[i];
    if (sig.rank < 0 || sig.rank > kMaxRank) return false;
    Shape shape;
    for (int d = 0; d < sig.rank; ++d) shape.push_back(1);
    for (const InputDimDesc& d : p.input_dims) {
      if (d.input != static_cast<int32_t>(i) || d.dim < 0 || d.dim >= sig.rank) continue;
      shape[d.dim] = pick_dim(p, d, high);
    }
    auto bytes = checked_tensor_bytes(sig.dtype == DType::kUndefined ? DType::kFloat : sig.dtype,
                                      shape, kMaxInputElements * 8);
    if (!bytes.ok() || shape.numel() > kMaxInputElements) return false;
    HostTensor t(sig.dtype == DType::kUndefined ? DType::kFloat : sig.dtype, shape);
    for (size_t b = 0; b < t.bytes().size(); ++b) t.bytes()[b] = static_cast<uint8_t>(b % 3 == 0);
    if (t.dtype() == DType::kFloat) {
      for (int64_t e = 0; e < shape.numel(); ++e)
        t.data<float>()[e] = static_cast<float>(e % 7) - 3.f;
    }
    storage.push_back(std::move(t));
  }
  return true;
}

void run_program(ProgramDesc program) {
  SessionOptions options;
  options.threads = 1;
  options.limits.max_bytes = 256 << 20;
  options.limits.max_loop_iterations = 10000;
  options.limits.max_run_ms = 2000;
  auto session = Session::create(std::move(program), KernelRegistry::standard(), options);
  if (!session.ok()) return;
  std::vector<HostTensor> storage;
  for (bool high : {false, true, false}) {
    if (!make_inputs((*session)->program(), high, storage)) return;
    std::vector<Tensor> views;
    for (const HostTensor& t : storage) views.push_back(t.view());
    auto out = (*session)->run(views);
    if (!out.ok()) continue;
    volatile uint8_t sink = 0;  // read every output byte: ASan sees a view outside its memory
    for (const Tensor& t : *out) {
      const auto* b = static_cast<const uint8_t*>(t.data);
      for (size_t i = 0; b && i < t.bytes(); ++i) sink = sink ^ b[i];
    }
  }
}

// A package holding `manifest` and `blob` with a valid layout and digest (FORMAT.md).
std::vector<uint8_t> write_package(const pkg::Manifest& manifest, std::span<const uint8_t> blob) {
  std::string m;
  manifest.SerializeToString(&m);
  PackageHeader h;
  h.manifest_offset = kPackageHeaderSize;
  h.manifest_length = m.size();
  h.blob_offset = align_up(h.manifest_offset + h.manifest_length, kPackageAlignment);
  h.blob_length = align_up(blob.size(), kPackageAlignment);
  h.trailer_offset = h.blob_offset + h.blob_length;
  h.file_size = h.trailer_offset + kPackageTrailerSize;
  std::vector<uint8_t> out(h.file_size, 0);
  encode_package_header(h, std::span<uint8_t, kPackageHeaderSize>(out.data(), kPackageHeaderSize));
  std::memcpy(out.data() + h.manifest_offset, m.data(), m.size());
  if (!blob.empty()) std::memcpy(out.data() + h.blob_offset, blob.data(), blob.size());
  const Sha256Digest d = sha256(std::span<const uint8_t>(out.data(), h.trailer_offset));
  std::memcpy(out.data() + h.trailer_offset, d.data(), d.size());
  std::memcpy(out.data() + h.trailer_offset + kPackageDigestSize, kPackageTrailerMagic, 8);
  return out;
}

// A value that tends to break code: near a valid one, or at an edge.
int64_t interesting(std::mt19937_64& rng, int64_t near) {
  static constexpr int64_t kEdges[] = {0,
                                       -1,
                                       1,
                                       2,
                                       63,
                                       64,
                                       65,
                                       1 << 20,
                                       INT32_MAX,
                                       INT64_MAX,
                                       INT64_MIN,
                                       6148914691236517206,
                                       int64_t{1} << 40};
  switch (rng() % 3) {
    case 0: return kEdges[rng() % std::size(kEdges)];
    // Wrapping on purpose (unsigned): the harness itself must not overflow.
    case 1: return static_cast<int64_t>(static_cast<uint64_t>(near) + rng() % 5 - 2);
    default: return static_cast<int64_t>(static_cast<uint64_t>(near) * 2 + 1);
  }
}

template <typename Repeated>
void mutate_repeated_int(Repeated* r, std::mt19937_64& rng) {
  if (r->empty()) {
    r->Add(static_cast<typename Repeated::value_type>(interesting(rng, 0)));
    return;
  }
  const int i = static_cast<int>(rng() % static_cast<uint64_t>(r->size()));
  r->Set(i, static_cast<typename Repeated::value_type>(interesting(rng, r->Get(i))));
}

// One semantic change to a field the session acts on.
void mutate_manifest(pkg::Manifest& m, std::mt19937_64& rng) {
  auto pick_graph = [&]() -> pkg::Graph* {
    if (m.graphs_size() == 0) return nullptr;
    return m.mutable_graphs(static_cast<int>(rng() % static_cast<uint64_t>(m.graphs_size())));
  };
  pkg::Graph* g = pick_graph();
  auto pick_node = [&]() -> pkg::Node* {
    if (!g || g->nodes_size() == 0) return nullptr;
    return g->mutable_nodes(static_cast<int>(rng() % static_cast<uint64_t>(g->nodes_size())));
  };
  auto pick_value = [&]() -> pkg::Value* {
    if (!g || g->values_size() == 0) return nullptr;
    return g->mutable_values(static_cast<int>(rng() % static_cast<uint64_t>(g->values_size())));
  };
  auto pick_program = [&]() -> pkg::ShapeProgram* {
    if (m.plan_versions_size() > 0 && rng() % 3 == 0)
      return m.mutable_plan_versions(
          static_cast<int>(rng() % static_cast<uint64_t>(m.plan_versions_size())));
    return rng() % 4 == 0 ? m.mutable_assumption_program() : m.mutable_plan_program();
  };
  switch (rng() % 12) {
    case 0:
      if (pkg::Node* n = pick_node()) mutate_repeated_int(n->mutable_inputs(), rng);
      break;
    case 1:
      if (pkg::Node* n = pick_node()) mutate_repeated_int(n->mutable_outputs(), rng);
      break;
    case 2:
      if (pkg::Value* v = pick_value())
        v->set_arena_tensor(static_cast<int32_t>(interesting(rng, v->arena_tensor())));
      break;
    case 3:
      if (pkg::Value* v = pick_value()) v->set_storage(static_cast<pkg::ValueStorage>(rng() % 5));
      break;
    case 4: {
      pkg::ShapeProgram* sp = pick_program();
      if (sp->code_size() == 0) break;
      pkg::Instruction* ins =
          sp->mutable_code(static_cast<int>(rng() % static_cast<uint64_t>(sp->code_size())));
      if (rng() % 2) {
        ins->set_imm(interesting(rng, ins->imm()));
      } else {
        ins->set_op(static_cast<uint32_t>(rng() % 24));
      }
      break;
    }
    case 5: {
      if (pkg::Node* n = pick_node()) {
        if (n->attributes_size() == 0) break;
        pkg::Attribute* a = n->mutable_attributes(
            static_cast<int>(rng() % static_cast<uint64_t>(n->attributes_size())));
        if (a->ints_size() > 0 && rng() % 2) {
          mutate_repeated_int(a->mutable_ints(), rng);
        } else {
          a->set_i(interesting(rng, a->i()));
        }
      }
      break;
    }
    case 6:
      if (m.symbols_size() > 0) {
        pkg::Symbol* s =
            m.mutable_symbols(static_cast<int>(rng() % static_cast<uint64_t>(m.symbols_size())));
        if (rng() % 2) {
          s->set_hi(interesting(rng, s->hi()));
        } else {
          s->set_lo(interesting(rng, s->lo()));
        }
      }
      break;
    case 7:
      if (m.constants_size() > 0) {
        pkg::TensorRef* t = m.mutable_constants(
            static_cast<int>(rng() % static_cast<uint64_t>(m.constants_size())));
        mutate_repeated_int(t->mutable_dims(), rng);
      }
      break;
    case 8:
      if (pkg::Value* v = pick_value()) {
        if (v->exec_dims_size() == 0 || rng() % 2) {
          pkg::ExecDim* e = v->add_exec_dims();
          e->set_dim(static_cast<int32_t>(rng() % 3));
          e->set_symbol(
              static_cast<int32_t>(rng() % static_cast<uint64_t>(std::max(1, m.symbols_size()))));
        } else {
          v->mutable_exec_dims(0)->set_symbol(
              static_cast<int32_t>(interesting(rng, v->exec_dims(0).symbol())));
        }
      }
      break;
    case 9:
      if (g) mutate_repeated_int(rng() % 2 ? g->mutable_outputs() : g->mutable_inputs(), rng);
      break;
    case 10:
      if (pkg::Node* n = pick_node()) {
        // Another op on the same values: kernels meet inputs they were not planned for.
        static const char* kOps[] = {"Concat",  "Gather", "ScatterND", "Resize", "Range",
                                     "Reshape", "Expand", "Tile",      "Slice",  "NonZero",
                                     "TopK",    "Pad",    "Add",       "MatMul", "Conv"};
        n->set_op_type(kOps[rng() % std::size(kOps)]);
      }
      break;
    default:
      m.set_num_arena_tensors(static_cast<uint64_t>(
          interesting(rng, static_cast<int64_t>(m.num_arena_tensors())) & 0xffff));
      break;
  }
}

}  // namespace

// libFuzzer's own mutator; weak, so the replay binary (which never mutates) links without it.
extern "C" __attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t* data, size_t size,
                                                         size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  PackageLoadOptions unchecked;
  unchecked.verify_checksum = false;
  auto sections = read_package_sections(std::span<const uint8_t>(data, size), nullptr, unchecked);
  if (!sections.ok()) return LLVMFuzzerMutate(data, size, max_size);
  pkg::Manifest manifest = *sections->manifest;
  const int changes = 1 + static_cast<int>(rng() % 3);
  for (int c = 0; c < changes; ++c) mutate_manifest(manifest, rng);
  const std::vector<uint8_t> out = write_package(manifest, sections->blob);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  PackageLoadOptions unchecked;
  unchecked.verify_checksum = false;
  auto program = load_package(std::span<const uint8_t>(data, size), nullptr, unchecked);
  if (program.ok()) run_program(std::move(*program));
  return 0;
}
