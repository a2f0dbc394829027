#include "core/onnx/tensor_import.h"

#include <bit>
#include <cstring>
#include <filesystem>

#include "core/onnx/four_bit.h"
#include "core/onnx/import_limits.h"
#include "core/status/input_file.h"

namespace sod2::onnx_import {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tensor bytes are stored little-endian as ONNX defines raw_data");

Expected<std::vector<int64_t>> checked_dims(const google::protobuf::RepeatedField<int64_t>& dims,
                                            const std::string& what, uint64_t* numel) {
  if (dims.size() > kMaxRank)
    return invalid_model(what + ": rank " + std::to_string(dims.size()) + " exceeds " +
                         std::to_string(kMaxRank));
  std::vector<int64_t> out(dims.begin(), dims.end());
  uint64_t n = 1;
  for (int64_t d : out) {
    if (d < 0) return invalid_model(what + ": negative dimension " + std::to_string(d));
    if (d > kMaxDim) return invalid_model(what + ": absurd dimension " + std::to_string(d));
    if (d != 0 && n > kMaxTensorBytes / static_cast<uint64_t>(d))
      return invalid_model(what + ": element count overflows (dims too large)");
    n *= static_cast<uint64_t>(d);
  }
  *numel = n;
  return out;
}

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

template <typename Dst, typename Src>
std::vector<uint8_t> pack(const google::protobuf::RepeatedField<Src>& src) {
  std::vector<uint8_t> bytes(static_cast<size_t>(src.size()) * sizeof(Dst));
  for (int i = 0; i < src.size(); ++i) {
    const Dst v = static_cast<Dst>(src.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(Dst), &v, sizeof(Dst));
  }
  return bytes;
}

// Reads `length` bytes at `offset` of an external data file, refusing paths that leave base_dir.
Expected<std::vector<uint8_t>> read_external(const onnx::TensorProto& proto,
                                             const TensorSource& source, const std::string& what,
                                             uint64_t expected_bytes) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& kv : proto.external_data()) {
    try {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset") {
        offset = std::stoull(kv.value());
      } else if (kv.key() == "length") {
        length = std::stoull(kv.value());
      }
    } catch (const std::exception&) {
      return invalid_model(what + ": external data '" + kv.key() + "' is not a number: '" +
                           kv.value() + "'");
    }
  }
  if (location.empty()) return invalid_model(what + ": external data without a 'location'");
  const std::filesystem::path rel(location);
  if (rel.is_absolute())
    return invalid_model(what + ": external data path '" + location +
                         "' is absolute; ONNX requires a path relative to the model");
  for (const auto& part : rel)
    if (part == "..")
      return invalid_model(what + ": external data path '" + location +
                           "' leaves the model's folder ('..' is refused)");
  if (source.base_dir.empty())
    return invalid_model(what + ": uses external data file '" + location +
                         "' but the model was not loaded from a folder");
  // Opened beneath the model's folder one component at a time, never following a link: a link
  // named in `location` (even one that points back inside) could lead anywhere, and checking a
  // path before opening it is a race. Size and kind are checked on the opened file.
  Expected<InputFile> file = InputFile::open_beneath(source.base_dir, location, kNoInputSizeLimit);
  if (!file.ok()) {
    const Status& st = file.status();
    if (st.code() == StatusCode::kNotFound)
      return not_found(what + ": external data file '" + location + "' does not exist in '" +
                       source.base_dir + "'");
    return Status(st.code(), what + ": external data: " + st.message());
  }
  const uint64_t file_size = file->size();
  const uint64_t want = length.value_or(expected_bytes);
  if (want != expected_bytes)
    return invalid_model(what + ": external data length " + std::to_string(want) +
                         " does not match the " + std::to_string(expected_bytes) +
                         " bytes its dims and type need");
  if (offset > file_size || want > file_size - offset) {
    uint64_t end = 0;
    const std::string range = __builtin_add_overflow(offset, want, &end)
                                  ? std::to_string(offset) + ", +" + std::to_string(want)
                                  : std::to_string(offset) + ", " + std::to_string(end);
    return invalid_model(what + ": external data range [" + range + ") lies outside '" +
                         file->path() + "' (" + std::to_string(file_size) + " bytes)");
  }
  std::vector<uint8_t> bytes(want);
  SOD2_RETURN_IF_ERROR(file->read_at(offset, bytes).with_context(what));
  return bytes;
}

