#include "app/studio/plan/timeline_viewport.h"

#include <algorithm>

namespace sod2::studio {
namespace {

// Scales are kept inside these bounds so zooming far in or out cannot reach 0 or infinity.
constexpr double kMinScale = 1e-15;
constexpr double kMaxScale = 1e9;
constexpr double kHeadroom = 1.08;

}  // namespace

void TimelineViewport::fit(int64_t num_steps, int64_t max_bytes) {
  step0 = 0;
  offset0 = 0;
  px_per_step = width / static_cast<double>(std::max<int64_t>(num_steps, 1));
  px_per_byte = height / (kHeadroom * static_cast<double>(std::max<int64_t>(max_bytes, 1)));
}

void TimelineViewport::resize(double new_width, double new_height) {
  width = std::max(new_width, 1.0);
  height = std::max(new_height, 1.0);
}

void TimelineViewport::zoom_at(double x, double y, double factor_x, double factor_y) {
  const double step = step_at(x);
  const double offset = offset_at(y);
  px_per_step = std::clamp(px_per_step * factor_x, kMinScale, kMaxScale);
  px_per_byte = std::clamp(px_per_byte * factor_y, kMinScale, kMaxScale);
  step0 = step - x / px_per_step;
  offset0 = offset - (height - y) / px_per_byte;
}

void TimelineViewport::pan_pixels(double dx, double dy) {
  step0 -= dx / px_per_step;
  offset0 += dy / px_per_byte;
}

}  // namespace sod2::studio
