// The loader on a hand-built package: a faithful round trip (every field, constants as aligned
// views into the file's bytes), then a table of corruptions, each rejected with its own error:
// truncation anywhere, flipped bytes in every section, and hostile manifests re-sealed with a
// valid SHA-256 so they reach the checks behind the checksum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/package/package_writer.h"
#include "runtime/package/format.h"
#include "runtime/package/package_loader.h"
#include "runtime/package/sha256.h"
#include "runtime/package/sod2_package.pb.h"
#include "runtime/tensor/narrow_float.h"
#include "tiny_program.h"

namespace sod2::rt {
namespace {

std::vector<uint8_t> tiny_bytes() {
  auto bytes = package::serialize_package(testing::tiny_program());
  EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

Expected<ProgramDesc> load(const std::vector<uint8_t>& bytes) {
  return load_package(std::span<const uint8_t>(bytes), nullptr);
}

PackageHeader header_of(const std::vector<uint8_t>& bytes) {
  return decode_package_header(std::span<const uint8_t, kPackageHeaderSize>(bytes.data(), 64));
}

// Rebuilds a package around `manifest_bytes` and the blob of `bytes`, with a correct layout and
// digest: what a hostile writer would produce.
std::vector<uint8_t> seal(const std::vector<uint8_t>& bytes, const std::string& manifest_bytes) {
  const PackageHeader old = header_of(bytes);
  PackageHeader h;
  h.manifest_offset = kPackageHeaderSize;
  h.manifest_length = manifest_bytes.size();
  h.blob_offset = align_up(h.manifest_offset + h.manifest_length, kPackageAlignment);
  h.blob_length = old.blob_length;
  h.trailer_offset = h.blob_offset + h.blob_length;
  h.file_size = h.trailer_offset + kPackageTrailerSize;
  std::vector<uint8_t> out(h.file_size, 0);
  encode_package_header(h, std::span<uint8_t, kPackageHeaderSize>(out.data(), 64));
  std::memcpy(out.data() + 64, manifest_bytes.data(), manifest_bytes.size());
  std::memcpy(out.data() + h.blob_offset, bytes.data() + old.blob_offset, old.blob_length);
  const Sha256Digest d = sha256(std::span<const uint8_t>(out.data(), h.trailer_offset));
  std::memcpy(out.data() + h.trailer_offset, d.data(), 32);
  std::memcpy(out.data() + h.trailer_offset + 32, kPackageTrailerMagic, 8);
  return out;
}

// Re-seals after editing the header or raw bytes in place: only the digest changes.
void redigest(std::vector<uint8_t>* bytes) {
  const size_t end = bytes->size() - kPackageTrailerSize;
  const Sha256Digest d = sha256(std::span<const uint8_t>(bytes->data(), end));
  std::memcpy(bytes->data() + end, d.data(), 32);
}

// The manifest a package's header points at (a failed parse fails the test).
pkg::Manifest manifest_of(const std::vector<uint8_t>& bytes) {
  const PackageHeader h = header_of(bytes);
  pkg::Manifest m;
  EXPECT_TRUE(
      m.ParseFromArray(bytes.data() + h.manifest_offset, static_cast<int>(h.manifest_length)));
  return m;
}

std::vector<uint8_t> with_manifest(const std::function<void(pkg::Manifest&)>& edit) {
  const std::vector<uint8_t> bytes = tiny_bytes();
  pkg::Manifest m = manifest_of(bytes);
  edit(m);
  return seal(bytes, m.SerializeAsString());
}

TEST(PackageLoader, RoundTripIsExact) {
  const std::vector<uint8_t> bytes = tiny_bytes();
  auto p = load(bytes);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  // Writing the loaded program again gives the same bytes: nothing was lost or reordered.
  auto again = package::serialize_package(*p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, bytes);
}

TEST(PackageLoader, ConstantsAreAlignedViewsIntoTheBytes) {
  std::vector<uint8_t> storage(tiny_bytes().size() + 64);
  const std::vector<uint8_t> bytes = tiny_bytes();
  uint8_t* base = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  std::memcpy(base, bytes.data(), bytes.size());
  auto p = load_package(std::span<const uint8_t>(base, bytes.size()), nullptr);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->constants.size(), 3u);
  for (const ConstantTensor& c : p->constants) {
    EXPECT_TRUE(c.is_borrowed());
    const auto* at = static_cast<const uint8_t*>(c.view().data);
    EXPECT_GE(at, base);
    EXPECT_LT(at, base + bytes.size());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(at) % 64, 0u);
  }
  const Tensor w = p->constants[0].view();
  EXPECT_EQ(w.shape, Shape{4});
  EXPECT_EQ(w.as<float>()[3], 4.0f);
  EXPECT_EQ(p->constants[2].view().as<int64_t>()[5], 50);
}

TEST(PackageLoader, UnalignedBufferIsCopiedToAlignedMemory) {
  const std::vector<uint8_t> bytes = tiny_bytes();
  std::vector<uint8_t> storage(bytes.size() + 65);
  uint8_t* base = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 + 1;
  std::memcpy(base, bytes.data(), bytes.size());
  auto p = load_package(std::span<const uint8_t>(base, bytes.size()), nullptr);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p->constants[0].view().data) % 64, 0u);
  EXPECT_NE(p->constant_storage, nullptr);  // the aligned copy
}

