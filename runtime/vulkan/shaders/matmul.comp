#version 450
// C = alpha * A * B (+ beta * C) with the fused epilogue, over up to 3 broadcast batch dims.
// Operands have general element strides, so one shader serves MatMul (row-major, batched) and
// Gemm (transposes are swapped strides). Each 16x16 workgroup computes a 64x64 tile of C with a
// 4x4 block per invocation, staging 64x16 slices of A and B in shared memory.
#extension GL_GOOGLE_include_directive : require
#include "epilogue.glsl"

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer YBuf { float y[]; };
layout(std430, set = 0, binding = 3) readonly buffer CBuf { float c[]; };
layout(std430, set = 0, binding = 4) readonly buffer BiasBuf { float bias[]; };
layout(std430, set = 0, binding = 5) readonly buffer ResBuf { float res[]; };

// Mirrored by MatMulPush in matmul_kernel.cpp.
layout(push_constant) uniform Push {
  uint M, N, K;
  uint a_off, b_off, y_off;
  uint a_sm, a_sk, b_sk, b_sn;  // element strides of A [M,K] and B [K,N]
  uint d1, d2;                  // batch dims 1 and 2 (dim 0 is the rest of workgroup z)
  uint a_bs0, a_bs1, a_bs2;     // batch strides, 0 where A broadcasts
  uint b_bs0, b_bs1, b_bs2;
  float alpha;
  uint c_off, c_sm, c_sn;  // Gemm's C, strides 0 where it broadcasts
  float c_beta;
  uint bias_off, res_off;  // the epilogue's column bias and residual (shaped like Y)
  uint flags, act;
  float act_alpha, act_beta;
} p;

const uint BM = 64;
const uint BN = 64;
const uint BK = 16;
// One pad column keeps the k-major stores of A off a single bank.
shared float As[BK * (BM + 1)];
shared float Bs[BK * (BN + 1)];

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint lid = ty * 16u + tx;
  const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  const uint z = gl_WorkGroupID.z;
  const uint i2 = z % p.d2, i1 = (z / p.d2) % p.d1, i0 = z / (p.d2 * p.d1);
  const uint abase = p.a_off + i0 * p.a_bs0 + i1 * p.a_bs1 + i2 * p.a_bs2;
  const uint bbase = p.b_off + i0 * p.b_bs0 + i1 * p.b_bs1 + i2 * p.b_bs2;

  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < p.K; k0 += BK) {
    for (uint r = 0u; r < 4u; ++r) {
      const uint e = lid + 256u * r;
      // k varies fastest for A and n for B: consecutive invocations read consecutive
      // addresses when the operands are row-major.
      const uint ak = e % BK, am = e / BK;
      const uint gm = m0 + am, gk = k0 + ak;
      As[ak * (BM + 1u) + am] = (gm < p.M && gk < p.K) ? a[abase + gm * p.a_sm + gk * p.a_sk] : 0.0;
      const uint bn = e % BN, bk = e / BN;
      const uint gn = n0 + bn, gk2 = k0 + bk;
      Bs[bk * (BN + 1u) + bn] =
          (gn < p.N && gk2 < p.K) ? b[bbase + gk2 * p.b_sk + gn * p.b_sn] : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < BK; ++kk) {
      float av[4], bv[4];
      for (uint i = 0u; i < 4u; ++i) av[i] = As[kk * (BM + 1u) + ty + 16u * i];
      for (uint j = 0u; j < 4u; ++j) bv[j] = Bs[kk * (BN + 1u) + tx + 16u * j];
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  const uint ybase = z * p.M * p.N;
  for (uint i = 0u; i < 4u; ++i) {
    const uint gm = m0 + ty + 16u * i;
    if (gm >= p.M) continue;
    for (uint j = 0u; j < 4u; ++j) {
      const uint gn = n0 + tx + 16u * j;
      if (gn >= p.N) continue;
      float v = p.alpha * acc[i][j];
      if ((p.flags & kFlagC) != 0u) v += p.c_beta * c[p.c_off + gm * p.c_sm + gn * p.c_sn];
      if ((p.flags & kFlagBias1) != 0u) v += bias[p.bias_off + gn];
      const uint yi = ybase + gm * p.N + gn;
      const float r = (p.flags & kFlagResidual) != 0u ? res[p.res_off + yi] : 0.0;
      y[p.y_off + yi] = sod2_epilogue(v, r, p.flags, p.act, p.act_alpha, p.act_beta);
    }
  }
}
