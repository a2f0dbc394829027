#version 450
// MaxPool / AveragePool over NC(D)HW planes, 1-D/2-D run as 3-D with unit leading dims; the
// global pools are one window covering the plane. One invocation per output element, flattened
// over the dispatch's x and y so the element count is not bound by one dimension's limit.
// Windows are clipped per axis exactly as the CPU kernel (runtime/kernels/linalg/pool.cpp):
// count_include_pad counts taps inside [-pad_begin, in + pad_end), and a window entirely in
// padding yields 0.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer YBuf { float y[]; };

// Mirrored by PoolPush in pool_kernel.cpp.
layout(push_constant) uniform Push {
  uint in_d, in_h, in_w;
  uint out_d, out_h, out_w;
  uint k_d, k_h, k_w;
  uint s_d, s_h, s_w;
  uint dil_d, dil_h, dil_w;
  int pad_d, pad_h, pad_w;  // begin pads
  int end_d, end_h, end_w;  // in + end pads: where the padded extent ends
  uint total;               // output elements
  uint x_off, y_off;
  uint average;      // 0: max, 1: average
  uint include_pad;  // average: count_include_pad
} p;

// Taps [t0, t1) of a window starting at `start` land inside [0, in); `padded` counts those
// inside the padded extent.
void axis_window(int start, uint k, uint dil, uint in_size, int padded_end, out uint t0,
                 out uint t1, out uint padded) {
  const int d = int(dil);
  t0 = start >= 0 ? 0u : uint((-start + d - 1) / d);
  const int last = int(in_size) - 1 - start;
  t1 = last < 0 ? 0u : min(k, uint(last / d + 1));
  t1 = max(t1, t0);
  const int end = min(start + int((k - 1u) * dil) + 1, padded_end);
  padded = uint(max(end - start + d - 1, 0) / d);
}

void main() {
  const uint idx = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * 64u) + gl_GlobalInvocationID.x;
  if (idx >= p.total) return;
  const uint P = p.out_d * p.out_h * p.out_w;
  const uint plane = idx / P, o = idx % P;
  const uint ox = o % p.out_w, oy = (o / p.out_w) % p.out_h, oz = o / (p.out_w * p.out_h);
  const int sz = int(oz * p.s_d) - p.pad_d;
  const int sy = int(oy * p.s_h) - p.pad_h;
  const int sx = int(ox * p.s_w) - p.pad_w;
  uint z0, z1, zp, y0, y1, yp, x0, x1, xp;
  axis_window(sz, p.k_d, p.dil_d, p.in_d, p.end_d, z0, z1, zp);
  axis_window(sy, p.k_h, p.dil_h, p.in_h, p.end_h, y0, y1, yp);
  axis_window(sx, p.k_w, p.dil_w, p.in_w, p.end_w, x0, x1, xp);

  const uint xbase = p.x_off + plane * (p.in_d * p.in_h * p.in_w);
  float acc = 0.0;
  bool any = false;
  for (uint tz = z0; tz < z1; ++tz) {
    const uint iz = uint(sz + int(tz * p.dil_d));
    for (uint ty = y0; ty < y1; ++ty) {
      const uint iy = uint(sy + int(ty * p.dil_h));
      const uint row = xbase + (iz * p.in_h + iy) * p.in_w;
      for (uint tx = x0; tx < x1; ++tx) {
        const float v = x[row + uint(sx + int(tx * p.dil_w))];
        if (p.average != 0u) {
          acc += v;
        } else if (!any || v > acc) {
          acc = v;
        }
        any = true;
      }
    }
  }
  if (p.average != 0u) {
    const uint n = p.include_pad != 0u ? zp * yp * xp : (z1 - z0) * (y1 - y0) * (x1 - x0);
    acc = n > 0u ? acc / float(n) : 0.0;
  }
  y[p.y_off + idx] = acc;
}