TEST(PackageLoader, RestoresEveryField) {
  auto p = load(tiny_bytes());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_TRUE(p->symbols[1].execution);
  EXPECT_EQ(p->symbols[0].hi, 64);
  ASSERT_EQ(p->input_dims.size(), 2u);
  EXPECT_EQ(p->input_dims[0].fixed, 1);
  EXPECT_EQ(p->input_dims[1].symbol, 0);
  ASSERT_EQ(p->graphs.size(), 3u);
  const NodeDesc& add = p->graphs[0].nodes[0];
  EXPECT_EQ(add.inputs, (std::vector<int32_t>{0, 1, -1}));
  EXPECT_EQ(add.info.input_present, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(*add.info.attrs.get_int("an_int", 0), -7);
  EXPECT_EQ(*add.info.attrs.get_float("a_float", 0), 0.25f);
  EXPECT_EQ(*add.info.attrs.get_string("a_string", ""), std::string("with\0nul", 8));
  EXPECT_EQ(*add.info.attrs.get_ints("ints"), (std::vector<int64_t>{1, -2, INT64_MAX}));
  EXPECT_EQ(add.info.attrs.find("strings")->strings, (std::vector<std::string>{"a", "", "ccc"}));
  const HostTensor* big = *add.info.attrs.get_tensor("big_tensor");
  EXPECT_EQ(big->shape(), (Shape{16, 16}));
  EXPECT_EQ(big->data<float>()[255], 127.5f);
  EXPECT_EQ((*add.info.attrs.get_tensor("small_tensor"))->data<int32_t>()[2], 1);
  const NodeDesc& iff = p->graphs[0].nodes[1];
  EXPECT_EQ(iff.subgraphs, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(iff.info.attrs.find("else_branch")->graph, 2);
  EXPECT_EQ(p->graphs[1].values[0].storage, ValueStorage::kOuterScope);
  EXPECT_EQ(p->graphs[1].values[0].outer_value, 2);
  EXPECT_EQ(p->graphs[0].values[2].exec_dims.size(), 1u);
  EXPECT_EQ(p->graphs[0].values[2].dims, "[1,NonZero_0.out0.d1]");
  EXPECT_EQ(p->plan_program.num_outputs(), 5u);
  std::vector<int64_t> out(5), scratch(p->plan_program.scratch_size());
  ASSERT_TRUE(p->plan_program.run(std::vector<int64_t>{3, 0}, out, scratch).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{12, 12, 0, 12, 24}));
  EXPECT_EQ(p->assumptions[0].text, "N == N");
  EXPECT_EQ(p->plan_grid.symbols, (std::vector<int32_t>{0}));
  EXPECT_EQ(p->plan_grid.uppers, (std::vector<std::vector<int64_t>>{{8, 64}}));
  EXPECT_EQ(p->version_of_cell, (std::vector<int32_t>{-1, 0}));
  ASSERT_EQ(p->plan_versions.size(), 1u);
  ASSERT_TRUE(p->plan_versions[0].run(std::vector<int64_t>{3, 0}, out, scratch).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{12, 12, 12, 0, 24}));
  EXPECT_EQ(p->plan_grid.cell_of({3, 0}), 0u);
  EXPECT_EQ(p->plan_grid.cell_of({9, 0}), 1u);
  EXPECT_EQ(p->plan_grid.cell_of({1000, 0}), 1u);  // past the last bucket: the last cell
  ASSERT_EQ(p->execution_bounds.num_outputs(), 2u);
  std::vector<int64_t> bounds(2), bounds_scratch(p->execution_bounds.scratch_size());
  ASSERT_TRUE(p->execution_bounds.run(std::vector<int64_t>{9, 0}, bounds, bounds_scratch).ok());
  EXPECT_EQ(bounds, (std::vector<int64_t>{64, 9}));
  EXPECT_EQ(p->arena_known_steps, (std::vector<int32_t>{0, 0}));
  ASSERT_EQ(p->step_work.num_outputs(), 2u);
  std::vector<int64_t> work(2), work_scratch(p->step_work.scratch_size());
  ASSERT_TRUE(p->step_work.run(std::vector<int64_t>{9, 0}, work, work_scratch).ok());
  EXPECT_EQ(work, (std::vector<int64_t>{9, -1}));
}

TEST(PackageLoader, LoadsAFileThroughMmap) {
  const auto path = std::filesystem::temp_directory_path() / "sod2_loader_test.sod2";
  ASSERT_TRUE(package::write_package(testing::tiny_program(), path.string()).ok());
  EXPECT_TRUE(is_package_file(path.string()));
  auto p = load_package_file(path.string());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_NE(p->constant_storage, nullptr);
  EXPECT_EQ(p->constants[0].view().as<float>()[0], 1.0f);
  std::filesystem::remove(path);
  auto missing = load_package_file(path.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(PackageLoader, EveryTruncationIsAnError) {
  const std::vector<uint8_t> bytes = tiny_bytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut));
    auto p = load(part);
    ASSERT_FALSE(p.ok()) << "cut at " << cut;
    const std::string& msg = p.status().message();
    if (cut < 8) {
      EXPECT_NE(msg.find("shorter than the magic"), std::string::npos) << cut << ": " << msg;
    } else {
      EXPECT_NE(msg.find("truncated"), std::string::npos) << cut << ": " << msg;
    }
  }
}

