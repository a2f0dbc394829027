// Writes the broken-ONNX corpus (tests/onnx/broken/corpus/) and the fuzzer's seed corpus
// (tests/fuzz/seeds/onnx_import/). Run by hand, never by ctest; the files it writes are checked in
// and their expected errors are listed in tests/onnx/broken/expected_errors.txt.
//
//   make_broken_corpus BROKEN_DIR SEED_DIR REAL_MODEL
//   (or: cmake --build BUILD --target regen_broken_corpus)
//
// Every broken model is a small valid model with exactly one defect, so the error it must produce is
// unambiguous. The output is deterministic: no clocks, no std::random, protobuf serialisation of
// the same message is byte-stable for a given protobuf version.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

// ---------------------------------------------------------------------------------------------
// Construction helpers.

onnx::ModelProto make_model(int64_t opset = 17, int64_t ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("sod2-broken-corpus");
  if (opset > 0) {
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  m.mutable_graph()->set_name("main");
  return m;
}

// dims: >= 0 is a dim_value, -1 is a dim_param "N", anything else is written as a dim_value as is
// (for the negative-dim case use set_dim directly).
void set_type(onnx::ValueInfoProto* vi, int32_t elem, const std::vector<int64_t>& dims,
              bool with_shape = true) {
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  if (!with_shape) return;
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d == -1) dim->set_dim_param("N");
    else dim->set_dim_value(d);
  }
}

onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name,
                                const std::vector<int64_t>& dims,
                                int32_t elem = onnx::TensorProto::FLOAT) {
  auto* vi = g->add_input();
  vi->set_name(name);
  set_type(vi, elem, dims);
  return vi;
}

onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name,
                                 int32_t elem = onnx::TensorProto::FLOAT) {
  auto* vi = g->add_output();
  vi->set_name(name);
  set_type(vi, elem, {}, /*with_shape=*/false);
  return vi;
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

onnx::AttributeProto* add_attr(onnx::NodeProto* n, const std::string& name,
                               onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void add_int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  add_attr(n, name, onnx::AttributeProto::INT)->set_i(v);
}

void add_ints_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void add_graph_attr(onnx::NodeProto* n, const std::string& name, onnx::GraphProto g) {
  *add_attr(n, name, onnx::AttributeProto::GRAPH)->mutable_g() = std::move(g);
}

Bytes float_bytes(const std::vector<float>& v) {
  Bytes b(v.size() * sizeof(float), '\0');
  std::memcpy(b.data(), v.data(), b.size());  // little-endian host, as ONNX raw_data is
  return b;
}

onnx::TensorProto* add_float_initializer(onnx::GraphProto* g, const std::string& name,
                                         const std::vector<int64_t>& dims,
                                         const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(float_bytes(values));
  return t;
}

onnx::TensorProto* add_external_initializer(onnx::GraphProto* g, const std::string& name,
                                            const std::string& location, int64_t numel,
                                            const std::string& offset = "",
                                            const std::string& length = "") {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(numel);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  if (!offset.empty()) kv("offset", offset);
  if (!length.empty()) kv("length", length);
  return t;
}

// The baseline every graph-level case starts from: y = Relu(x), x: float[N, 4].
onnx::ModelProto relu_model(int64_t opset = 17) {
  onnx::ModelProto m = make_model(opset);
  auto* g = m.mutable_graph();
  add_input(g, "x", {-1, 4});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y");
  return m;
}

// y = Relu(x + w) with an initializer w: float[4] that cases replace.
onnx::ModelProto add_relu_model() {
  onnx::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {-1, 4});
  add_float_initializer(g, "w", {4}, {0.5f, -1.0f, 2.0f, 0.0f});
  add_node(g, "Add", {"x", "w"}, {"s"}, "add");
  add_node(g, "Relu", {"s"}, {"y"}, "relu");
  add_output(g, "y");
  return m;
}

Bytes ser(const onnx::ModelProto& m) {
  Bytes out;
  if (!m.SerializeToString(&out)) {
    std::cerr << "make_broken_corpus: cannot serialise a model\n";
    std::exit(1);
  }
  return out;
}

// splitmix64: fixed output on every platform, unlike std::uniform_int_distribution.
uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------------
// Nested If models: level k's then_branch holds level k+1; the innermost branches read the outer
// graph's input x (an outer-scope capture through every level).

