// The pieces of the package writer that a single-model package and a family package share: the
// weight blob being laid out, a ProgramDesc to its protobuf manifest, and the sealing of manifest
// and blob into the file's bytes (header, padding, SHA-256 trailer; runtime/package/FORMAT.md).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/package/package_writer.h"
#include "core/status/status.h"
#include "runtime/package/sod2_package.pb.h"
#include "runtime/program/program.h"

namespace sod2::package {

// The weight blob in the making: each entry starts 64-byte aligned. Tensors added by view must
// outlive the builder; owned byte vectors are kept by it.
class BlobBuilder {
 public:
  struct Entry {
    uint64_t offset;
    const uint8_t* data;
    size_t size;
  };
  uint64_t add(const rt::Tensor& t);               // returns the offset
  uint64_t add_owned(std::vector<uint8_t> bytes);  // returns the offset
  uint64_t size() const { return size_; }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
  std::deque<std::vector<uint8_t>> owned_;  // deque: adding never moves earlier vectors
  uint64_t size_ = 0;
};

class ManifestBuilder {
 public:
  // `weights`: how float32 constants are stored (package_writer.h).
  explicit ManifestBuilder(BlobBuilder& blob, WeightStorage weights = WeightStorage::kAsIs)
      : blob_(blob), weights_(weights) {}
  size_t narrow_constants() const { return narrow_constants_; }
  // Fills `m` from `p`, adding constants (unless `with_constants` is false: a family variant's
  // constants are family weights) and large attribute tensors to the blob.
  Status build(const rt::ProgramDesc& p, pkg::Manifest* m, bool with_constants = true);

 private:
  Status add_to_blob(const rt::Tensor& t, pkg::TensorRef* o, bool allow_inline,
                     const std::string& what);
  // Stores a float32 constant narrower as `weights_` asks where its values allow; false when
  // it stays as it is.
  bool add_narrow(const rt::Tensor& t, pkg::TensorRef* o);
  Status add_graph(const rt::GraphDesc& g, pkg::Graph* o);
  Status add_node(const rt::NodeDesc& n, pkg::Node* o);
  static void add_program(const rt::ShapeProgram& p, pkg::ShapeProgram* o);

  BlobBuilder& blob_;
  WeightStorage weights_ = WeightStorage::kAsIs;
  size_t narrow_constants_ = 0;
};

// The file's bytes. Fills stats' file, manifest and blob sizes and the digest.
Expected<std::vector<uint8_t>> seal_package(const pkg::Manifest& manifest, const BlobBuilder& blob,
                                            PackageStats* stats);

}  // namespace sod2::package
