#version 450
// Gather of float32 data along one axis, the data viewed as [outer, axis_dim, inner] and the
// output as [outer, n, inner] for n indices. The indices are the node's own int32 or int64
// tensor (an int64 read as its low word, `idx_stride` 2): the kernel has checked them all against
// axis_dim < 2^31 on the host, so the low word is the value and a negative one wraps once here.
// One invocation per output element, flattened over x and y.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer SrcBuf { float src[]; };
layout(std430, set = 0, binding = 1) readonly buffer IdxBuf { int idx[]; };
layout(std430, set = 0, binding = 2) writeonly buffer DstBuf { float dst[]; };

// Mirrored by GatherPush in data_kernels.cpp.
layout(push_constant) uniform Push {
  uint total;  // output elements
  uint inner, n, axis_dim;
  uint src_off, idx_off, idx_stride, dst_off;
} p;

void main() {
  const uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u +
                 gl_LocalInvocationID.x;
  if (t >= p.total) return;
  const uint q = t / p.inner;
  const uint r = t - q * p.inner;
  const uint o = q / p.n;
  const uint j = q - o * p.n;
  int v = idx[p.idx_off + j * p.idx_stride];
  if (v < 0) v += int(p.axis_dim);
  dst[p.dst_off + t] = src[p.src_off + (o * p.axis_dim + uint(v)) * p.inner + r];
}