onnx::GraphProto leaf_branch(const std::string& name) {
  onnx::GraphProto g;
  g.set_name(name);
  add_node(&g, "Identity", {"x"}, {name + "_out"}, name + "_identity");
  add_output(&g, name + "_out");
  return g;
}

onnx::GraphProto if_level(int level, int levels) {
  if (level == levels) return leaf_branch("then_" + std::to_string(level));
  onnx::GraphProto g;
  const std::string name = "then_" + std::to_string(level);
  g.set_name(name);
  auto* n = add_node(&g, "If", {"c"}, {name + "_out"}, "if_" + std::to_string(level));
  add_graph_attr(n, "then_branch", if_level(level + 1, levels));
  add_graph_attr(n, "else_branch", leaf_branch("else_" + std::to_string(level + 1)));
  add_output(&g, name + "_out");
  return g;
}

// The deepest subgraph sits `levels` If-nestings below the main graph.
onnx::ModelProto nested_if_model(int levels) {
  onnx::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "c", {}, onnx::TensorProto::BOOL);
  add_input(g, "x", {2});
  auto* n = add_node(g, "If", {"c"}, {"y"}, "if_0");
  add_graph_attr(n, "then_branch", if_level(1, levels));
  add_graph_attr(n, "else_branch", leaf_branch("else_1"));
  add_output(g, "y");
  return m;
}

// ---------------------------------------------------------------------------------------------
// Valid models (fuzzer seeds and the baseline the broken cases are measured against).

onnx::ModelProto valid_if_model() {
  onnx::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "cond", {}, onnx::TensorProto::BOOL);
  add_input(g, "x", {-1});
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_node(&then_g, "Relu", {"x"}, {"then_out"}, "then_relu");
  add_output(&then_g, "then_out");
  onnx::GraphProto else_g;
  else_g.set_name("else");
  add_node(&else_g, "Neg", {"x"}, {"else_out"}, "else_neg");
  add_output(&else_g, "else_out");
  auto* n = add_node(g, "If", {"cond"}, {"y"}, "if");
  add_graph_attr(n, "then_branch", then_g);
  add_graph_attr(n, "else_branch", else_g);
  add_output(g, "y");
  return m;
}

onnx::ModelProto valid_loop_model() {
  onnx::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "trip", {}, onnx::TensorProto::INT64);
  add_input(g, "keep_going", {}, onnx::TensorProto::BOOL);
  add_input(g, "x", {-1});
  add_float_initializer(g, "one", {1}, {1.0f});
  onnx::GraphProto body;
  body.set_name("body");
  add_input(&body, "i", {}, onnx::TensorProto::INT64);
  add_input(&body, "cond_in", {}, onnx::TensorProto::BOOL);
  add_input(&body, "v_in", {-1});
  add_node(&body, "Identity", {"cond_in"}, {"cond_out"}, "body_cond");
  add_node(&body, "Add", {"v_in", "one"}, {"v_out"}, "body_add");  // "one" is outer scope
  add_int_attr(add_node(&body, "Cast", {"i"}, {"i_f"}, "body_cast"), "to",
               onnx::TensorProto::FLOAT);
  add_node(&body, "Mul", {"v_out", "i_f"}, {"scan_out"}, "body_mul");
  add_output(&body, "cond_out", onnx::TensorProto::BOOL);
  add_output(&body, "v_out");
  add_output(&body, "scan_out");
  auto* n = add_node(g, "Loop", {"trip", "keep_going", "x"}, {"v_final", "scans"}, "loop");
  add_graph_attr(n, "body", body);
  add_output(g, "v_final");
  add_output(g, "scans");
  return m;
}

