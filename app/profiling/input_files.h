// Inputs a person supplies as files instead of random values (issue #23, TFLite's benchmark_model
// --input_layer_value_files): `sod2 profile --input name=FILE`, the studio's "Input files". A
// file is a NumPy array (.npy) or a serialized ONNX TensorProto (the test-data layout's
// input_K.pb), told apart by its first bytes. A file's dims bind the symbols of its input's dims,
// so a real input sets the sizes too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"
#include "runtime/tensor/tensor.h"

namespace sod2::profiling {

// "x=img.npy, lengths=\"my, file.pb\"": items split at commas and new lines outside double quotes;
// an item without "name=" names the input by its file's stem (x.npy is input x). Errors: an
// empty path, an input named twice.
Expected<std::map<std::string, std::string>> parse_input_files(std::string_view text);

// One file read whole (at most kMaxInputFileBytes), .npy or TensorProto by its magic bytes.
Expected<rt::HostTensor> read_input_tensor(const std::string& path);

struct InputFileTensor {
  std::string path;
  rt::HostTensor tensor;
};
// Per program input (program.inputs' order): its file's tensor, or nullopt when it has none.
using InputFileTensors = std::vector<std::optional<InputFileTensor>>;

// The files of `files` (input name -> path) read and checked against the program's inputs.
// Errors name the input and the file: no such input (the inputs are listed), not a tensor input,
// another element type or rank, a dim that differs from the model's fixed dim.
Expected<InputFileTensors> load_input_files(const rt::ProgramDesc& program,
                                            const std::map<std::string, std::string>& files);

// `bind` completed with the symbols the files' dims give. Errors: a file that disagrees with
// `bind` or with another file about a symbol, a value outside the symbol's range.
Expected<std::map<std::string, int64_t>> bind_with_input_files(const rt::ProgramDesc& program,
                                                               const InputFileTensors& files,
                                                               std::map<std::string, int64_t> bind);

// The file inputs in place of `inputs`' random ones, each checked against the shape the binding
// gives its input (a sweep moves the sizes under a fixed file): an error names the file and both
// shapes.
Status use_input_files(const InputFileTensors& files, std::vector<rt::HostTensor>& inputs);

}  // namespace sod2::profiling
