#version 450
// The strided copy behind every float32 data-movement kernel but Gather (data_kernels.cpp):
// Transpose, Slice, Concat (one dispatch per input, into its slab of the output) and the
// reshape family (a plain copy). Element i of the view, decomposed over its dims, is read at
// src_off + sum(index * src_stride) and written at dst_off + sum(index * dst_stride). One
// invocation per element, flattened over the dispatch's x and y so the element count is not
// bound by one dimension's limit.
//
// Strides are two's-complement uints: a negative one (Slice's negative steps) wraps, and the sum
// is exact because every offset it reaches lies in [0, 2^32).
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer SrcBuf { float src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer DstBuf { float dst[]; };

// Mirrored by CopyPush in data_kernels.cpp. Dims innermost first; only the first `rank` count.
layout(push_constant) uniform Push {
  uint rank;
  uint total;  // elements of the view
  uint src_off, dst_off;
  uint dims[8];
  uint src_stride[8];
  uint dst_stride[8];
} p;

void main() {
  const uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u +
                 gl_LocalInvocationID.x;
  if (i >= p.total) return;
  uint rest = i;
  uint s = p.src_off;
  uint d = p.dst_off;
  for (uint k = 0u; k < p.rank; ++k) {
    const uint n = p.dims[k];
    const uint q = rest / n;
    const uint c = rest - q * n;
    s += c * p.src_stride[k];
    d += c * p.dst_stride[k];
    rest = q;
  }
  dst[d] = src[s];
}