// Any single flipped byte is caught: by the header checks, the end marker or the digest.
TEST(PackageLoader, EveryFlippedByteIsAnError) {
  const std::vector<uint8_t> bytes = tiny_bytes();
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::vector<uint8_t> bad = bytes;
    bad[at] ^= 0x5a;
    ASSERT_FALSE(load(bad).ok()) << "flip at " << at;
  }
}

struct Flip {
  const char* name;
  // Where, from the header: a function of the layout.
  std::function<size_t(const PackageHeader&)> at;
  const char* error;
};

class FlippedByte : public ::testing::TestWithParam<Flip> {};

TEST_P(FlippedByte, GivesItsError) {
  std::vector<uint8_t> bytes = tiny_bytes();
  const size_t at = GetParam().at(header_of(bytes));
  ASSERT_LT(at, bytes.size());
  bytes[at] ^= 0xff;
  auto p = load(bytes);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(GetParam().error), std::string::npos) << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Sections, FlippedByte,
    ::testing::Values(
        Flip{"magic", [](const PackageHeader&) { return size_t{0}; }, "not a SoD2 package"},
        Flip{"version", [](const PackageHeader&) { return size_t{8}; }, "is newer than"},
        Flip{"header_size", [](const PackageHeader&) { return size_t{12}; }, "header size"},
        Flip{"file_size", [](const PackageHeader&) { return size_t{23}; }, "truncated"},
        Flip{"manifest_offset", [](const PackageHeader&) { return size_t{24}; }, "manifest offset"},
        Flip{"manifest_length_high", [](const PackageHeader&) { return size_t{39}; },
             "manifest length"},
        Flip{"blob_offset", [](const PackageHeader&) { return size_t{40}; }, "aligned"},
        Flip{"blob_length", [](const PackageHeader&) { return size_t{48}; }, "weight blob"},
        Flip{"trailer_offset", [](const PackageHeader&) { return size_t{56}; }, "trailer offset"},
        Flip{"manifest",
             [](const PackageHeader& h) {
               return size_t(h.manifest_offset + h.manifest_length / 2);
             },
             "SHA-256 mismatch"},
        Flip{"blob", [](const PackageHeader& h) { return size_t(h.blob_offset + 5); },
             "SHA-256 mismatch"},
        Flip{"digest", [](const PackageHeader& h) { return size_t(h.trailer_offset + 3); },
             "SHA-256 mismatch"},
        Flip{"end_marker", [](const PackageHeader& h) { return size_t(h.trailer_offset + 33); },
             "end marker"}),
    [](const ::testing::TestParamInfo<Flip>& info) { return std::string(info.param.name); });

TEST(PackageLoader, AppendedBytesAreAnError) {
  std::vector<uint8_t> bytes = tiny_bytes();
  bytes.push_back(0);
  auto p = load(bytes);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("appended"), std::string::npos) << p.status().message();
}

TEST(PackageLoader, NewerFormatIsUnsupported) {
  std::vector<uint8_t> bytes = tiny_bytes();
  bytes[8] = 2;
  redigest(&bytes);
  auto p = load(bytes);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnsupported);
}

TEST(PackageLoader, ChecksumCanBeSkippedButNothingElse) {
  std::vector<uint8_t> bytes = tiny_bytes();
  const PackageHeader h = header_of(bytes);
  bytes[h.blob_offset + 1] ^= 1;  // a weight changes: only the digest can tell
  EXPECT_FALSE(load(bytes).ok());
  PackageLoadOptions options;
  options.verify_checksum = false;
  EXPECT_TRUE(load_package(std::span<const uint8_t>(bytes), nullptr, options).ok());
  bytes[0] ^= 1;
  EXPECT_FALSE(load_package(std::span<const uint8_t>(bytes), nullptr, options).ok());
}

struct Hostile {
  const char* name;
  std::function<void(pkg::Manifest&)> edit;
  const char* error;
};

class HostileManifest : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileManifest, GivesItsError) {
  auto p = load(with_manifest(GetParam().edit));
  ASSERT_FALSE(p.ok()) << "accepted";
  EXPECT_EQ(p.status().code(), StatusCode::kParseError);
  EXPECT_NE(p.status().message().find(GetParam().error), std::string::npos) << p.status().message();
}

pkg::Node& add_node(pkg::Manifest& m) { return *m.mutable_graphs(0)->mutable_nodes(0); }

