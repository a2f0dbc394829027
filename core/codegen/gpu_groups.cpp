#include "core/codegen/gpu_groups.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "core/codegen/elementwise_shader.h"
#include "core/codegen/spirv_compiler.h"

namespace sod2::codegen {
namespace {

using rt::DType;
using rt::GraphDesc;
using rt::NodeDesc;
using rt::ProgramDesc;
using rt::ValueStorage;

// A float32 constant of one element, inlined as a literal.
bool scalar_constant(const ProgramDesc& p, int32_t v, float* value) {
  const rt::ValueDesc& d = p.graphs[0].values[static_cast<size_t>(v)];
  if (d.storage != ValueStorage::kConstant || d.constant < 0 ||
      static_cast<size_t>(d.constant) >= p.constants.size())
    return false;
  const rt::Tensor t = p.constants[static_cast<size_t>(d.constant)].view();
  if (t.dtype != DType::kFloat || t.numel() != 1 || !t.data) return false;
  *value = *static_cast<const float*>(t.data);
  return true;
}

// Whether the node is one the generator takes: a known op, float32 in and out, one output used.
bool shader_node(const ProgramDesc& p, const NodeDesc& n) {
  if (!n.info.domain.empty() || !is_elementwise_op(n.info.op_type)) return false;
  if (n.outputs.empty() || n.outputs[0] < 0) return false;
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] >= 0) return false;
  if (n.info.output_dtypes.empty() || n.info.output_dtypes[0] != DType::kFloat) return false;
  const std::string& op = n.info.op_type;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) continue;
    if (i >= n.info.input_dtypes.size() || n.info.input_dtypes[i] != DType::kFloat) return false;
    float unused;
    // Clip's bounds are literals or nothing.
    if (op == "Clip" && i > 0 && !scalar_constant(p, n.inputs[i], &unused)) return false;
  }
  const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"};
  if (binary.count(op) && n.inputs.size() != 2) return false;
  return !n.inputs.empty() && n.inputs[0] >= 0;
}

struct Group {
  std::vector<int32_t> nodes;
  std::vector<int32_t> inputs;  // external, in binding order
};

}  // namespace