// Decodes the typed repeated fields ONNX uses when raw_data is absent.
Expected<std::vector<uint8_t>> typed_bytes(const onnx::TensorProto& p, DataType dt,
                                           const std::string& what) {
  switch (dt) {
    case DataType::kFloat: return pack<float>(p.float_data());
    case DataType::kComplex64: return pack<float>(p.float_data());
    case DataType::kDouble:
    case DataType::kComplex128: return pack<double>(p.double_data());
    case DataType::kInt64: return pack<int64_t>(p.int64_data());
    case DataType::kInt32: return pack<int32_t>(p.int32_data());
    case DataType::kInt16: return pack<int16_t>(p.int32_data());
    case DataType::kInt8: return pack<int8_t>(p.int32_data());
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBFloat16: return pack<uint16_t>(p.int32_data());
    case DataType::kUint8:
    case DataType::kBool:
    // float8 (opset 19): one element's bits per int32_data entry.
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: return pack<uint8_t>(p.int32_data());
    case DataType::kUint32: return pack<uint32_t>(p.uint64_data());
    case DataType::kUint64: return pack<uint64_t>(p.uint64_data());
    default: break;
  }
  return unsupported(what + ": no typed-field encoding for type " +
                     std::string(data_type_name(dt)));
}

// An INT4/UINT4 tensor, unpacked into the int8/uint8 tensor `widened` of the same values (see
// four_bit.h). Its data holds two elements a byte in raw_data or external data, or one packed byte
// per int32_data entry.
Expected<Tensor> import_four_bit(const onnx::TensorProto& proto, const TensorSource& source,
                                 const std::string& what, std::vector<int64_t> dims, uint64_t numel,
                                 DataType widened) {
  const char* type = four_bit_type_name(proto.data_type());
  const uint64_t expected_bytes = packed_four_bit_bytes(numel);
  std::vector<uint8_t> packed;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!source.load_external_data) return Tensor(proto.name(), widened, std::move(dims), {});
    SOD2_ASSIGN_OR_RETURN(packed, read_external(proto, source, what, expected_bytes));
  } else if (proto.has_raw_data()) {
    packed.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    packed.reserve(static_cast<size_t>(proto.int32_data_size()));
    for (int i = 0; i < proto.int32_data_size(); ++i) {
      const int32_t byte = proto.int32_data(i);
      if (byte < 0 || byte > 0xFF)
        return invalid_model(what + ": int32_data[" + std::to_string(i) +
                             "] = " + std::to_string(byte) + " is not a byte of two packed " +
                             type + " values (0 to 255)");
      packed.push_back(static_cast<uint8_t>(byte));
    }
  }
  if (packed.size() != expected_bytes)
    return invalid_model(what + ": holds " + std::to_string(packed.size()) + " bytes of packed " +
                         type + " data but dims " + dims_string(dims) + " need " +
                         std::to_string(expected_bytes) + " (two elements a byte)");
  return Tensor(proto.name(), widened, std::move(dims),
                unpack_four_bit(packed, numel, proto.data_type() == kOnnxInt4));
}

}  // namespace