// A well-formed generated shader over the main graph's first node, for the edits to break.
pkg::GpuKernel& add_gpu_kernel(pkg::Manifest& m) {
  pkg::GpuKernel* k = m.add_gpu_kernels();
  const pkg::Node& n = m.graphs(0).nodes(0);
  k->set_name("ew0");
  k->add_nodes(0);
  k->add_inputs(n.inputs(0));
  k->set_output(n.outputs(0));
  k->set_rank(2);
  const uint32_t words[5] = {0x07230203u, 0x00010300u, 0, 1, 0};
  k->set_spirv(std::string(reinterpret_cast<const char*>(words), sizeof words));
  return *k;
}
pkg::Node& if_node(pkg::Manifest& m) { return *m.mutable_graphs(0)->mutable_nodes(1); }
pkg::Attribute& attribute(pkg::Node& n, const std::string& name) {
  for (pkg::Attribute& a : *n.mutable_attributes())
    if (a.name() == name) return a;
  return *n.mutable_attributes(0);
}

INSTANTIATE_TEST_SUITE_P(
    Table, HostileManifest,
    ::testing::Values(
        Hostile{"constant_offset_past_blob",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_offset(1 << 20); },
                "outside the weight blob"},
        Hostile{"constant_offset_huge",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_offset(UINT64_MAX - 63); },
                "outside the weight blob"},
        Hostile{"constant_offset_unaligned",
                [](pkg::Manifest& m) { m.mutable_constants(1)->set_offset(3); },
                "not 64-byte aligned"},
        Hostile{"constant_length_wrong",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_length(12); },
                "stores 12 bytes but float32 with these dims needs 16"},
        Hostile{"constant_dims_overflow",
                [](pkg::Manifest& m) {
                  m.mutable_constants(0)->clear_dims();
                  for (int i = 0; i < 4; ++i) m.mutable_constants(0)->add_dims(1 << 20);
                },
                "overflow"},
        Hostile{"constant_negative_dim",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_dims(0, -4); },
                "dim 0 is negative"},
        Hostile{"constant_inline",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_is_inline(true); },
                "must be stored in the weight blob"},
        Hostile{"constant_bad_dtype",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_dtype(99); },
                "constant 0: unknown dtype 99"},
        Hostile{"constant_string_dtype",
                [](pkg::Manifest& m) { m.mutable_constants(0)->set_dtype(8); },
                "has no fixed size"},
        Hostile{"value_bad_dtype",
                [](pkg::Manifest& m) { m.mutable_graphs(0)->mutable_values(2)->set_dtype(14); },
                "value 2 ('y'): unknown dtype 14"},
        Hostile{"constant_rank_9",
                [](pkg::Manifest& m) {
                  for (int i = 0; i < 8; ++i) m.mutable_constants(0)->add_dims(1);
                },
                "rank 9 is above the maximum 8"},
        Hostile{"input_rank_9", [](pkg::Manifest& m) { m.mutable_inputs(0)->set_rank(9); },
                "rank 9 is outside 0..8"},
        Hostile{"input_dim_past_rank",
                [](pkg::Manifest& m) { m.mutable_input_dims(1)->set_dim(2); },
                "dim 2 out of range for rank 2"},
        Hostile{"input_dim_bad_symbol",
                [](pkg::Manifest& m) { m.mutable_input_dims(1)->set_symbol(5); },
                "needs a symbol"},
        Hostile{"symbol_bad_range",
                [](pkg::Manifest& m) { m.mutable_symbols(0)->set_lo(100); },
                "bad range 100:64:1"},
        Hostile{"node_input_out_of_range",
                [](pkg::Manifest& m) { add_node(m).set_inputs(0, 99); },
                "node 0 ('add'): input 0 is value 99, but the graph has 6 values"},
        Hostile{"node_output_negative",
                [](pkg::Manifest& m) { add_node(m).set_outputs(0, -5); },
                "output 0 is value -5"},
        Hostile{"node_counts_disagree",
                [](pkg::Manifest& m) { add_node(m).add_input_dtypes(1); },
                "the counts must agree"},
        Hostile{"node_presence_wrong",
                [](pkg::Manifest& m) { add_node(m).set_input_present(2, true); },
                "is marked present but is value -1"},
        Hostile{"graph_output_out_of_range",
                [](pkg::Manifest& m) { m.mutable_graphs(1)->set_outputs(0, 7); },
                "output 0 is value 7, but the graph has 2 values"},
        Hostile{"value_constant_out_of_range",
                [](pkg::Manifest& m) { m.mutable_graphs(0)->mutable_values(1)->set_constant(3); },
                "constant 3 out of range (3 constants)"},
        Hostile{"value_arena_out_of_range",
                [](pkg::Manifest& m) { m.mutable_graphs(0)->mutable_values(2)->set_arena_tensor(2); },
                "arena tensor 2 out of range"},
        Hostile{"value_arena_in_body",
                [](pkg::Manifest& m) {
                  m.mutable_graphs(1)->mutable_values(1)->set_storage(pkg::ARENA);
                },
                "only main-graph values can live in the arena"},
        Hostile{"value_bad_storage",
                [](pkg::Manifest& m) {
                  m.mutable_graphs(0)->mutable_values(0)->set_storage(
                      static_cast<pkg::ValueStorage>(17));
                },
                "unknown storage kind 17"},
        Hostile{"outer_value_out_of_range",
                [](pkg::Manifest& m) { m.mutable_graphs(1)->mutable_values(0)->set_outer_value(6); },
                "outer value 6 out of range"},
        Hostile{"outer_levels_too_deep",
                [](pkg::Manifest& m) { m.mutable_graphs(1)->mutable_values(0)->set_outer_levels(2); },
                "refers 2 graphs up, but the graph is nested 1 deep"},
        Hostile{"exec_dim_bad_symbol",
                [](pkg::Manifest& m) {
                  m.mutable_graphs(0)->mutable_values(2)->mutable_exec_dims(0)->set_symbol(2);
                },
                "execution dim 1 / symbol 2 out of range"},
        Hostile{"known_steps_count",
                [](pkg::Manifest& m) { m.add_arena_known_steps(0); },
                "arena_known_steps has 3 entries for 2 arena tensors"},
        Hostile{"known_step_negative",
                [](pkg::Manifest& m) { m.set_arena_known_steps(1, -1); },
                "arena_known_steps[1] is negative"},
        Hostile{"step_work_outputs",
                [](pkg::Manifest& m) { m.mutable_step_work()->set_num_outputs(1); },
                "step work: 1 outputs, expected 2"},
        Hostile{"execution_bounds_outputs",
                [](pkg::Manifest& m) { m.mutable_execution_bounds()->set_num_outputs(1); },
                "execution bounds: 1 outputs, expected 2"},
        Hostile{"dims_text_too_long",
                [](pkg::Manifest& m) {
                  m.mutable_graphs(0)->mutable_values(2)->set_dims(std::string(5000, 'x'));
                },
                "dims text of 5000 bytes (at most 4096)"},
        Hostile{"fused_nodes_without_op_types",
                [](pkg::Manifest& m) { m.mutable_graphs(0)->mutable_nodes(0)->add_fused_nodes("/a"); },
                "1 fused node names and 0 op types"},
        Hostile{"fused_node_name_too_long",
                [](pkg::Manifest& m) {
                  pkg::Node* n = m.mutable_graphs(0)->mutable_nodes(0);
                  n->add_fused_nodes(std::string(5000, 'n'));
                  n->add_fused_op_types("Conv");
                },
                "fused node name 0 is longer than 4096 bytes"},
        Hostile{"subgraph_out_of_range", [](pkg::Manifest& m) { if_node(m).set_subgraphs(1, 3); },
                "subgraph 3 out of range (3 graphs)"},
        Hostile{"subgraph_cycle",
                [](pkg::Manifest& m) {
                  // The then-branch's node uses the then-branch itself.
                  m.mutable_graphs(1)->mutable_nodes(0)->add_subgraphs(1);
                },
                "subgraph reference cycle"},
        Hostile{"subgraph_is_main",
                [](pkg::Manifest& m) { m.mutable_graphs(1)->mutable_nodes(0)->add_subgraphs(0); },
                "subgraph reference cycle"},
        Hostile{"subgraph_shared",
                [](pkg::Manifest& m) { if_node(m).set_subgraphs(1, 1); },
                "is the subgraph of 2 node references"},
        Hostile{"if_without_condition",
                [](pkg::Manifest& m) {
                  if_node(m).clear_inputs();
                  if_node(m).clear_input_dtypes();
                  if_node(m).clear_input_present();
                },
                "If needs a condition input and two subgraphs"},
        Hostile{"graph_unused",
                [](pkg::Manifest& m) { if_node(m).mutable_subgraphs()->RemoveLast(); },
                "graph 2 ('else') is not the subgraph of any node"},
        Hostile{"attr_bad_kind",
                [](pkg::Manifest& m) {
                  attribute(add_node(m), "an_int").set_kind(static_cast<pkg::AttrKind>(42));
                },
                "unknown attribute kind 42"},
        Hostile{"attr_duplicate",
                [](pkg::Manifest& m) { *add_node(m).add_attributes() = add_node(m).attributes(0); },
                "appears twice"},
        Hostile{"attr_graph_not_a_subgraph",
                [](pkg::Manifest& m) { attribute(if_node(m), "then_branch").set_graph(5); },
                "graph 5 is not one of the node's subgraphs"},
        Hostile{"attr_tensor_bad_inline_size",
                [](pkg::Manifest& m) {
                  attribute(add_node(m), "small_tensor").mutable_tensor()->set_inline_data("xy");
                },
                "inline data is 2 bytes, expected 12"},
        Hostile{"attr_tensor_outside_blob",
                [](pkg::Manifest& m) {
                  attribute(add_node(m), "big_tensor").mutable_tensor()->set_offset(1 << 16);
                },
                "lie outside the weight blob"},
        Hostile{"plan_bad_opcode",
                [](pkg::Manifest& m) { m.mutable_plan_program()->mutable_code(1)->set_op(99); },
                "plan program: instruction 1 has unknown opcode 99"},
        Hostile{"plan_opcode_wraps_to_valid",
                [](pkg::Manifest& m) { m.mutable_plan_program()->mutable_code(1)->set_op(256 + 4); },
                "unknown opcode 260"},
        Hostile{"plan_reads_unwritten_register",
                [](pkg::Manifest& m) { m.mutable_plan_program()->mutable_code(1)->set_a(2); },
                "reads register a before writing it"},
        Hostile{"plan_too_many_registers",
                [](pkg::Manifest& m) { m.mutable_plan_program()->set_num_registers(1u << 31); },
                "registers but only 4 instructions write one"},
        Hostile{"plan_wrong_output_count",
                [](pkg::Manifest& m) { m.set_num_arena_tensors(3); },
                "plan program: 5 outputs, expected 7"},
        Hostile{"plan_wrong_input_count",
                [](pkg::Manifest& m) { m.mutable_plan_program()->set_num_inputs(1); },
                "1 inputs, but the package has 2 symbols"},
        Hostile{"assumption_output_count",
                [](pkg::Manifest& m) { m.add_assumptions()->set_text("extra"); },
                "assumption program: 2 outputs, expected 4"},
        Hostile{"plan_grid_symbol_out_of_range",
                [](pkg::Manifest& m) {
                  m.mutable_plan_grid()->mutable_symbols(0)->set_symbol(9);
                },
                "plan grid symbol 0: symbol 9 out of range"},
        Hostile{"plan_grid_descending",
                [](pkg::Manifest& m) {
                  m.mutable_plan_grid()->mutable_symbols(0)->set_upper(0, 100);
                },
                "bucket bounds are not ascending"},
        Hostile{"plan_grid_no_buckets",
                [](pkg::Manifest& m) { m.mutable_plan_grid()->mutable_symbols(0)->clear_upper(); },
                "0 buckets"},
        Hostile{"plan_grid_too_many_cells",
                [](pkg::Manifest& m) {
                  for (int k = 0; k < 13; ++k) {
                    auto* s = m.mutable_plan_grid()->add_symbols();
                    s->add_upper(1);
                    s->add_upper(2);
                  }
                },
                "buckets (the grid may have 1..4096 cells)"},
        Hostile{"plan_cells_missing", [](pkg::Manifest& m) { m.mutable_version_of_cell()->RemoveLast(); },
                "the plan grid has 2 cells but 1 cell entries"},
        Hostile{"plan_cell_names_no_version",
                [](pkg::Manifest& m) { m.set_version_of_cell(1, 5); },
                "plan grid cell 1 names version 5 of 1"},
        Hostile{"plan_version_output_count",
                [](pkg::Manifest& m) { m.mutable_plan_versions(0)->set_num_outputs(3); },
                "plan version 0: 3 outputs, expected 5"},
        Hostile{"main_inputs_disagree",
                [](pkg::Manifest& m) { m.mutable_graphs(0)->add_inputs(1); },
                "the main graph has 2 inputs but the package declares 1"},
        Hostile{"no_graphs", [](pkg::Manifest& m) { m.clear_graphs(); }, "has no graph"},
        Hostile{"gpu_kernel_unnamed", [](pkg::Manifest& m) { add_gpu_kernel(m).set_name(""); },
                "GPU kernel 0 has no usable name"},
        Hostile{"gpu_kernel_node_out_of_range",
                [](pkg::Manifest& m) { add_gpu_kernel(m).set_nodes(0, 99); },
                "names node 99, not the next of a run"},
        Hostile{"gpu_kernel_nodes_not_a_run",
                [](pkg::Manifest& m) { add_gpu_kernel(m).add_nodes(0); },
                "names node 0, not the next of a run"},
        Hostile{"gpu_kernel_no_nodes",
                [](pkg::Manifest& m) { add_gpu_kernel(m).clear_nodes(); }, "replaces no node"},
        Hostile{"gpu_kernel_rank_too_high",
                [](pkg::Manifest& m) { add_gpu_kernel(m).set_rank(7); },
                "more than its push constants hold"},
        Hostile{"gpu_kernel_too_many_inputs",
                [](pkg::Manifest& m) {
                  pkg::GpuKernel& k = add_gpu_kernel(m);
                  for (int i = 0; i < 4; ++i) k.add_inputs(k.inputs(0));
                },
                "more than its push constants hold"},
        Hostile{"gpu_kernel_reads_no_value",
                [](pkg::Manifest& m) { add_gpu_kernel(m).set_inputs(0, 12345); },
                "reads value 12345, which does not exist"},
        Hostile{"gpu_kernel_writes_no_value",
                [](pkg::Manifest& m) { add_gpu_kernel(m).set_output(-3); },
                "writes a value that does not exist"},
        Hostile{"gpu_kernel_not_spirv",
                [](pkg::Manifest& m) { add_gpu_kernel(m).set_spirv(std::string(20, 'x')); },
                "is not SPIR-V (bad magic number)"},
        Hostile{"gpu_kernel_spirv_cut",
                [](pkg::Manifest& m) { add_gpu_kernel(m).mutable_spirv()->resize(21); },
                "holds 21 bytes, not a SPIR-V module"}),
    [](const ::testing::TestParamInfo<Hostile>& info) { return std::string(info.param.name); });

