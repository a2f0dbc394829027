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
Expected<std::unique_ptr<Kernel>> make_max_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_average_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_global_average_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_global_max_pool(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_resize(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_upsample(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_lstm(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_gru(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_einsum(const NodeInfo& node);

}  // namespace sod2::rt
