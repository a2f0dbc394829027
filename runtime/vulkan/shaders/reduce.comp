#version 450
// The Reduce* ops over X viewed as [outer, n, inner], reduced along n (reduction_kernels.cpp
// collapses contiguous reduced axes to this view). Two ways to walk it, chosen per dispatch:
// one invocation per output for short reductions, or one workgroup per output for long ones,
// its invocations striding the row and merging partial results in shared memory. Steps and
// finishes follow the CPU kernel (runtime/kernels/math/reduce.cpp), accumulating in float.
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer YBuf { float y[]; };

// Mirrored by ReducePush in reduction_kernels.cpp.
layout(push_constant) uniform Push {
  uint outer, n, inner;
  uint outputs;  // outer * inner
  uint x_off, y_off;
  uint op;         // kOp* below
  uint per_group;  // 1: a workgroup per output
} p;

const uint kOpSum = 0u, kOpMean = 1u, kOpMax = 2u, kOpMin = 3u, kOpProd = 4u, kOpL1 = 5u,
           kOpL2 = 6u, kOpLogSumExp = 7u, kOpSumSquare = 8u;
const uint kLocal = 128u;

#define kInf uintBitsToFloat(0x7f800000u)

shared float partial[kLocal];

// The comparisons are written as the CPU's so that NaN propagates (or not) the same way.
float combine(float a, float b, uint op) {
  if (op == kOpMax) return b > a ? b : a;
  if (op == kOpMin) return b < a ? b : a;
  if (op == kOpProd) return a * b;
  return a + b;
}

float init_value(uint op) {
  if (op == kOpMax) return -kInf;
  if (op == kOpMin) return kInf;
  if (op == kOpProd) return 1.0;
  return 0.0;
}

float step_value(float a, float v, float shift, uint op) {
  if (op == kOpL1) return a + abs(v);
  if (op == kOpL2 || op == kOpSumSquare) return a + v * v;
  if (op == kOpLogSumExp) return a + exp(v - shift);
  return combine(a, v, op);
}

float finish(float a, float shift, uint op) {
  if (op == kOpMean) return p.n == 0u ? uintBitsToFloat(0x7fc00000u) : a / float(p.n);
  if (op == kOpL2) return sqrt(a);
  if (op == kOpLogSumExp) return shift + log(a);
  return a;
}

// LogSumExp subtracts its elements' maximum; a non-finite one (empty, inf, NaN) leaves those
// cases to exp and log, as on the CPU.
float usable_shift(float m) { return isinf(m) || isnan(m) ? 0.0 : m; }

// Merges every invocation's `v`; all invocations of the workgroup must call it.
float group_combine(float v, uint op) {
  const uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint s = kLocal / 2u; s > 0u; s >>= 1u) {
    if (t < s) partial[t] = combine(partial[t], partial[t + s], op);
    barrier();
  }
  const float r = partial[0];
  barrier();  // before the next call overwrites partial
  return r;
}

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint op = p.op;
  if (p.per_group != 0u) {
    const uint o = group;
    if (o >= p.outputs) return;  // the whole workgroup leaves together
    const uint t = gl_LocalInvocationID.x;
    const uint row = o / p.inner;
    const uint base = p.x_off + row * p.n * p.inner + (o - row * p.inner);
    float shift = 0.0;
    if (op == kOpLogSumExp) {
      float m = -kInf;
      for (uint i = t; i < p.n; i += kLocal) m = combine(m, x[base + i * p.inner], kOpMax);
      shift = usable_shift(group_combine(m, kOpMax));
    }
    float acc = init_value(op);
    for (uint i = t; i < p.n; i += kLocal) acc = step_value(acc, x[base + i * p.inner], shift, op);
    acc = group_combine(acc, op);
    if (t == 0u) y[p.y_off + o] = finish(acc, shift, op);
    return;
  }
  const uint o = group * kLocal + gl_LocalInvocationID.x;
  if (o >= p.outputs) return;
  const uint row = o / p.inner;
  const uint base = p.x_off + row * p.n * p.inner + (o - row * p.inner);
  float shift = 0.0;
  if (op == kOpLogSumExp) {
    float m = -kInf;
    for (uint i = 0u; i < p.n; ++i) m = combine(m, x[base + i * p.inner], kOpMax);
    shift = usable_shift(m);
  }
  float acc = init_value(op);
  for (uint i = 0u; i < p.n; ++i) acc = step_value(acc, x[base + i * p.inner], shift, op);
  y[p.y_off + o] = finish(acc, shift, op);
}