TEST(PackageLoader, GeneratedShadersRoundTrip) {
  auto p = load(with_manifest([](pkg::Manifest& m) { add_gpu_kernel(m).set_source("// glsl"); }));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->gpu_kernels.size(), 1u);
  const GpuKernelDesc& k = p->gpu_kernels[0];
  EXPECT_EQ(k.name, "ew0");
  EXPECT_EQ(k.nodes, std::vector<int32_t>{0});
  EXPECT_EQ(k.rank, 2);
  ASSERT_EQ(k.spirv.size(), 5u);
  EXPECT_EQ(k.spirv[0], 0x07230203u);
  EXPECT_EQ(k.source, "// glsl");
  // And back: the writer stores what the loader read.
  auto again = package::serialize_package(*p);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  auto q = load(*again);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  ASSERT_EQ(q->gpu_kernels.size(), 1u);
  EXPECT_EQ(q->gpu_kernels[0].spirv, k.spirv);
  EXPECT_EQ(q->gpu_kernels[0].inputs, k.inputs);
  EXPECT_EQ(q->gpu_kernels[0].output, k.output);
}

TEST(PackageLoader, GarbageManifestIsAParseError) {
  const std::vector<uint8_t> bytes = seal(tiny_bytes(), std::string("\xff\xff\xff\xff\x0f", 5));
  auto p = load(bytes);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not a valid protobuf message"), std::string::npos)
      << p.status().message();
}

