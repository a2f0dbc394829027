// NumPy's .npy format (numpy.save; format versions 1.0, 2.0 and 3.0) read into a runtime tensor:
// the way most people hold a real input (an image, a token list, a spectrogram) outside a model.
// The file is hostile: the header is parsed, not evaluated; every size is checked against the
// bytes present before anything is allocated.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/status/status.h"
#include "runtime/tensor/tensor.h"

namespace sod2::profiling {

// `shown` names the file in errors. Accepted: little- or big-endian bool, int8-64, uint8-64,
// float16, float32 and float64 arrays in C order, of rank <= kMaxRank. Errors say what is wrong
// (bad magic, an unsupported dtype such as an object array, Fortran order, a data size that does
// not match the shape).
Expected<rt::HostTensor> parse_npy(std::span<const uint8_t> bytes, const std::string& shown);

// Whether `bytes` start with the .npy magic string.
bool is_npy(std::span<const uint8_t> bytes);

}  // namespace sod2::profiling
