#include "runtime/family/family_package.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <set>

#include "runtime/family/weight_view.h"
#include "runtime/package/format.h"
#include "runtime/package/manifest_reader.h"
#include "runtime/package/mapped_file.h"
#include "runtime/package/sod2_package.pb.h"

namespace sod2::rt {
namespace {

std::string n(uint64_t v) { return std::to_string(v); }

// The mapping and the views built at load: what every variant's constants point into.
struct FamilyWeightStorage {
  std::shared_ptr<const void> mapping;
  // Over-allocated by kPackageAlignment to align its start. Not value-initialised: every byte a
  // view owns is written when it is built, and zeroing first would only add to the load's RSS.
  std::unique_ptr<uint8_t[]> built;
};

uint64_t default_max_built_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) / 2 * static_cast<uint64_t>(page);
}

// `count` elements of `elem` bytes at `offset` in the blob, aligned for the element type.
Expected<const uint8_t*> blob_range(std::span<const uint8_t> blob, uint64_t offset, uint64_t count,
                                    size_t elem, const std::string& what) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elem), &bytes) || offset % elem != 0 ||
      offset > blob.size() || bytes > blob.size() - offset) {
    return parse_error(what + ": [" + n(offset) + ", +" + n(count) + " x " + n(elem) +
                       " bytes) is misaligned or outside the weight blob (" + n(blob.size()) +
                       " bytes)");
  }
  return blob.data() + offset;
}

// FORMAT.md §Family packages, "What views may cost": checked before anything is built. A variant
// is one sub-network of the supernet the stored weights hold, so the views it needs built never
// take more than all the stored weights; a view no variant uses would only cost memory. Together
// these bound the views built at load by the stored bytes times the number of variants, and the
// caller's ceiling bounds them absolutely (a family of many small variants).
Status check_built_view_limits(const pkg::Family& fam, const std::vector<Tensor>& weights,
                               const std::vector<int64_t>& built_offset, uint64_t stored_bytes,
                               uint64_t built_bytes, const FamilyLoadLimits& limits) {
  std::vector<int> seen_by(weights.size(), -1);
  std::vector<bool> used(weights.size(), false);
  for (int v = 0; v < fam.variants_size(); ++v) {
    const pkg::Variant& pv = fam.variants(v);
    const std::string what = "variant " + std::to_string(v) + " ('" + pv.name() + "')";
    uint64_t variant_bytes = 0;  // stays <= stored_bytes, so the sum cannot overflow
    for (int c = 0; c < pv.constant_weights_size(); ++c) {
      const uint32_t w = pv.constant_weights(c);
      if (w >= weights.size()) {
        return parse_error(what + ": constant " + std::to_string(c) + " names family weight " +
                           n(w) + " of " + n(weights.size()));
      }
      if (built_offset[w] < 0 || seen_by[w] == v) continue;
      seen_by[w] = v;
      used[w] = true;
      variant_bytes += weights[w].bytes();
      if (variant_bytes > stored_bytes) {
        return parse_error(what + ": the views it needs built at load take more than the " +
                           n(stored_bytes) + " bytes of weights the family stores (exceeded at " +
                           "constant " + std::to_string(c) + ", family weight " + n(w) + ", " +
                           n(weights[w].bytes()) + " bytes); a variant never needs more than " +
                           "all the stored weights it is a window of");
      }
    }
  }
  for (size_t k = 0; k < weights.size(); ++k) {
    if (built_offset[k] >= 0 && !used[k]) {
      return parse_error("family weight " + n(k) + ": a view (" + n(weights[k].bytes()) +
                         " bytes) that no variant uses; views are built at load, so an unused "
                         "one would only cost memory");
    }
  }
  const uint64_t max = limits.max_built_bytes ? limits.max_built_bytes : default_max_built_bytes();
  if (built_bytes > max) {
    size_t k = 0;  // the first view past the ceiling, to name it
    while (
        k + 1 < weights.size() &&
        (built_offset[k] < 0 || static_cast<uint64_t>(built_offset[k]) + weights[k].bytes() <= max))
      ++k;
    return resource_exhausted("the family's views built at load take " + n(built_bytes) +
                              " bytes, more than the limit of " + n(max) +
                              " bytes (first past it: family weight " + n(k) + ")");
  }
  return Status::ok_status();
}

struct DecodedView {
  uint32_t base = 0;
  WeightView view;
};

