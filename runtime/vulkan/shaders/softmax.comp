#version 450
// Softmax and LogSoftmax over X viewed as [outer, n, inner], normalised along n: opset < 13's
// 2-D coercion is inner = 1, opset 13's single axis may leave an inner stride. As on the CPU
// (runtime/kernels/math/softmax.cpp) the row's maximum is subtracted before exp so it cannot
// overflow. One invocation per row for short rows, else one workgroup per row merging its
// invocations' maxima and sums in shared memory.
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer YBuf { float y[]; };

// Mirrored by SoftmaxPush in reduction_kernels.cpp.
layout(push_constant) uniform Push {
  uint outer, n, inner;
  uint rows;  // outer * inner
  uint x_off, y_off;
  uint log_softmax;
  uint per_group;  // 1: a workgroup per row
} p;

const uint kLocal = 128u;
#define kInf uintBitsToFloat(0x7f800000u)

shared float partial[kLocal];

float group_max(float v) {
  const uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint s = kLocal / 2u; s > 0u; s >>= 1u) {
    if (t < s) partial[t] = partial[t + s] > partial[t] ? partial[t + s] : partial[t];
    barrier();
  }
  const float r = partial[0];
  barrier();
  return r;
}

float group_sum(float v) {
  const uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint s = kLocal / 2u; s > 0u; s >>= 1u) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  const float r = partial[0];
  barrier();
  return r;
}

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const bool per_group = p.per_group != 0u;
  const uint r = per_group ? group : group * kLocal + gl_LocalInvocationID.x;
  // Per group the whole workgroup leaves together, so the barriers below stay uniform.
  if (r >= p.rows) return;
  const uint first = per_group ? gl_LocalInvocationID.x : 0u;
  const uint step = per_group ? kLocal : 1u;
  const uint row = r / p.inner;
  const uint base = row * p.n * p.inner + (r - row * p.inner);

  float m = -kInf;
  for (uint i = first; i < p.n; i += step) {
    const float v = x[p.x_off + base + i * p.inner];
    m = v > m ? v : m;
  }
  if (per_group) m = group_max(m);
  float sum = 0.0;
  for (uint i = first; i < p.n; i += step) sum += exp(x[p.x_off + base + i * p.inner] - m);
  if (per_group) sum = group_sum(sum);
  // Every read of this row is done (the last barrier) before any of its elements is written,
  // so Y may be X itself.
  if (p.log_softmax != 0u) {
    const float lse = log(sum);
    for (uint i = first; i < p.n; i += step) {
      const uint e = base + i * p.inner;
      y[p.y_off + e] = (x[p.x_off + e] - m) - lse;
    }
  } else {
    const float scale = 1.0 / sum;
    for (uint i = first; i < p.n; i += step) {
      const uint e = base + i * p.inner;
      y[p.y_off + e] = exp(x[p.x_off + e] - m) * scale;
    }
  }
}