TEST(PackageLoader, DeepNestingIsRefused) {
  auto p = load(with_manifest([](pkg::Manifest& m) {
    // A chain of 70 graphs, each the body of a node of the previous one.
    for (int g = 3; g < 73; ++g) {
      pkg::Graph* graph = m.add_graphs();
      graph->set_name("level");
      pkg::Graph* parent = g == 3 ? m.mutable_graphs(2) : m.mutable_graphs(g - 1);
      pkg::Node* n = parent->add_nodes();
      n->set_op_type("Wrap");
      n->add_subgraphs(g);
    }
  }));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("nested 65 levels deep"), std::string::npos)
      << p.status().message();
}

// SOD2_WRITE_FUZZ_SEED=DIR writes this package as DIR/tiny_all_features.sod2, the seed of
// tests/fuzz/seeds/package_load that covers every attribute kind and outer-scope values.
// A program with three float32 constants: 128 values float16 holds in range, 128 values one of
// which (FLT_MAX, a Clip bound say) it does not, and 8 values (too few to bother).
ProgramDesc program_with_weights() {
  ProgramDesc p = testing::tiny_program();
  HostTensor fits(DType::kFloat, Shape{2, 64}), huge(DType::kFloat, Shape{128}),
      small(DType::kFloat, Shape{8});
  for (int i = 0; i < 128; ++i) {
    fits.data<float>()[i] = 0.001f * static_cast<float>(i * i) - 3.3f;
    huge.data<float>()[i] = static_cast<float>(i);
  }
  huge.data<float>()[5] = 3.4028235e38f;
  for (int i = 0; i < 8; ++i) small.data<float>()[i] = 0.1f * static_cast<float>(i);
  p.constants.push_back(std::move(fits));
  p.constants.push_back(std::move(huge));
  p.constants.push_back(std::move(small));
  return p;
}