Expected<DecodedView> read_view(const pkg::WeightView& w, std::span<const uint8_t> blob,
                                const std::string& what) {
  DecodedView d;
  d.base = w.base();
  if (w.dims_size() != w.offsets_size() || !Shape::fits(static_cast<size_t>(w.dims_size()))) {
    return parse_error(what + ": " + std::to_string(w.dims_size()) + " dims and " +
                       std::to_string(w.offsets_size()) + " offsets (at most " +
                       std::to_string(kMaxRank) + " each, and as many)");
  }
  d.view.dims =
      Shape(std::span<const int64_t>(w.dims().data(), static_cast<size_t>(w.dims_size())));
  for (int i = 0; i < w.offsets_size(); ++i) d.view.offsets[i] = w.offsets(i);
  d.view.scale_axis = w.scale_axis();
  if (w.scale_axis() >= 0 && w.scale_axis() < w.dims_size()) {
    const int64_t len = w.dims(w.scale_axis());
    if (len < 0) return parse_error(what + ": a negative dim");
    SOD2_ASSIGN_OR_RETURN(
        const uint8_t* s,
        blob_range(blob, w.scale_offset(), static_cast<uint64_t>(len), 4, what + " scales"));
    d.view.scales =
        std::span<const float>(reinterpret_cast<const float*>(s), static_cast<size_t>(len));
  }
  if (w.residual_length() > 0) {
    SOD2_ASSIGN_OR_RETURN(const uint8_t* r, blob_range(blob, w.residual_offset(),
                                                       w.residual_length(), 1, what + " residual"));
    d.view.residual = std::span<const uint8_t>(r, w.residual_length());
  }
  if (w.escape_count() > 0) {
    SOD2_ASSIGN_OR_RETURN(const uint8_t* e, blob_range(blob, w.escape_offset(), w.escape_count(), 4,
                                                       what + " escapes"));
    d.view.escapes =
        std::span<const uint32_t>(reinterpret_cast<const uint32_t*>(e), w.escape_count());
  }
  return d;
}

}  // namespace

