// The timeline's mapping between plan coordinates (x: execution step, y: arena byte offset) and
// pixels of its plot area, with zoom about a point and pan. Kept apart from the widget so that the
// arithmetic is tested without a display (STYLE.md 1). Pixel y grows downwards; offset 0 is at
// the bottom of the plot.
#pragma once

#include <cstdint>

namespace sod2::studio {

struct TimelineViewport {
  // The plot area in pixels.
  double width = 1;
  double height = 1;
  // The plan point at the bottom-left corner, and the scale.
  double step0 = 0;
  double offset0 = 0;
  double px_per_step = 1;
  double px_per_byte = 1;

  double x_of(double step) const { return (step - step0) * px_per_step; }
  double y_of(double offset) const { return height - (offset - offset0) * px_per_byte; }
  double step_at(double x) const { return step0 + x / px_per_step; }
  double offset_at(double y) const { return offset0 + (height - y) / px_per_byte; }

  // What the plot shows, in plan coordinates.
  double first_visible_step() const { return step0; }
  double last_visible_step() const { return step_at(width); }
  double lowest_visible_offset() const { return offset0; }
  double highest_visible_offset() const { return offset_at(0); }

  // Shows steps [0, num_steps) and bytes [0, max_bytes] (with a little headroom above, so the
  // arena line is not drawn on the border).
  void fit(int64_t num_steps, int64_t max_bytes);
  // Resizes the plot keeping the bottom-left point and the scale.
  void resize(double new_width, double new_height);
  // Multiplies the scales by the factors, keeping the plan point under pixel (x, y) in place.
  void zoom_at(double x, double y, double factor_x, double factor_y);
  // Moves the content by (dx, dy) pixels (dragging right shows earlier steps).
  void pan_pixels(double dx, double dy);
};

}  // namespace sod2::studio
