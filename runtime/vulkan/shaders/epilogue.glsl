// The fused epilogue's activation (runtime/kernels/linalg/epilogue.h), with the CPU formulas so
// a shader's result matches the CPU kernel's. Codes follow the Activation enum:
// 0 none, 1 Relu, 2 LeakyRelu, 3 Clip, 4 Sigmoid, 5 HardSigmoid, 6 HardSwish, 7 Tanh, 8 Silu.
// The host sends only these codes (shader_activation in kernels/builtin_kernels.cpp).

// Flag bits of the `flags` push constant the contraction shaders share.
const uint kFlagBias0 = 1u;          // binding of the op's own bias (Conv B) is present
const uint kFlagBias1 = 2u;          // the epilogue's bias is present
const uint kFlagResidual = 4u;       // a residual is present
const uint kFlagResidualAfter = 8u;  // y = act(acc + bias) + residual
const uint kFlagC = 16u;             // Gemm's C is present

float sod2_activate(float v, uint act, float alpha, float beta) {
  switch (act) {
    case 1u: return v > 0.0 ? v : 0.0;
    case 2u: return v < 0.0 ? v * alpha : v;
    case 3u: {
      float t = v < alpha ? alpha : v;
      return t > beta ? beta : t;
    }
    case 4u: return 1.0 / (1.0 + exp(-v));
    case 5u: return clamp(alpha * v + beta, 0.0, 1.0);
    case 6u: return v * clamp(v * (1.0 / 6.0) + 0.5, 0.0, 1.0);
    // tanh through exp overflows to inf/inf on some drivers; it is +-1 in float beyond 10.
    case 7u: return tanh(clamp(v, -10.0, 10.0));
    // x * sigmoid(x) with e^-|x| only, which never overflows: sigmoid is 1 / (1 + e) for x >= 0
    // and e / (1 + e) below, so large |x| gives x or -0, never inf * 0.
    case 8u: {
      float e = exp(-abs(v));
      return v * ((v >= 0.0 ? 1.0 : e) / (1.0 + e));
    }
    default: return v;
  }
}

// y = act(acc + bias + residual) or act(acc + bias) + residual (bias already in acc).
float sod2_epilogue(float acc, float residual, uint flags, uint act, float alpha, float beta) {
  if ((flags & kFlagResidual) != 0u && (flags & kFlagResidualAfter) == 0u) acc += residual;
  acc = sod2_activate(acc, act, alpha, beta);
  if ((flags & kFlagResidual) != 0u && (flags & kFlagResidualAfter) != 0u) acc += residual;
  return acc;
}
