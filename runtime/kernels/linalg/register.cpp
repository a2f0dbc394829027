#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/linalg/conv_blocked.h"
#include "runtime/kernels/linalg/fused_ops.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/quantize.h"

namespace sod2::rt {

// Each op is registered at every opset where its ONNX definition changed (within 1..17); the
// kernels read the node's opset where the versions differ (Resize, pooling's ceil_mode...).
void register_linalg_kernels(KernelRegistry& r) {
  r.set_channel_block(BlockedConv::block_width());
  for (int v : {1, 9, 13}) r.add("", "MatMul", v, make_matmul);
  for (int v : {1, 6, 7, 9, 11, 13}) r.add("", "Gemm", v, make_gemm);
  for (int v : {1, 11}) r.add("", "Conv", v, make_conv);
  for (int v : {1, 11}) r.add("", "ConvTranspose", v, make_conv_transpose);
  r.add("", "DeformConv", 19, make_deform_conv);  // 22 only added bfloat16
  for (int v : {1, 8, 10, 11, 12}) r.add("", "MaxPool", v, make_max_pool);
  for (int v : {1, 7, 10, 11, 19}) r.add("", "AveragePool", v, make_average_pool);
  r.add("", "GlobalAveragePool", 1, make_global_average_pool);
  r.add("", "GlobalMaxPool", 1, make_global_max_pool);
  for (int v : {10, 11, 13}) r.add("", "Resize", v, make_resize);
  for (int v : {18, 19}) r.add("", "Resize", v, make_resize_v18);  // resize18.cpp
  r.add("", "Attention", 23, make_attention);
  r.add("", "RotaryEmbedding", 23, make_rotary_embedding);
  for (int v : {1, 2, 11, 18}) r.add("", "LpPool", v, make_lp_pool);
  for (int v : {1, 2}) r.add("", "GlobalLpPool", v, make_global_lp_pool);
  for (int v : {7, 9}) r.add("", "Upsample", v, make_upsample);
  for (int v : {1, 7, 14}) r.add("", "LSTM", v, make_lstm);
  for (int v : {1, 3, 7, 14}) r.add("", "GRU", v, make_gru);
  r.add("", "Einsum", 12, make_einsum);
  quant::register_quantized_kernels(r);  // QuantizeLinear ... QLinearConv
  for (int v : {1, 7, 14}) r.add("", "RNN", v, make_rnn);
  r.add("", "Det", 11, make_det);
  for (int v : {9, 11}) r.add("", "MaxUnpool", v, make_max_unpool);
  // Contractions with a fused epilogue (fused_ops.h has the contract).
  r.add("sod2", "FusedConv", 1, make_fused_conv);
  r.add("sod2", "FusedMatMul", 1, make_fused_matmul);
  r.add("sod2", "FusedGemm", 1, make_fused_gemm);
  r.add("sod2", "FusedBatchNormalization", 1, make_fused_batch_norm);
}

}  // namespace sod2::rt
