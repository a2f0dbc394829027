#include "runtime/program/plan_layout.h"

#include <algorithm>

namespace sod2::plan {
namespace {

std::string name_of(std::span<const std::string> names, size_t i) {
  return i < names.size() ? "'" + names[i] + "'" : "tensor #" + std::to_string(i);
}

std::string describe(const PlacedTensor& t) {
  return "[" + std::to_string(t.offset) + ", " + std::to_string(t.offset + t.size) + ") at steps " +
         std::to_string(t.life.first_step) + ".." + std::to_string(t.life.last_step);
}

}  // namespace

Status LayoutVerifier::verify(std::span<const PlacedTensor> tensors, int64_t arena_bytes,
                              std::span<const std::string> names, int64_t alignment) {
  if (arena_bytes < 0) return internal_error("negative arena size " + std::to_string(arena_bytes));
  if (tensors.size() > UINT32_MAX) return internal_error("too many tensors in one plan");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PlacedTensor& t = tensors[i];
    if (t.size < 0 || t.offset < 0 || t.offset % alignment != 0) {
      return internal_error(name_of(names, i) + " has size " + std::to_string(t.size) +
                            " at offset " + std::to_string(t.offset) +
                            " (offsets must be non-negative multiples of " +
                            std::to_string(alignment) + ")");
    }
    // Written as a subtraction: offset + size may overflow for hostile values.
    if (t.offset > arena_bytes - t.size) {
      return internal_error(name_of(names, i) + " " + describe(t) + " ends past the arena of " +
                            std::to_string(arena_bytes) + " bytes");
    }
    if (t.life.first_step > t.life.last_step) {
      return internal_error(name_of(names, i) + " has an empty lifetime");
    }
  }
  // Sweep by offset: a tensor can only collide with tensors that start before it ends, so each
  // is compared with the still-open ones (those whose bytes reach past its start).
  // Empty tensors hold no bytes: only the others are sorted.
  by_offset_.clear();
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].size > 0) by_offset_.push_back(static_cast<uint32_t>(i));
  std::sort(by_offset_.begin(), by_offset_.end(), [&](uint32_t a, uint32_t b) {
    return tensors[a].offset != tensors[b].offset ? tensors[a].offset < tensors[b].offset : a < b;
  });
  open_.clear();
  open_.reserve(tensors.size());
  for (uint32_t i : by_offset_) {
    const PlacedTensor& t = tensors[i];
    std::erase_if(open_, [&](uint32_t o) { return tensors[o].end() <= t.offset; });
    for (uint32_t o : open_) {
      if (tensors[o].life.overlaps(t.life)) {
        return internal_error(name_of(names, o) + " " + describe(tensors[o]) + " and " +
                              name_of(names, i) + " " + describe(t) +
                              " share bytes while both are live");
      }
    }
    open_.push_back(i);
  }
  return Status::ok_status();
}

Status verify_layout(std::span<const PlacedTensor> tensors, int64_t arena_bytes,
                     std::span<const std::string> names) {
  LayoutVerifier v;
  return v.verify(tensors, arena_bytes, names);
}

}  // namespace sod2::plan
