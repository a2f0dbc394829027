#version 450
// Direct convolution on NC(D)HW, 1-D/2-D run as 3-D with unit leading dims: one invocation per
// output position and CB output channels of one group, so each input value loaded feeds CB
// accumulators. Workgroup y is (group, channel block), z the image; every invocation of a
// workgroup reads the same weights. Groups cover depthwise (cg = mg = 1); bias, the epilogue's
// bias, the residual and the activation are applied before the store.
#extension GL_GOOGLE_include_directive : require
#include "epilogue.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer WBuf { float w[]; };
layout(std430, set = 0, binding = 2) writeonly buffer YBuf { float y[]; };
layout(std430, set = 0, binding = 3) readonly buffer B0Buf { float b0[]; };
layout(std430, set = 0, binding = 4) readonly buffer B1Buf { float b1[]; };
layout(std430, set = 0, binding = 5) readonly buffer ResBuf { float res[]; };

// Mirrored by ConvPush in conv_kernel.cpp.
layout(push_constant) uniform Push {
  uint M, cg, mg;  // output channels; input and output channels per group
  uint in_d, in_h, in_w;
  uint out_d, out_h, out_w;
  uint k_d, k_h, k_w;
  uint s_d, s_h, s_w;
  uint dil_d, dil_h, dil_w;
  int pad_d, pad_h, pad_w;  // begin pads
  uint x_off, w_off, y_off, b0_off, b1_off, res_off;
  uint flags, act;
  float act_alpha, act_beta;
} p;

const uint CB = 4u;

void main() {
  const uint P = p.out_d * p.out_h * p.out_w;
  const uint pos = gl_GlobalInvocationID.x;
  if (pos >= P) return;
  const uint blocks = (p.mg + CB - 1u) / CB;
  const uint grp = gl_WorkGroupID.y / blocks;
  const uint m0 = grp * p.mg + (gl_WorkGroupID.y % blocks) * CB;
  const uint nb = min(CB, (grp + 1u) * p.mg - m0);
  const uint n = gl_WorkGroupID.z;
  const uint groups = p.M / p.mg;
  const uint Pin = p.in_d * p.in_h * p.in_w;
  const uint kvol = p.k_d * p.k_h * p.k_w;
  const uint wstride = p.cg * kvol;  // between output channels

  const uint ox = pos % p.out_w, oy = (pos / p.out_w) % p.out_h, oz = pos / (p.out_w * p.out_h);
  const int iz0 = int(oz * p.s_d) - p.pad_d;
  const int iy0 = int(oy * p.s_h) - p.pad_h;
  const int ix0 = int(ox * p.s_w) - p.pad_w;

  float acc[CB];
  for (uint j = 0u; j < CB; ++j) acc[j] = 0.0;

  uint xc = p.x_off + (n * p.cg * groups + grp * p.cg) * Pin;
  uint wc = p.w_off + m0 * wstride;
  for (uint ci = 0u; ci < p.cg; ++ci, xc += Pin, wc += kvol) {
    for (uint kz = 0u; kz < p.k_d; ++kz) {
      const int iz = iz0 + int(kz * p.dil_d);
      if (iz < 0 || iz >= int(p.in_d)) continue;
      for (uint ky = 0u; ky < p.k_h; ++ky) {
        const int iy = iy0 + int(ky * p.dil_h);
        if (iy < 0 || iy >= int(p.in_h)) continue;
        const uint xrow = xc + (uint(iz) * p.in_h + uint(iy)) * p.in_w;
        const uint krow = wc + (kz * p.k_h + ky) * p.k_w;
        for (uint kx = 0u; kx < p.k_w; ++kx) {
          const int ix = ix0 + int(kx * p.dil_w);
          if (ix < 0 || ix >= int(p.in_w)) continue;
          const float xv = x[xrow + uint(ix)];
          // nb is the same across the workgroup, so this does not diverge.
          for (uint j = 0u; j < CB; ++j)
            if (j < nb) acc[j] += xv * w[krow + kx + j * wstride];
        }
      }
    }
  }

  for (uint j = 0u; j < CB; ++j) {
    if (j >= nb) break;
    const uint m = m0 + j;
    float v = acc[j];
    if ((p.flags & kFlagBias0) != 0u) v += b0[p.b0_off + m];
    if ((p.flags & kFlagBias1) != 0u) v += b1[p.b1_off + m];
    const uint yi = (n * p.M + m) * P + pos;
    const float r = (p.flags & kFlagResidual) != 0u ? res[p.res_off + yi] : 0.0;
    y[p.y_off + yi] = sod2_epilogue(v, r, p.flags, p.act, p.act_alpha, p.act_beta);
  }
}