Expected<Tensor> import_tensor(const onnx::TensorProto& proto, const TensorSource& source,
                               const std::string& what) {
  const std::optional<DataType> widened = widened_four_bit_type(proto.data_type());
  const std::optional<DataType> dt = widened ? widened : data_type_from_onnx(proto.data_type());
  if (!dt || *dt == DataType::kUndefined)
    return invalid_model(what + ": unknown or missing data_type " +
                         std::to_string(proto.data_type()));
  if (proto.has_segment()) return unsupported(what + ": segmented tensors are not supported");
  uint64_t numel = 0;
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> dims, checked_dims(proto.dims(), what, &numel));
  if (widened) return import_four_bit(proto, source, what, std::move(dims), numel, *widened);

  if (*dt == DataType::kString) {
    if (static_cast<uint64_t>(proto.string_data_size()) != numel)
      return invalid_model(what + ": has " + std::to_string(proto.string_data_size()) +
                           " strings but its dims need " + std::to_string(numel));
    return Tensor(proto.name(), std::move(dims),
                  std::vector<std::string>(proto.string_data().begin(), proto.string_data().end()));
  }

  const uint64_t elem = data_type_size(*dt);
  const uint64_t expected_bytes = numel * elem;
  std::vector<uint8_t> bytes;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!source.load_external_data) return Tensor(proto.name(), *dt, std::move(dims), {});
    SOD2_ASSIGN_OR_RETURN(bytes, read_external(proto, source, what, expected_bytes));
  } else if (proto.has_raw_data()) {
    bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    SOD2_ASSIGN_OR_RETURN(bytes, typed_bytes(proto, *dt, what));
  }
  if (bytes.size() != expected_bytes)
    return invalid_model(what + ": holds " + std::to_string(bytes.size()) + " bytes of data but " +
                         std::string(data_type_name(*dt)) + " dims " + dims_string(dims) +
                         " need " + std::to_string(expected_bytes));
  return Tensor(proto.name(), *dt, std::move(dims), std::move(bytes));
}

Expected<Tensor> import_sparse_tensor(const onnx::SparseTensorProto& proto,
                                      const TensorSource& source, const std::string& what) {
  SOD2_ASSIGN_OR_RETURN(Tensor values, import_tensor(proto.values(), source, what + " values"));
  SOD2_ASSIGN_OR_RETURN(Tensor indices, import_tensor(proto.indices(), source, what + " indices"));
  uint64_t numel = 0;
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> dims, checked_dims(proto.dims(), what, &numel));
  if (values.dtype() == DataType::kString)
    return unsupported(what + ": sparse string tensors are not supported");
  const uint64_t elem = data_type_size(values.dtype());
  if (numel * elem > kMaxDensifiedBytes)
    return unsupported(what + ": the sparse tensor's dense form would take " +
                       std::to_string(numel * elem) + " bytes (more than " +
                       std::to_string(kMaxDensifiedBytes >> 20) + " MiB)");
  if (values.rank() != 1) return invalid_model(what + ": sparse values must be 1-D");
  if (indices.dtype() != DataType::kInt64)
    return invalid_model(what + ": sparse indices must be int64");
  const int64_t nnz = values.numel();
  const auto rank = static_cast<int64_t>(dims.size());
  const bool linear = indices.rank() == 1;
  if (!(linear && indices.numel() == nnz) &&
      !(indices.rank() == 2 && indices.dims()[0] == nnz && indices.dims()[1] == rank))
    return invalid_model(what + ": sparse indices must be [NNZ] or [NNZ, rank]");
  std::vector<uint8_t> dense(numel * elem, 0);
  for (int64_t k = 0; k < nnz; ++k) {
    uint64_t flat = 0;
    if (linear) {
      const int64_t idx = *indices.int_at(k);
      if (idx < 0 || static_cast<uint64_t>(idx) >= numel)
        return invalid_model(what + ": sparse index " + std::to_string(idx) + " out of range");
      flat = static_cast<uint64_t>(idx);
    } else {
      for (int64_t a = 0; a < rank; ++a) {
        const int64_t idx = *indices.int_at(k * rank + a);
        if (idx < 0 || idx >= dims[static_cast<size_t>(a)])
          return invalid_model(what + ": sparse index " + std::to_string(idx) +
                               " out of range on axis " + std::to_string(a));
        flat =
            flat * static_cast<uint64_t>(dims[static_cast<size_t>(a)]) + static_cast<uint64_t>(idx);
      }
    }
    std::memcpy(dense.data() + flat * elem, values.bytes().data() + k * elem, elem);
  }
  return Tensor(proto.values().name(), values.dtype(), std::move(dims), std::move(dense));
}

}  // namespace sod2::onnx_import