TEST(PackageLoader, HalfWidthWeightsAreWidenedAtLoad) {
  const ProgramDesc p = program_with_weights();
  package::PackageStats full_stats, half_stats;
  auto full = package::serialize_package(p, &full_stats);
  auto half =
      package::serialize_package(p, &half_stats, {.weights = package::WeightStorage::kFloat16});
  ASSERT_TRUE(full.ok() && half.ok());
  EXPECT_EQ(half_stats.narrow_constants, 1u);  // only the one that fits and is large
  EXPECT_LT(half->size(), full->size());
  auto loaded = load_package(std::span<const uint8_t>(*half), nullptr);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const size_t n = p.constants.size();
  ASSERT_EQ(loaded->constants.size(), n);
  // Widened: each value is the float16 nearest to the original, now owned by the program.
  const Tensor fits = loaded->constants[n - 3].view();
  ASSERT_EQ(fits.dtype, DType::kFloat);
  ASSERT_EQ(fits.shape, (Shape{2, 64}));
  EXPECT_FALSE(loaded->constants[n - 3].is_borrowed());
  const float* original = p.constants[n - 3].view().as<float>();
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(fits.as<float>()[i], half_to_float(double_to_half(original[i]))) << i;
  // The others are exact, as views into the file.
  for (size_t c : {n - 2, n - 1}) {
    const Tensor t = loaded->constants[c].view();
    EXPECT_TRUE(loaded->constants[c].is_borrowed());
    EXPECT_EQ(std::memcmp(t.data, p.constants[c].view().data, t.bytes()), 0) << c;
  }
}

