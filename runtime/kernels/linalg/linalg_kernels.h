// Factories of the linalg family (registered by register.cpp), including the epilogue variants
// a fusing executor uses for Conv / MatMul / Gemm followed by bias, activation or residual add.
#pragma once

#include <memory>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/epilogue.h"

namespace sod2::rt {

Expected<std::unique_ptr<Kernel>> make_matmul_kernel(const NodeInfo& node, const Epilogue& epi);
Expected<std::unique_ptr<Kernel>> make_gemm_kernel(const NodeInfo& node, const Epilogue& epi);
Expected<std::unique_ptr<Kernel>> make_conv_kernel(const NodeInfo& node, const Epilogue& epi);

Expected<std::unique_ptr<Kernel>> make_matmul(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_gemm(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_conv(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_conv_transpose(const NodeInfo& node);
// DeformConv-19, 2-D (deform_conv.cpp).
Expected<std::unique_ptr<Kernel>> make_deform_conv(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_max_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_average_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_global_average_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_global_max_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_resize(const NodeInfo& node);
// Resize-18/19: axes and keep_aspect_ratio_policy (resize18.cpp); antialias is make_resize's.
Expected<std::unique_ptr<Kernel>> make_resize_v18(const NodeInfo& node);
// Attention-23 and RotaryEmbedding-23 (attention.cpp).
Expected<std::unique_ptr<Kernel>> make_attention(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_rotary_embedding(const NodeInfo& node);
// LpPool (1, 2, 11, 18) and GlobalLpPool (lp_pool.cpp).
Expected<std::unique_ptr<Kernel>> make_lp_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_global_lp_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_upsample(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_lstm(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_gru(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_einsum(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_rnn(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_det(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_max_unpool(const NodeInfo& node);

}  // namespace sod2::rt