Expected<FamilyProgram> load_family_package(std::span<const uint8_t> bytes,
                                            std::shared_ptr<const void> keep_alive,
                                            const PackageLoadOptions& options,
                                            const FamilyLoadLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  SOD2_ASSIGN_OR_RETURN(PackageSections sections,
                        read_package_sections(bytes, std::move(keep_alive), options));
  const pkg::Manifest& m = *sections.manifest;
  if (!m.has_family()) {
    return invalid_argument(
        "this package holds a single model, not a family: run it with `sod2 run`, or compile a "
        "family with `sod2 compile --family FAMILY/variants.json`");
  }
  const pkg::Family& fam = m.family();
  if (fam.variants_size() == 0) return parse_error("the family has no variants");
  if (m.graphs_size() != 0 || m.constants_size() != 0) {
    return parse_error("a family package's top-level manifest has graphs or constants");
  }
  const std::span<const uint8_t> blob = sections.blob;
  FamilyProgram out;
  out.name = fam.name();
  out.stats.file_bytes = bytes.size();
  out.stats.weights = static_cast<size_t>(fam.weights_size());

  // Pass 1: stored weights as views into the mapping; views' layouts checked and sized. Nothing
  // is allocated for the views, nor is any residual read, before the limits below are met.
  std::vector<Tensor> weights(static_cast<size_t>(fam.weights_size()));
  std::vector<bool> is_stored(weights.size(), false);
  std::vector<DecodedView> views(weights.size());
  std::vector<int64_t> built_offset(weights.size(), -1);
  uint64_t built_bytes = 0;
  for (int i = 0; i < fam.weights_size(); ++i) {
    const pkg::FamilyWeight& w = fam.weights(i);
    const std::string what = "family weight " + std::to_string(i);
    const auto k = static_cast<size_t>(i);
    if (w.has_stored()) {
      SOD2_ASSIGN_OR_RETURN(weights[k], package_detail::read_tensor(w.stored(), blob, false, what));
      is_stored[k] = true;
      ++out.stats.stored;
      // Saturating: stored weights may overlap in the blob, so their sum is not bounded by it.
      if (__builtin_add_overflow(out.stats.stored_bytes, weights[k].bytes(),
                                 &out.stats.stored_bytes))
        out.stats.stored_bytes = UINT64_MAX;
      continue;
    }
    if (!w.has_view()) return parse_error(what + ": neither stored nor a view");
    SOD2_ASSIGN_OR_RETURN(views[k], read_view(w.view(), blob, what));
    const DecodedView& d = views[k];
    if (d.base >= k || !is_stored[d.base]) {
      return parse_error(what + ": its base " + n(d.base) + " is not an earlier stored weight");
    }
    const Tensor& base = weights[d.base];
    SOD2_RETURN_IF_ERROR(check_weight_view_layout(d.view, base, what));
    weights[k].dtype = base.dtype;
    weights[k].shape = d.view.dims;
    const int64_t in_place = contiguous_window_offset(d.view, base);
    if (in_place >= 0) {
      weights[k].data = static_cast<uint8_t*>(base.data) + in_place;
      ++out.stats.views_in_place;
      continue;
    }
    // The window lies inside a base whose byte size was checked, so this cannot overflow; it
    // is checked anyway, like every size computed from the package.
    Expected<size_t> view_bytes = checked_tensor_bytes(base.dtype, d.view.dims);
    if (!view_bytes.ok()) return view_bytes.status().with_context(what);
    const uint64_t at = align_up(built_bytes, kPackageAlignment);
    if (at < built_bytes || __builtin_add_overflow(at, *view_bytes, &built_bytes) ||
        built_bytes > static_cast<uint64_t>(INT64_MAX)) {
      return parse_error(what + ": the views built at load overflow a 64-bit byte size");
    }
    built_offset[k] = static_cast<int64_t>(at);
    ++out.stats.views_built;
  }
  // Stored weights that overlap in the blob must not inflate what a variant may have built: they
  // hold at most the blob's bytes.
  const uint64_t stored_bytes = std::min<uint64_t>(out.stats.stored_bytes, blob.size());
  SOD2_RETURN_IF_ERROR(
      check_built_view_limits(fam, weights, built_offset, stored_bytes, built_bytes, limits));

  // Pass 2: the views that need building, into one aligned buffer.
  auto storage = std::make_shared<FamilyWeightStorage>();
  storage->mapping = sections.keep_alive;
  storage->built.reset(new (std::nothrow) uint8_t[built_bytes + kPackageAlignment]);
  if (!storage->built) {
    return resource_exhausted("no memory for the " + n(built_bytes) +
                              " bytes of the family's views built at load");
  }
  const auto addr = reinterpret_cast<uintptr_t>(storage->built.get());
  uint8_t* built =
      storage->built.get() + (kPackageAlignment - addr % kPackageAlignment) % kPackageAlignment;
  for (size_t k = 0; k < weights.size(); ++k) {
    if (built_offset[k] < 0) continue;
    SOD2_RETURN_IF_ERROR(check_weight_view_escapes(views[k].view, "family weight " + n(k)));
    weights[k].data = built + built_offset[k];
    materialize_weight_view(views[k].view, weights[views[k].base], weights[k].data);
  }
  out.stats.built_bytes = built_bytes;
  out.stats.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::set<std::string> names;
  for (int v = 0; v < fam.variants_size(); ++v) {
    const pkg::Variant& pv = fam.variants(v);
    const std::string what = "variant " + std::to_string(v) + " ('" + pv.name() + "')";
    if (pv.name().empty() || !names.insert(pv.name()).second) {
      return parse_error(what + ": variant names must be present and distinct");
    }
    if (!pv.has_program()) return parse_error(what + ": has no program");
    std::vector<ConstantTensor> constants;
    constants.reserve(static_cast<size_t>(pv.constant_weights_size()));
    for (int c = 0; c < pv.constant_weights_size(); ++c) {
      const uint32_t w = pv.constant_weights(c);
      if (w >= weights.size()) {
        return parse_error(what + ": constant " + std::to_string(c) + " names family weight " +
                           n(w) + " of " + n(weights.size()));
      }
      constants.push_back(ConstantTensor::borrowed(weights[w]));
    }
    Expected<ProgramDesc> program = program_from_manifest(pv.program(), blob, &constants);
    if (!program.ok()) return program.status().with_context(what);
    VariantDesc desc;
    desc.name = pv.name();
    desc.macs = pv.macs();
    desc.params = pv.params();
    desc.has_accuracy = pv.has_accuracy();
    desc.accuracy = pv.accuracy();
    desc.config = pv.config();
    desc.program = std::move(*program);
    desc.program.constant_storage = storage;
    out.variants.push_back(std::move(desc));
  }
  return out;
}

Expected<FamilyProgram> load_family_package_file(const std::string& path,
                                                 const PackageLoadOptions& options,
                                                 const FamilyLoadLimits& limits) {
  auto file = MappedFile::open(path);
  if (!file.ok()) return file.status();
  const std::span<const uint8_t> bytes = (*file)->bytes();
  auto family = load_family_package(bytes, *file, options, limits);
  if (!family.ok()) return family.status().with_context("family package " + path);
  return family;
}

bool is_family_package_file(const std::string& path) {
  if (!is_package_file(path)) return false;
  auto file = MappedFile::open(path);
  if (!file.ok()) return false;
  // Checksum skipped: this only tells the kind; loading checks everything.
  PackageLoadOptions options;
  options.verify_checksum = false;
  auto sections = read_package_sections((*file)->bytes(), *file, options);
  return sections.ok() && sections->manifest->has_family();
}

}  // namespace sod2::rt