// Many attribute and tensor encodings in one model, so the fuzzer starts with every parser path.
onnx::ModelProto valid_attrs_model() {
  onnx::ModelProto m = make_model();
  auto* custom = m.add_opset_import();
  custom->set_domain("com.sod2.test");
  custom->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "img", {1, 1, 4, 4});
  add_input(g, "x", {-1, 4});

  // Constant with an int64 tensor (typed int64_data) feeding Reshape.
  auto* shape_c = add_node(g, "Constant", {}, {"shape"}, "shape_const");
  auto* st = add_attr(shape_c, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  st->set_data_type(onnx::TensorProto::INT64);
  st->add_dims(2);
  st->add_int64_data(1);
  st->add_int64_data(-1);
  add_node(g, "Reshape", {"x", "shape"}, {"flat"}, "reshape");

  // Conv with INTS attributes and a raw_data weight.
  std::vector<float> w(9, 0.125f);
  add_float_initializer(g, "W", {1, 1, 3, 3}, w);
  auto* conv = add_node(g, "Conv", {"img", "W"}, {"conv_out"}, "conv");
  add_ints_attr(conv, "kernel_shape", {3, 3});
  add_ints_attr(conv, "pads", {1, 1, 1, 1});
  add_ints_attr(conv, "strides", {1, 1});

  // Cast with an INT attribute.
  auto* cast = add_node(g, "Cast", {"flat"}, {"flat_i64"}, "cast");
  add_int_attr(cast, "to", onnx::TensorProto::INT64);

  // A string tensor constant.
  auto* str_c = add_node(g, "Constant", {}, {"labels"}, "labels_const");
  auto* lt = add_attr(str_c, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  lt->set_data_type(onnx::TensorProto::STRING);
  lt->add_dims(2);
  lt->add_string_data("cat");
  lt->add_string_data("dog");

  // A sparse initializer (linear indices) added to itself.
  auto* sp = g->add_sparse_initializer();
  sp->add_dims(5);
  auto* spv = sp->mutable_values();
  spv->set_name("sp");
  spv->set_data_type(onnx::TensorProto::FLOAT);
  spv->add_dims(2);
  spv->add_float_data(1.5f);
  spv->add_float_data(-2.5f);
  auto* spi = sp->mutable_indices();
  spi->set_name("sp_indices");
  spi->set_data_type(onnx::TensorProto::INT64);
  spi->add_dims(2);
  spi->add_int64_data(1);
  spi->add_int64_data(3);
  add_node(g, "Add", {"sp", "sp"}, {"sp2"}, "sparse_add");

  // A custom-domain op with FLOAT, FLOATS, STRING, STRINGS and TENSORS attributes.
  auto* c = add_node(g, "Custom", {"conv_out", ""}, {"custom_out"}, "custom");
  c->set_domain("com.sod2.test");
  add_attr(c, "alpha", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  auto* fl = add_attr(c, "scales", onnx::AttributeProto::FLOATS);
  fl->add_floats(1.0f);
  fl->add_floats(2.0f);
  add_attr(c, "mode", onnx::AttributeProto::STRING)->set_s("fast");
  auto* ss = add_attr(c, "tags", onnx::AttributeProto::STRINGS);
  ss->add_strings("a");
  ss->add_strings("b");
  auto* ts = add_attr(c, "tables", onnx::AttributeProto::TENSORS)->add_tensors();
  ts->set_data_type(onnx::TensorProto::INT32);
  ts->add_dims(3);
  ts->add_int32_data(1);
  ts->add_int32_data(2);
  ts->add_int32_data(3);

  // value_info on an intermediate value.
  auto* vi = g->add_value_info();
  vi->set_name("flat");
  set_type(vi, onnx::TensorProto::FLOAT, {1, -1});

  add_output(g, "flat_i64", onnx::TensorProto::INT64);
  add_output(g, "custom_out");
  add_output(g, "labels", onnx::TensorProto::STRING);
  add_output(g, "sp2");
  return m;
}

// IR version 2 with no opset_import: read as opset 1.
onnx::ModelProto valid_ir2_model() {
  onnx::ModelProto m = make_model(/*opset=*/0, /*ir_version=*/2);
  auto* g = m.mutable_graph();
  add_input(g, "x", {3});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y");
  return m;
}

// ---------------------------------------------------------------------------------------------
// Output.

struct Writer {
  fs::path dir;
  int count = 0;
  void write(const std::string& name, const Bytes& bytes) {
    if (bytes.size() >= 50 * 1024) {
      std::cerr << "make_broken_corpus: " << name << " is " << bytes.size()
                << " bytes; corpus files must stay under 50 KB\n";
      std::exit(1);
    }
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::cerr << "make_broken_corpus: cannot write " << (dir / name) << "\n";
      std::exit(1);
    }
    ++count;
  }
  void write(const std::string& name, const onnx::ModelProto& m) { write(name, ser(m)); }
};

Bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Offset of the ModelProto.graph tag (field 7, wire type 2 = byte 0x3A) in a serialised model:
// fields serialise in field-number order, so it follows everything numbered below 7.
size_t graph_tag_offset(const onnx::ModelProto& m) {
  onnx::ModelProto head = m;
  head.clear_graph();
  head.clear_opset_import();
  head.clear_metadata_props();
  head.clear_training_info();
  head.clear_functions();
  return ser(head).size();
}

void write_broken(Writer& w, const fs::path& real_model) {
  // --- not a protobuf at all ---------------------------------------------------------------
  w.write("empty.onnx", Bytes());
  {
    uint64_t state = 0x5D0DULL;
    Bytes b(512, '\0');
    for (char& c : b) c = static_cast<char>(splitmix64(&state) & 0xFF);
    w.write("random_bytes.onnx", b);
  }
  // The ONNX textual syntax (onnx.printer / onnx.parser), saved with an .onnx name.
  w.write("text_onnx_textual_syntax.onnx",
          "<\n  ir_version: 8,\n  opset_import: [\"\" : 17]\n>\n"
          "main (float[N, 4] x) => (float[N, 4] y) {\n  y = Relu(x)\n}\n");
  // What a clone without git-lfs leaves in place of a model.
  w.write("text_git_lfs_pointer.onnx",
          "version https://git-lfs.github.com/spec/v1\n"
          "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
          "size 2418306\n");

  // --- truncations and bit flips of a small valid model -------------------------------------
  const onnx::ModelProto base = add_relu_model();
  const Bytes good = ser(base);
  w.write("truncated_header.onnx", good.substr(0, 12));
  w.write("truncated_mid_graph.onnx", good.substr(0, good.size() / 2));
  w.write("truncated_last_byte.onnx", good.substr(0, good.size() - 1));
  {
    const size_t tag = graph_tag_offset(base);
    if (static_cast<unsigned char>(good[tag]) != 0x3A) {
      std::cerr << "make_broken_corpus: unexpected layout of the baseline model\n";
      std::exit(1);
    }
    // The graph's length prefix (a varint after the tag) gets one clear bit set, so the graph now
    // runs past the end of the file. The highest clear payload bit of its first byte is flipped.
    Bytes b = good;
    const auto len0 = static_cast<unsigned char>(good[tag + 1]);
    int bit = 6;
    while (bit >= 0 && (len0 & (1u << bit))) --bit;
    if (bit < 0) {
      std::cerr << "make_broken_corpus: no clear bit in the graph length\n";
      std::exit(1);
    }
    b[tag + 1] = static_cast<char>(len0 | (1u << bit));
    w.write("bitflip_graph_length.onnx", b);
    // The graph's tag gets wire type 6, which protobuf does not define.
    b = good;
    b[tag] = static_cast<char>(b[tag] ^ 0x04);
    w.write("bitflip_wire_type.onnx", b);
    // One bit in the op_type string: "Relu" becomes "Relt", a well-formed file naming no op.
    b = good;
    const size_t at = b.rfind("Relu");
    b[at + 3] = static_cast<char>(b[at + 3] ^ 0x01);
    w.write("bitflip_op_type.onnx", b);
  }
  // --- truncations of a real model of the shared corpus --------------------------------------
  {
    const Bytes real = read_file(real_model);
    if (real.size() < 64 * 1024) {
      std::cerr << "make_broken_corpus: " << real_model << " is missing or too small\n";
      std::exit(1);
    }
    w.write("truncated_real_model_4k.onnx", real.substr(0, 4096));
    w.write("truncated_real_model_40k.onnx", real.substr(0, 40000));
  }

  // --- model-level defects ----------------------------------------------------------------
  {
    onnx::ModelProto m = make_model();
    m.clear_graph();
    w.write("no_graph.onnx", m);
  }
  {
    // Uses Relu but imports only a custom domain (ir_version 8, so no implicit opset 1).
    onnx::ModelProto m = relu_model(/*opset=*/0);
    auto* o = m.add_opset_import();
    o->set_domain("com.example");
    o->set_version(1);
    w.write("no_default_opset_import.onnx", m);
  }

  // --- graph structure ----------------------------------------------------------------------
  {
    // A → B → A: node_a reads b, node_b reads a.
    onnx::ModelProto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "x", {4});
    add_node(g, "Add", {"x", "b"}, {"a"}, "node_a");
    add_node(g, "Relu", {"a"}, {"b"}, "node_b");
    add_output(g, "b");
    w.write("node_cycle.onnx", m);
  }
  {
    onnx::ModelProto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "x", {4});
    add_node(g, "Add", {"x", "s"}, {"s"}, "self_loop");
    add_output(g, "s");
    w.write("self_loop.onnx", m);
  }
  {
    // A node listed first that only consumes the output of a self-loop: the error must name the
    // node on the cycle, not the downstream consumer.
    onnx::ModelProto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "x", {4});
    add_node(g, "Relu", {"s"}, {"y"}, "downstream");
    add_node(g, "Add", {"x", "s"}, {"s"}, "looping_add");
    add_output(g, "y");
    w.write("cycle_with_downstream_node.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    m.mutable_graph()->mutable_node(0)->set_input(0, "no_such_value");
    w.write("dangling_node_input.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    m.mutable_graph()->mutable_output(0)->set_name("no_such_output");
    w.write("dangling_graph_output.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    add_node(m.mutable_graph(), "Neg", {"x"}, {"y"}, "second_writer");
    w.write("duplicate_node_output.onnx", m);
  }
  {
    onnx::ModelProto m = add_relu_model();
    add_float_initializer(m.mutable_graph(), "w", {4}, {1, 2, 3, 4});
    w.write("duplicate_initializer.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("");
    m.mutable_graph()->mutable_node(0)->set_name("nameless_op");
    w.write("empty_op_type.onnx", m);
  }

  // --- operators and opsets -----------------------------------------------------------------
  {
    onnx::ModelProto m = relu_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("FancyRelu");
    w.write("unknown_op_opset17.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model(/*opset=*/21);
    m.mutable_graph()->mutable_node(0)->set_op_type("FancyRelu");
    w.write("unknown_op_opset21.onnx", m);
  }
  {
    // Opset 18 moved ReduceMean's axes to an input: the opset 17 attribute would be ignored and
    // the mean taken over every axis, so it is refused.
    onnx::ModelProto m = make_model(/*opset=*/18);
    auto* g = m.mutable_graph();
    add_input(g, "x", {-1, 4});
    auto* reduce = add_node(g, "ReduceMean", {"x"}, {"y"}, "reduce");
    add_attr(reduce, "axes", onnx::AttributeProto::INTS)->add_ints(1);
    add_output(g, "y");
    w.write("reducemean_opset18_axes_attribute.onnx", m);
  }
  {
    onnx::ModelProto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "img", {1, 1, 4, 4});
    add_float_initializer(g, "W", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    auto* conv = add_node(g, "Conv", {"img", "W"}, {"y"}, "conv");
    add_attr(conv, "strides", onnx::AttributeProto::FLOAT)->set_f(1.0f);
    add_output(g, "y");
    w.write("conv_strides_float.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("Cast");
    m.mutable_graph()->mutable_node(0)->set_name("cast");
    w.write("cast_missing_to.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    m.mutable_graph()->mutable_node(0)->add_input("x");
    w.write("relu_too_many_inputs.onnx", m);
  }

  // --- types and shapes ---------------------------------------------------------------------
  {
    onnx::ModelProto m = relu_model();
    auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
                      ->mutable_shape();
    shape->mutable_dim(1)->set_dim_value(-3);
    w.write("negative_dim_input.onnx", m);
  }
  {
    onnx::ModelProto m = relu_model();
    auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
                      ->mutable_shape();
    shape->mutable_dim(1)->set_dim_value(int64_t{1} << 50);
    w.write("absurd_dim_input.onnx", m);
  }

  // --- initializers -------------------------------------------------------------------------
  {
    onnx::ModelProto m = add_relu_model();
    m.mutable_graph()->mutable_initializer(0)->set_raw_data(float_bytes({1, 2, 3}));
    w.write("initializer_raw_data_size_mismatch.onnx", m);
  }
  {
    onnx::ModelProto m = add_relu_model();
    auto* t = m.mutable_graph()->mutable_initializer(0);
    t->clear_dims();
    t->add_dims(-4);
    w.write("initializer_negative_dims.onnx", m);
  }
  {
    onnx::ModelProto m = add_relu_model();
    m.mutable_graph()->mutable_initializer(0)->set_data_type(99);
    w.write("initializer_unknown_data_type.onnx", m);
  }
  {
    onnx::ModelProto m = add_relu_model();
    auto* sp = m.mutable_graph()->add_sparse_initializer();
    sp->add_dims(10);
    auto* v = sp->mutable_values();
    v->set_name("sparse_w");
    v->set_data_type(onnx::TensorProto::FLOAT);
    v->add_dims(2);
    v->add_float_data(1.0f);
    v->add_float_data(2.0f);
    auto* idx = sp->mutable_indices();
    idx->set_data_type(onnx::TensorProto::INT64);
    idx->add_dims(2);
    idx->add_int64_data(3);
    idx->add_int64_data(100);  // dims are [10]
    w.write("sparse_initializer_index_out_of_range.onnx", m);
  }

  // --- external data ------------------------------------------------------------------------
  auto external_model = [](const std::string& location, const std::string& offset = "",
                           const std::string& length = "") {
    onnx::ModelProto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "x", {-1, 4});
    add_external_initializer(g, "w_ext", location, 4, offset, length);
    add_node(g, "Add", {"x", "w_ext"}, {"y"}, "add");
    add_output(g, "y");
    return m;
  };
  w.write("external_data_absolute_path.onnx", external_model("/etc/passwd"));
  w.write("external_data_parent_traversal.onnx", external_model("../../../etc/passwd"));
  w.write("external_data_missing_file.onnx", external_model("weights_that_do_not_exist.bin"));
  // external_data_small.bin holds 16 bytes; the tensor needs 16 bytes starting at offset 8.
  w.write("external_data_small.bin", float_bytes({1, 2, 3, 4}));
  w.write("external_data_out_of_range.onnx",
          external_model("external_data_small.bin", "8", "16"));

  // --- subgraphs ----------------------------------------------------------------------------
  {
    onnx::ModelProto m = valid_if_model();
    auto* then_g = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
    then_g->mutable_node(0)->set_input(0, "undefined_in_any_scope");
    w.write("if_subgraph_undefined_name.onnx", m);
  }
  {
    // The then branch defines 'x', a name of the main graph: the ONNX checker's SSA rule covers
    // enclosing scopes too ("has been used as output names multiple times").
    onnx::ModelProto m = valid_if_model();
    auto* then_g = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
    then_g->mutable_node(0)->set_op_type("Identity");
    then_g->mutable_node(0)->set_input(0, "cond");
    then_g->mutable_node(0)->set_output(0, "x");
    then_g->mutable_output(0)->set_name("x");
    w.write("subgraph_shadows_outer_name.onnx", m);
  }
  // The importer allows 32 levels (import_limits.h: kMaxGraphDepth); 33 is one too many.
  w.write("nested_if_33_levels.onnx", nested_if_model(33));
  w.write("nested_if_40_levels.onnx", nested_if_model(40));
}

void write_seeds(Writer& w) {
  w.write("valid_add_relu.onnx", add_relu_model());
  w.write("valid_if.onnx", valid_if_model());
  w.write("valid_loop.onnx", valid_loop_model());
  w.write("valid_attrs.onnx", valid_attrs_model());
  w.write("valid_ir2_implicit_opset1.onnx", valid_ir2_model());
  // The deepest nesting the importer allows (kMaxGraphDepth = 32).
  w.write("valid_nested_if_32_levels.onnx", nested_if_model(32));
}

}  // namespace

int main(int argc, char** argv) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  if (argc != 4) {
    std::cerr << "usage: make_broken_corpus BROKEN_DIR SEED_DIR REAL_MODEL\n"
                 "  BROKEN_DIR  tests/onnx/broken/corpus\n"
                 "  SEED_DIR    tests/fuzz/seeds/onnx_import (valid models + copies of BROKEN_DIR)\n"
                 "  REAL_MODEL  a model of shared/models to derive truncations from\n";
    return 2;
  }
  const fs::path broken_dir = argv[1], seed_dir = argv[2], real_model = argv[3];
  fs::create_directories(broken_dir);
  fs::create_directories(seed_dir);

  Writer broken{broken_dir};
  write_broken(broken, real_model);
  Writer seeds{seed_dir};
  write_seeds(seeds);
  // The broken corpus doubles as fuzzer seeds (the .bin data file is useless without a folder).
  for (const auto& e : fs::directory_iterator(broken_dir)) {
    if (e.path().extension() != ".onnx") continue;
    seeds.write("broken_" + e.path().filename().string(), read_file(e.path()));
  }
  std::cout << "wrote " << broken.count << " files to " << broken_dir.string() << " and "
            << seeds.count << " to " << seed_dir.string() << "\n";
  return 0;
}
