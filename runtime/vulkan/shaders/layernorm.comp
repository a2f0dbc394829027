#version 450
// LayerNormalization over rows of n contiguous elements: y = (x - mean) * inv_std * scale + bias
// with the mean and variance in two passes over the row (as on the CPU,
// runtime/kernels/math/normalization.cpp), accumulated in float. Scale and bias have one value
// per element of the row or one for all (stride 0). One invocation per row for short rows, else
// one workgroup per row merging its invocations' sums in shared memory.
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer SBuf { float scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer BBuf { float bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer YBuf { float y[]; };

// Mirrored by LayerNormPush in reduction_kernels.cpp.
layout(push_constant) uniform Push {
  uint rows, n;
  uint x_off, s_off, b_off, y_off;
  uint s_stride, b_stride;
  uint has_bias;
  uint per_group;  // 1: a workgroup per row
  float epsilon;
} p;

const uint kLocal = 128u;

shared float partial[kLocal];

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
  const uint base = r * p.n;
  const float count = float(p.n);

  float sum = 0.0;
  for (uint i = first; i < p.n; i += step) sum += x[p.x_off + base + i];
  if (per_group) sum = group_sum(sum);
  const float mean = sum / count;
  float sq = 0.0;
  for (uint i = first; i < p.n; i += step) {
    const float d = x[p.x_off + base + i] - mean;
    sq += d * d;
  }
  if (per_group) sq = group_sum(sq);
  const float inv_std = 1.0 / sqrt(sq / count + p.epsilon);
  // Every read of this row is done (the last barrier) before any of its elements is written,
  // so Y may be X itself.
  for (uint i = first; i < p.n; i += step) {
    const float b = p.has_bias != 0u ? bias[p.b_off + i * p.b_stride] : 0.0;
    y[p.y_off + base + i] =
        (x[p.x_off + base + i] - mean) * inv_std * scale[p.s_off + i * p.s_stride] + b;
  }
}
