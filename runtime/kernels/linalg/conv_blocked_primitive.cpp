#include "runtime/kernels/linalg/conv_blocked_primitive.h"

#if defined(SOD2_GEMM_ONEDNN)

#include <cstring>
#include <vector>

#include "runtime/kernels/library_call.h"
#include "runtime/kernels/linalg/gemm.h"

namespace sod2::rt::onednn_conv {
namespace {

dnnl_format_tag_t blocked_tag(int block) { return block == 16 ? dnnl_nChw16c : dnnl_nChw8c; }

}  // namespace

dnnl_engine_t cpu_engine() {
  static const dnnl_engine_t engine = [] {
    dnnl_engine_t e = nullptr;
    if (dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success) e = nullptr;
    return e;
  }();
  return engine;
}

dnnl_stream_t thread_stream() {
  struct Holder {
    dnnl_stream_t stream = nullptr;
    ~Holder() {
      if (stream) dnnl_stream_destroy(stream);
    }
  };
  thread_local Holder holder;
  if (!holder.stream &&
      dnnl_stream_create(&holder.stream, cpu_engine(), dnnl_stream_default_flags) != dnnl_success)
    holder.stream = nullptr;
  return holder.stream;
}

FusedTail fusable_tail(const EpilogueRun& e) {
  FusedTail t;
  if (e.empty() || (e.bias[0] && e.bias[1]) ||
      (e.activation != Activation::kNone && e.activation != Activation::kRelu))
    return t;
  t.bias = e.bias[0] || e.bias[1];
  t.residual = !e.residual ? 0 : e.residual_before_activation ? 1 : 2;
  t.relu = e.activation == Activation::kRelu;
  return t;
}

std::unique_ptr<Primitive> create_primitive(const PrimitiveKey& key) {
  // oneDNN sizes a primitive's scratchpad and its threading by the OpenMP threads at creation:
  // it runs on one of our pool's threads, alone.
  gemm_library_single_thread_here();
  auto p = std::make_unique<Primitive>();
  p->key = key;
  const Geometry& g = key.g;
  const dnnl_dims_t src_dims = {1, g.c, g.ih, g.iw};
  // Grouped weights are 5-D: [groups, m / groups, c / groups, kh, kw].
  const dnnl_dims_t w_dims = {g.m, g.c, g.kh, g.kw};
  const dnnl_dims_t gw_dims = {g.groups, g.m / g.groups, g.c / g.groups, g.kh, g.kw};
  const dnnl_dims_t dst_dims = {1, g.m, g.oh, g.ow};
  const dnnl_dims_t strides = {g.sh, g.sw}, dilates = {g.dh - 1, g.dw - 1};
  const dnnl_dims_t pad_l = {g.pt, g.pl}, pad_r = {g.pb, g.pr};
  dnnl_memory_desc_t w_any;
  if (dnnl_memory_desc_init_by_tag(&p->src, 4, src_dims, dnnl_f32,
                                   key.plain_src ? dnnl_nchw : blocked_tag(key.block)) !=
          dnnl_success ||
      (g.groups == 1
           ? dnnl_memory_desc_init_by_tag(&w_any, 4, w_dims, dnnl_f32, dnnl_format_tag_any)
           : dnnl_memory_desc_init_by_tag(&w_any, 5, gw_dims, dnnl_f32, dnnl_format_tag_any)) !=
          dnnl_success ||
      dnnl_memory_desc_init_by_tag(&p->dst, 4, dst_dims, dnnl_f32, blocked_tag(key.block)) !=
          dnnl_success)
    return p;
  const FusedTail& tail = key.tail;
  dnnl_memory_desc_t bias_md;
  const dnnl_dims_t bias_dims = {g.m};
  if (tail.bias &&
      dnnl_memory_desc_init_by_tag(&bias_md, 1, bias_dims, dnnl_f32, dnnl_x) != dnnl_success)
    return p;
  dnnl_convolution_desc_t conv;
  if (dnnl_dilated_convolution_forward_desc_init(
          &conv, dnnl_forward_inference,
          key.winograd ? dnnl_convolution_winograd : dnnl_convolution_direct, &p->src, &w_any,
          tail.bias ? &bias_md : nullptr, &p->dst, strides, dilates, pad_l, pad_r) != dnnl_success)
    return p;
  dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return p;
  // Each thread brings its own scratchpad, so one primitive can run on all threads at once.
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  bool attr_ok = true;
  if (tail.residual != 0 || tail.relu) {
    dnnl_post_ops_t ops = nullptr;
    attr_ok = dnnl_post_ops_create(&ops) == dnnl_success;
    if (attr_ok && tail.residual == 1)
      attr_ok = dnnl_post_ops_append_binary(ops, dnnl_binary_add, &p->dst) == dnnl_success;
    if (attr_ok && tail.relu)
      attr_ok = dnnl_post_ops_append_eltwise(ops, 1.f, dnnl_eltwise_relu, 0.f, 0.f) == dnnl_success;
    if (attr_ok && tail.residual == 2)
      attr_ok = dnnl_post_ops_append_binary(ops, dnnl_binary_add, &p->dst) == dnnl_success;
    attr_ok = attr_ok && dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
    if (ops) dnnl_post_ops_destroy(ops);
  }
  const dnnl_status_t made =
      attr_ok ? dnnl_primitive_desc_create(&p->desc, &conv, attr, cpu_engine(), nullptr)
              : dnnl_unimplemented;
  dnnl_primitive_attr_destroy(attr);
  if (made != dnnl_success) {
    p->desc = nullptr;
    return p;
  }
  // Only the JIT kernels are worth the reorders: the reference and GEMM-based implementations
  // are slower than the NCHW paths.
  const char* impl = nullptr;
  if (dnnl_primitive_desc_query(p->desc, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
      !impl || std::strncmp(impl, "ref", 3) == 0 || std::strstr(impl, "gemm") != nullptr)
    return p;
  // Of oneDNN's Winograd convs only F(2x2, 3x3): its F(4x4, 3x3) ran 1.3-1.5x faster still but
  // wants a scratchpad of 7-45 MB per thread whatever the image's size, and weights at 4x.
  if (key.winograd && std::strstr(impl, "wino_2x3") == nullptr) return p;
  p->weights = *dnnl_primitive_desc_query_md(p->desc, dnnl_query_weights_md, 0);
  p->scratchpad_bytes =
      dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(p->desc, dnnl_query_scratchpad_md, 0));
  if (dnnl_primitive_create(&p->prim, p->desc) != dnnl_success) {
    p->prim = nullptr;
    return p;
  }
  p->usable = true;
  return p;
}

Status run_reorder(const dnnl_memory_desc_t& from_md, const float* from,
                   const dnnl_memory_desc_t& to_md, float* to, OwnedPrimitive* reorder) {
  dnnl_engine_t eng = cpu_engine();
  if (!*reorder) {
    // The scratchpad is ours: oneDNN's own would stay allocated as long as any primitive lives
    // (a Winograd layout's transform space is alpha^2 * C * M floats: 4 MB for a 256 -> 256 conv).
    dnnl_primitive_attr_t attr = nullptr;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
      return internal_error("Conv: oneDNN could not create a reorder");
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_primitive_desc_t rd = nullptr;
    const dnnl_status_t described =
        dnnl_reorder_primitive_desc_create(&rd, &from_md, eng, &to_md, eng, attr);
    dnnl_primitive_attr_destroy(attr);
    if (described != dnnl_success)
      return internal_error("Conv: oneDNN has no reorder for the weights' layout");
    dnnl_primitive_t r = nullptr;
    const dnnl_status_t made = dnnl_primitive_create(&r, rd);
    dnnl_primitive_desc_destroy(rd);
    if (made != dnnl_success) return internal_error("Conv: oneDNN could not create a reorder");
    reorder->reset(r);
  }
  const_dnnl_primitive_desc_t rd = nullptr;
  dnnl_status_t st = dnnl_primitive_get_primitive_desc(reorder->get(), &rd);
  const dnnl_memory_desc_t* pad_md =
      st == dnnl_success ? dnnl_primitive_desc_query_md(rd, dnnl_query_scratchpad_md, 0) : nullptr;
  const size_t pad_bytes = pad_md ? dnnl_memory_desc_get_size(pad_md) : 0;
  std::vector<uint64_t> pad((pad_bytes + 7) / 8);
  dnnl_memory_t a = nullptr, b = nullptr, c = nullptr;
  if (st == dnnl_success) st = dnnl_memory_create(&a, &from_md, eng, const_cast<float*>(from));
  if (st == dnnl_success) st = dnnl_memory_create(&b, &to_md, eng, to);
  if (st == dnnl_success && pad_bytes > 0) st = dnnl_memory_create(&c, pad_md, eng, pad.data());
  if (st == dnnl_success) {
    const dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}, {DNNL_ARG_SCRATCHPAD, c}};
    LibraryCall marked;
    st = dnnl_primitive_execute(reorder->get(), thread_stream(), c ? 3 : 2, args);
    if (st == dnnl_success) st = dnnl_stream_wait(thread_stream());
  }
  for (dnnl_memory_t m : {a, b, c})
    if (m) dnnl_memory_destroy(m);
  return st == dnnl_success ? Status::ok_status()
                            : internal_error("Conv: oneDNN failed to reorder the weights");
}

}  // namespace sod2::rt::onednn_conv

#endif