TEST(PackageLoader, HalfWidthStorageOnlyForFloat32Constants) {
  const ProgramDesc p = program_with_weights();
  auto half = package::serialize_package(p, nullptr, {.weights = package::WeightStorage::kFloat16});
  ASSERT_TRUE(half.ok());
  const pkg::Manifest m = manifest_of(*half);
  const int fits = m.constants_size() - 3;
  ASSERT_EQ(m.constants(fits).stored_dtype(), static_cast<uint32_t>(DType::kFloat16));
  auto expect_error = [&](pkg::Manifest edited, const std::string& says) {
    auto loaded =
        load_package(std::span<const uint8_t>(seal(*half, edited.SerializeAsString())), nullptr);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.status().message().find(says), std::string::npos) << loaded.status().message();
  };
  {  // An int32 constant "stored as float16".
    pkg::Manifest e = m;
    e.mutable_constants(fits)->set_dtype(static_cast<uint32_t>(DType::kInt32));
    expect_error(e, "only float32 constants may be stored, as float16 or int8");
  }
  {  // A length that is not numel * 2.
    pkg::Manifest e = m;
    e.mutable_constants(fits)->set_length(128 * 4);
    expect_error(e, "stores 512 bytes");
  }
  {  // Half-width storage somewhere only whole-width bytes are read: an attribute tensor.
    pkg::Manifest e = m;
    bool marked = false;
    for (int g = 0; g < e.graphs_size() && !marked; ++g)
      for (int k = 0; k < e.graphs(g).nodes_size() && !marked; ++k)
        for (int a = 0; a < e.graphs(g).nodes(k).attributes_size() && !marked; ++a)
          if (e.graphs(g).nodes(k).attributes(a).has_tensor()) {
            e.mutable_graphs(g)
                ->mutable_nodes(k)
                ->mutable_attributes(a)
                ->mutable_tensor()
                ->set_stored_dtype(static_cast<uint32_t>(DType::kFloat16));
            marked = true;
          }
    ASSERT_TRUE(marked);
    expect_error(e, "which only program constants may be");
  }
}

TEST(PackageLoader, Int8WeightsAreCodesTimesAScalePerOutputChannel) {
  const ProgramDesc p = program_with_weights();
  package::PackageStats stats;
  auto bytes = package::serialize_package(p, &stats, {.weights = package::WeightStorage::kInt8});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(stats.narrow_constants, 1u);  // the [2,64] weight; rank-1 and small ones stay
  auto loaded = load_package(std::span<const uint8_t>(*bytes), nullptr);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const size_t n = p.constants.size();
  const float* original = p.constants[n - 3].view().as<float>();
  const float* widened = loaded->constants[n - 3].view().as<float>();
  for (int row = 0; row < 2; ++row) {
    float largest = 0;
    for (int i = 0; i < 64; ++i) largest = std::max(largest, std::fabs(original[row * 64 + i]));
    const float scale = largest / 127.f;
    for (int i = 0; i < 64; ++i) {
      const float w = widened[row * 64 + i];
      EXPECT_LE(std::fabs(w - original[row * 64 + i]), scale / 2 + 1e-6f) << row << "," << i;
      EXPECT_FLOAT_EQ(w / scale, std::nearbyint(w / scale));  // a whole code
    }
  }

  // Hostile scales: a count that does not match the first dim, a negative or a NaN scale.
  const pkg::Manifest m = manifest_of(*bytes);
  const int w = m.constants_size() - 3;
  ASSERT_EQ(m.constants(w).stored_dtype(), static_cast<uint32_t>(DType::kInt8));
  auto expect_error = [&](const std::function<void(pkg::TensorRef*)>& edit,
                          const std::string& says) {
    pkg::Manifest e = m;
    edit(e.mutable_constants(w));
    auto got = load_package(std::span<const uint8_t>(seal(*bytes, e.SerializeAsString())), nullptr);
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find(says), std::string::npos) << got.status().message();
  };
  expect_error([](pkg::TensorRef* t) { t->add_scales(1.f); }, "one scale per slice");
  expect_error([](pkg::TensorRef* t) { t->set_scales(1, -1.f); }, "not a finite value >= 0");
  expect_error([](pkg::TensorRef* t) { t->set_scales(0, std::nanf("")); },
               "not a finite value >= 0");
  expect_error(
      [](pkg::TensorRef* t) { t->set_stored_dtype(static_cast<uint32_t>(DType::kFloat16)); },
      "float16 storage takes no scales");
}

TEST(PackageLoader, WritesTheFuzzSeedWhenAsked) {
  const char* dir = std::getenv("SOD2_WRITE_FUZZ_SEED");
  if (!dir) GTEST_SKIP() << "set SOD2_WRITE_FUZZ_SEED=DIR to write the seed";
  const std::string path = std::string(dir) + "/tiny_all_features.sod2";
  EXPECT_TRUE(package::write_package(testing::tiny_program(), path).ok());
  // And ones with narrower weights, so the fuzzer starts from those paths too.
  for (const auto& [name, storage] :
       {std::pair{"tiny_half_width_weights", package::WeightStorage::kFloat16},
        std::pair{"tiny_int8_weights", package::WeightStorage::kInt8}}) {
    EXPECT_TRUE(package::write_package(program_with_weights(),
                                       std::string(dir) + "/" + name + ".sod2", nullptr,
                                       {.weights = storage})
                    .ok());
  }
}

}  // namespace
}  // namespace sod2::rt