Status add_gpu_kernels(ProgramDesc& p, const std::function<int(const std::string&)>& rank_of,
                       GpuCodegenStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  p.gpu_kernels.clear();
  if (p.graphs.empty()) return Status::ok_status();
  const GraphDesc& g = p.graphs[0];
  const size_t nv = g.values.size();
  // Readers of each value; values that escape the main graph's nodes count one reader more.
  std::vector<int> readers(nv, 0);
  std::vector<int32_t> producer(nv, -1);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int32_t v : g.nodes[n].inputs)
      if (v >= 0 && static_cast<size_t>(v) < nv) ++readers[static_cast<size_t>(v)];
    for (int32_t v : g.nodes[n].outputs)
      if (v >= 0 && static_cast<size_t>(v) < nv) producer[static_cast<size_t>(v)] = int32_t(n);
  }
  for (int32_t v : g.outputs)
    if (v >= 0 && static_cast<size_t>(v) < nv) readers[static_cast<size_t>(v)] += 1 << 20;
  for (size_t b = 1; b < p.graphs.size(); ++b)
    for (const rt::ValueDesc& d : p.graphs[b].values)
      if (d.storage == ValueStorage::kOuterScope && d.outer_value >= 0 &&
          static_cast<size_t>(d.outer_value) < nv)
        readers[static_cast<size_t>(d.outer_value)] += 1 << 20;

  std::vector<Group> groups;
  Group cur;
  int cur_rank = -1;
  // Reads of values produced inside `cur` by the group's nodes, per value.
  std::map<int32_t, int> inside_reads;
  auto close = [&] {
    if (!cur.nodes.empty()) groups.push_back(cur);
    cur = Group();
    inside_reads.clear();
    cur_rank = -1;
  };
  auto external_inputs = [&](const Group& grp, const NodeDesc& n) {
    std::vector<int32_t> ins = grp.inputs;
    for (int32_t v : n.inputs) {
      float unused;
      if (v < 0 || scalar_constant(p, v, &unused)) continue;
      const int32_t prod = producer[static_cast<size_t>(v)];
      const bool inside =
          prod >= 0 && std::find(grp.nodes.begin(), grp.nodes.end(), prod) != grp.nodes.end();
      if (!inside && std::find(ins.begin(), ins.end(), v) == ins.end()) ins.push_back(v);
    }
    return ins;
  };
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const NodeDesc& n = g.nodes[ni];
    if (!shader_node(p, n)) {
      close();
      continue;
    }
    const int rank = rank_of(g.values[static_cast<size_t>(n.outputs[0])].name);
    if (rank < 0 || rank > rt::kMaxGpuRank) {
      close();
      continue;
    }
    bool joins = !cur.nodes.empty();
    if (joins) {
      // It must read a value of the group, and after it every value the group produced must
      // have had all its readers inside.
      bool reads_inside = false;
      std::map<int32_t, int> reads = inside_reads;
      for (int32_t v : n.inputs) {
        if (v < 0) continue;
        const int32_t prod = producer[static_cast<size_t>(v)];
        if (prod >= 0 && std::find(cur.nodes.begin(), cur.nodes.end(), prod) != cur.nodes.end()) {
          reads_inside = true;
          ++reads[v];
        }
      }
      bool closed = reads_inside;
      for (int32_t m : cur.nodes) {
        const int32_t v = g.nodes[static_cast<size_t>(m)].outputs[0];
        if (reads[v] != readers[static_cast<size_t>(v)]) closed = false;
      }
      const auto ins = external_inputs(cur, n);
      const int r = std::max(rank, cur_rank);
      joins = closed && rank >= cur_rank && ins.size() <= rt::kMaxGpuKernelInputs &&
              rt::gpu_group_push_words(uint32_t(ins.size()), uint32_t(r)) <= 32;
      if (joins) {
        inside_reads = reads;
        cur.inputs = ins;
      }
    }
    if (!joins) {
      close();
      const auto ins = external_inputs(cur, n);
      if (ins.size() > rt::kMaxGpuKernelInputs ||
          rt::gpu_group_push_words(uint32_t(ins.size()), uint32_t(rank)) > 32) {
        continue;
      }
      cur.inputs = ins;
    }
    cur.nodes.push_back(static_cast<int32_t>(ni));
    cur_rank = rank;
  }
  close();

  std::map<std::string, std::vector<uint32_t>> compiled;  // by source
  for (const Group& grp : groups) {
    ElementwiseShader shader;
    shader.num_inputs = static_cast<int>(grp.inputs.size());
    const NodeDesc& last = g.nodes[static_cast<size_t>(grp.nodes.back())];
    shader.rank = rank_of(g.values[static_cast<size_t>(last.outputs[0])].name);
    for (int32_t m : grp.nodes) {
      const NodeDesc& n = g.nodes[static_cast<size_t>(m)];
      ShaderOp op;
      op.op_type = n.info.op_type;
      op.opset = n.info.opset;
      op.attrs = &n.info.attrs;
      op.node = n.info.name;
      for (int32_t v : n.inputs) {
        Operand o;
        float value;
        if (v < 0) {
          o.kind = Operand::kAbsent;
        } else if (scalar_constant(p, v, &value)) {
          o.kind = Operand::kLiteral;
          o.literal = value;
        } else {
          const auto in = std::find(grp.inputs.begin(), grp.inputs.end(), v);
          if (in != grp.inputs.end()) {
            o.kind = Operand::kInput;
            o.index = static_cast<int>(in - grp.inputs.begin());
          } else {
            const auto at =
                std::find(grp.nodes.begin(), grp.nodes.end(), producer[static_cast<size_t>(v)]);
            o.kind = Operand::kTemp;
            o.index = static_cast<int>(at - grp.nodes.begin());
          }
        }
        op.inputs.push_back(o);
      }
      shader.ops.push_back(std::move(op));
    }
    rt::GpuKernelDesc k;
    k.name = "ew" + std::to_string(p.gpu_kernels.size());
    SOD2_ASSIGN_OR_RETURN(k.source, generate_elementwise_glsl(shader));
    auto it = compiled.find(k.source);
    if (it == compiled.end()) {
      SOD2_ASSIGN_OR_RETURN(std::vector<uint32_t> spirv, compile_compute_shader(k.source, k.name));
      it = compiled.emplace(k.source, std::move(spirv)).first;
    }
    k.spirv = it->second;
    k.nodes = grp.nodes;
    k.inputs = grp.inputs;
    k.output = last.outputs[0];
    k.rank = shader.rank;
    if (stats) stats->grouped_nodes += static_cast<int>(k.nodes.size());
    p.gpu_kernels.push_back(std::move(k));
  }
  if (stats) {
    stats->groups = static_cast<int>(p.gpu_kernels.size());
    stats->shaders = static_cast<int>(compiled.size());
    stats->compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return Status::ok_status();
}

}  // namespace sod2::codegen
