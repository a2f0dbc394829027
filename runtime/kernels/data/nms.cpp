// NonMaxSuppression, following ONNX's reference (itself a port of ONNX Runtime's kernel): per
// batch and class, boxes above the score threshold are taken by descending score (ties: lower box
// index first) and kept unless their IoU with a box already kept for that class exceeds the
// threshold. Selections are listed by batch, then class, then selection order. The output size
// depends on the values, so selections go to scratch first (sized from the inputs).
#include <algorithm>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

struct Candidate {
  float score;
  int64_t box;
};

// A box as min/max corners, decoded the way the reference does for each format.
struct Corners {
  float x_min, x_max, y_min, y_max;
};

Corners decode(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[0] - hw, b[0] + hw, b[1] - hh, b[1] + hh};
  }
  // [y1, x1, y2, x2], any diagonal pair of corners
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

bool suppresses(const float* a, const float* b, bool center_point, float iou_threshold) {
  const Corners p = decode(a, center_point), q = decode(b, center_point);
  const float ix_min = std::max(p.x_min, q.x_min), ix_max = std::min(p.x_max, q.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(p.y_min, q.y_min), iy_max = std::min(p.y_max, q.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0) return false;
  const float area_p = (p.x_max - p.x_min) * (p.y_max - p.y_min);
  const float area_q = (q.x_max - q.x_min) * (q.y_max - q.y_min);
  const float uni = area_p + area_q - inter;
  if (area_p <= 0 || area_q <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

class NmsKernel final : public Kernel {
 public:
  explicit NmsKernel(bool center_point) : center_point_(center_point) {}

  Status run(KernelContext& ctx) override {
    const Tensor* boxes = ctx.input(0);
    const Tensor* scores = ctx.input(1);
    if (!boxes || !scores)
      return invalid_argument("NonMaxSuppression: boxes and scores are required");
    if (boxes->dtype != DType::kFloat || scores->dtype != DType::kFloat) {
      return unsupported("NonMaxSuppression: boxes and scores must be float");
    }
    const Shape& bs = boxes->shape;
    const Shape& ss = scores->shape;
    if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
      return invalid_argument("NonMaxSuppression: boxes " + bs.to_string() + " and scores " +
                              ss.to_string() + " must be [B, N, 4] and [B, C, N]");
    }
    int64_t max_per_class = 0;
    float iou_threshold = 0;
    bool has_score_threshold = false;
    float score_threshold = 0;
    // An omitted or empty optional input means its default.
    if (const Tensor* t = ctx.input(2); t && t->numel() > 0) {
      SOD2_ASSIGN_OR_RETURN(max_per_class,
                            read_scalar_int(*t, "NonMaxSuppression", "max_output_boxes_per_class"));
      max_per_class = std::max<int64_t>(max_per_class, 0);
    }
    if (const Tensor* t = ctx.input(3); t && t->numel() > 0) {
      SOD2_ASSIGN_OR_RETURN(double v, read_scalar_double(*t, "NonMaxSuppression", "iou_threshold"));
      iou_threshold = static_cast<float>(v);
    }
    if (const Tensor* t = ctx.input(4); t && t->numel() > 0) {
      SOD2_ASSIGN_OR_RETURN(double v,
                            read_scalar_double(*t, "NonMaxSuppression", "score_threshold"));
      score_threshold = static_cast<float>(v);
      has_score_threshold = true;
    }

    const int64_t num_batches = bs[0], num_boxes = bs[1], num_classes = ss[1];
    const int64_t per_class = std::min(max_per_class, num_boxes);
    const int64_t max_total = num_batches * num_classes * per_class;
    // Scratch: candidates and this class's kept boxes (num_boxes each), then every selection.
    const size_t cand_bytes = static_cast<size_t>(num_boxes) * sizeof(Candidate);
    const size_t kept_bytes = static_cast<size_t>(per_class) * sizeof(int64_t);
    const size_t sel_bytes = static_cast<size_t>(max_total) * 3 * sizeof(int64_t);
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(cand_bytes + kept_bytes + sel_bytes + 16));
    auto* candidates = static_cast<Candidate*>(scratch);
    auto* kept = reinterpret_cast<int64_t*>(static_cast<uint8_t*>(scratch) + cand_bytes);
    auto* selected = kept + per_class;
    int64_t num_selected = 0;

    const float* box_data = boxes->as<const float>();
    const float* score_data = scores->as<const float>();
    for (int64_t b = 0; b < num_batches && per_class > 0; ++b) {
      const float* batch_boxes = box_data + b * num_boxes * 4;
      for (int64_t c = 0; c < num_classes; ++c) {
        const float* class_scores = score_data + (b * num_classes + c) * num_boxes;
        int64_t n = 0;
        for (int64_t i = 0; i < num_boxes; ++i) {
          if (!has_score_threshold || class_scores[i] > score_threshold) {
            candidates[n++] = {class_scores[i], i};
          }
        }
        std::sort(candidates, candidates + n, [](const Candidate& x, const Candidate& y) {
          return x.score > y.score || (x.score == y.score && x.box < y.box);
        });
        int64_t num_kept = 0;
        for (int64_t i = 0; i < n && num_kept < per_class; ++i) {
          const float* box = batch_boxes + candidates[i].box * 4;
          bool keep = true;
          for (int64_t j = 0; j < num_kept && keep; ++j) {
            keep = !suppresses(box, batch_boxes + kept[j] * 4, center_point_, iou_threshold);
          }
          if (!keep) continue;
          kept[num_kept++] = candidates[i].box;
          int64_t* row = selected + num_selected++ * 3;
          row[0] = b;
          row[1] = c;
          row[2] = candidates[i].box;
        }
      }
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kInt64, Shape{num_selected, 3}));
    std::copy_n(selected, num_selected * 3, out->as<int64_t>());
    return Status::ok_status();
  }

 private:
  bool center_point_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_non_max_suppression(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t center, node.attrs.get_int("center_point_box", 0));
  if (center != 0 && center != 1) {
    return invalid_model("NonMaxSuppression: center_point_box must be 0 or 1, got " +
                         std::to_string(center));
  }
  return make_kernel<NmsKernel>(center == 1);
}

}  // namespace sod2::rt
