// Resize-18 antialias: a linear or cubic downsample by scale s < 1 stretches its filter by 1 / s,
// so each output averages every input under it instead of aliasing between 2 or 4 neighbours.
#pragma once

#include <cstdint>

namespace sod2::rt {

// Taps per output index on an axis downsampled by `scale` (0 < scale < 1).
int64_t antialias_tap_count(bool cubic, float scale);

// Fills `count` taps (index in [0, in), weight) for the sample at input coordinate x.
void antialias_taps(float x, int64_t in, float scale, bool cubic, float cubic_a,
                    bool exclude_outside, int64_t count, int64_t* idx, float* w);

}  // namespace sod2::rt
