#include "app/profiling/npy_file.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace sod2::profiling {
namespace {

constexpr uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// numpy itself refuses headers above this size (numpy.lib.format's _MAX_HEADER_SIZE is lower).
constexpr size_t kMaxHeaderBytes = 1 << 20;

// A cursor over the header's Python dict literal. Only the literals numpy writes are accepted:
// quoted strings, True/False, and tuples of non-negative integers.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::optional<std::string> quoted() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return std::nullopt;
    const char q = s_[i_++];
    const size_t end = s_.find(q, i_);
    if (end == std::string_view::npos) return std::nullopt;
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
  }
  std::optional<bool> boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (s_.substr(i_, word.size()) == word) {
        i_ += word.size();
        return value;
      }
    }
    return std::nullopt;
  }
  // "(2, 3)", "(5,)", "()".
  std::optional<std::vector<int64_t>> int_tuple() {
    if (!eat('(')) return std::nullopt;
    std::vector<int64_t> out;
    while (true) {
      if (eat(')')) return out;
      skip_space();
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') return std::nullopt;
      int64_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (v > (INT64_MAX - 9) / 10) return std::nullopt;
        v = v * 10 + (s_[i_++] - '0');
      }
      // A trailing 'L' is how Python 2 wrote longs.
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;
      out.push_back(v);  // a rank above kMaxRank is refused by the caller, by name
      if (!eat(',')) {
        if (eat(')')) return out;
        return std::nullopt;
      }
    }
  }
  size_t at() const { return i_; }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

struct Descr {
  rt::DType dtype = rt::DType::kUndefined;
  bool swap = false;  // big-endian data
};

// "<f4", "|b1", ">i8": byte order, kind, size.
std::optional<Descr> parse_descr(const std::string& d) {
  if (d.size() < 3) return std::nullopt;
  const char order = d[0], kind = d[1];
  const std::string_view size(d.data() + 2, d.size() - 2);
  if (order != '<' && order != '>' && order != '|' && order != '=') return std::nullopt;
  static const struct {
    char kind;
    std::string_view size;
    rt::DType dtype;
  } kTable[] = {
      {'b', "1", rt::DType::kBool},    {'?', "1", rt::DType::kBool},
      {'i', "1", rt::DType::kInt8},    {'i', "2", rt::DType::kInt16},
      {'i', "4", rt::DType::kInt32},   {'i', "8", rt::DType::kInt64},
      {'u', "1", rt::DType::kUint8},   {'u', "2", rt::DType::kUint16},
      {'u', "4", rt::DType::kUint32},  {'u', "8", rt::DType::kUint64},
      {'f', "2", rt::DType::kFloat16}, {'f', "4", rt::DType::kFloat},
      {'f', "8", rt::DType::kDouble},
  };
  for (const auto& e : kTable) {
    if (e.kind == kind && e.size == size) {
      // '=' is native order, little-endian on every machine this runs on.
      return Descr{e.dtype, order == '>' && e.size != "1"};
    }
  }
  return std::nullopt;
}

uint32_t read_le(std::span<const uint8_t> b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t k = 0; k < n; ++k) v |= static_cast<uint32_t>(b[at + k]) << (8 * k);
  return v;
}

}  // namespace

bool is_npy(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof(kMagic) &&
         std::equal(std::begin(kMagic), std::end(kMagic), bytes.begin());
}

Expected<rt::HostTensor> parse_npy(std::span<const uint8_t> bytes, const std::string& shown) {
  auto bad = [&](const std::string& why) {
    return invalid_argument(shown + ": not a NumPy array file we can read: " + why);
  };
  if (!is_npy(bytes)) return bad("it does not start with \\x93NUMPY");
  if (bytes.size() < 10) return bad("the header is cut short");
  const uint8_t major = bytes[6];
  if (major < 1 || major > 3)
    return bad("format version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
               " (known: 1.0, 2.0, 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t header_at = 8 + len_bytes;
  if (bytes.size() < header_at) return bad("the header is cut short");
  const size_t header_len = read_le(bytes, 8, len_bytes);
  if (header_len > kMaxHeaderBytes)
    return bad("a header of " + std::to_string(header_len) + " bytes (at most 1 MiB)");
  if (bytes.size() - header_at < header_len) return bad("the header is cut short");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + header_at,
                                header_len);

  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> shape;
  HeaderParser p(header);
  if (!p.eat('{')) return bad("the header is not a dictionary");
  while (!p.eat('}')) {
    const std::optional<std::string> key = p.quoted();
    if (!key || !p.eat(':')) return bad("a malformed header near byte " + std::to_string(p.at()));
    if (*key == "descr") {
      descr = p.quoted();
      if (!descr) return bad("'descr' is not a simple type string (a structured array?)");
    } else if (*key == "fortran_order") {
      fortran = p.boolean();
      if (!fortran) return bad("'fortran_order' is not True or False");
    } else if (*key == "shape") {
      shape = p.int_tuple();
      if (!shape) return bad("'shape' is not a tuple of non-negative integers");
    } else {
      return bad("an unknown header key '" + *key + "'");
    }
    if (!p.eat(',')) {
      if (p.eat('}')) break;
      return bad("a malformed header near byte " + std::to_string(p.at()));
    }
  }
  if (!descr || !fortran || !shape)
    return bad("the header lacks 'descr', 'fortran_order' or 'shape'");
  const std::optional<Descr> type = parse_descr(*descr);
  if (!type)
    return bad("element type '" + *descr +
               "' (readable: bool, int8-64, uint8-64, float16, float32, float64)");
  if (shape->size() > static_cast<size_t>(rt::kMaxRank))
    return bad("rank " + std::to_string(shape->size()) + " (at most " +
               std::to_string(rt::kMaxRank) + ")");
  if (*fortran && shape->size() > 1)
    return bad("the array is in Fortran order; save np.ascontiguousarray(a) instead");

  const size_t element = rt::dtype_size(type->dtype);
  const size_t data_bytes = bytes.size() - header_at - header_len;
  // The data's size bounds the element count, so the product is checked against it as it grows.
  uint64_t numel = 1;
  bool empty = false;
  for (int64_t d : *shape) {
    if (d == 0) empty = true;
    if (!empty && static_cast<uint64_t>(d) > data_bytes / element / numel + 1)
      return bad("shape " + std::to_string(d) + "... holds more elements than the file has bytes");
    numel = empty ? 0 : numel * static_cast<uint64_t>(d);
  }
  if (numel * element != data_bytes)
    return bad("the shape needs " + std::to_string(numel * element) +
               " bytes of data, the file has " + std::to_string(data_bytes));

  rt::HostTensor t(type->dtype, rt::Shape(std::span<const int64_t>(*shape)));
  const uint8_t* data = bytes.data() + header_at + header_len;
  if (data_bytes) std::memcpy(t.bytes().data(), data, data_bytes);
  if (type->swap) {
    for (size_t at = 0; at < data_bytes; at += element)
      std::reverse(t.bytes().begin() + static_cast<ptrdiff_t>(at),
                   t.bytes().begin() + static_cast<ptrdiff_t>(at + element));
  }
  if (type->dtype == rt::DType::kBool) {
    for (uint8_t& b : t.bytes()) b = b != 0;
  }
  return t;
}

}  // namespace sod2::profiling
