// Scan at opset 8: a leading batch axis on states and scan inputs, the optional sequence_lens
// input first, and `directions`. Each batch entry runs its own scan; scan outputs are zero past
// an entry's length.
#include <gtest/gtest.h>

#include "runtime/exec/session.h"
#include "test_programs.h"

namespace sod2::rt {
namespace {

using testing::node;
using testing::test_registry;
using testing::value;

// main: Scan-8(lens, s0 [2, 3], x [2, 4, 3]) -> (final [2, 3], ys [2, 4, 3]);
// body: (st, xi) -> (Inc(st), Double(xi)).
ProgramDesc scan8_program(bool with_lens, bool reverse) {
  ProgramDesc p;
  p.inputs = {{"lens", DType::kInt64, 1}, {"s0", DType::kFloat, 2}, {"x", DType::kFloat, 3}};
  GraphDesc main;
  main.values = {value("lens", ValueStorage::kGraphInput), value("s0", ValueStorage::kGraphInput),
                 value("x", ValueStorage::kGraphInput), value("final", ValueStorage::kHeap),
                 value("ys", ValueStorage::kHeap)};
  main.values[0].dtype = DType::kInt64;
  main.inputs = {0, 1, 2};
  main.outputs = {3, 4};
  NodeDesc scan = node("Scan", {with_lens ? 0 : -1, 1, 2}, {3, 4});
  scan.info.opset = 8;
  AttrValue m;
  m.kind = AttrValue::Kind::kInt;
  m.i = 1;
  scan.info.attrs.set("num_scan_inputs", m);
  if (reverse) {
    AttrValue d;
    d.kind = AttrValue::Kind::kInts;
    d.ints = {1};
    scan.info.attrs.set("directions", d);
  }
  scan.subgraphs = {1};
  main.nodes = {scan};
  GraphDesc body;
  body.name = "body";
  body.values = {value("st", ValueStorage::kGraphInput), value("xi", ValueStorage::kGraphInput),
                 value("st2", ValueStorage::kHeap), value("yi", ValueStorage::kHeap)};
  body.inputs = {0, 1};
  body.outputs = {2, 3};
  body.nodes = {node("Inc", {0}, {2}), node("Double", {1}, {3})};
  p.graphs = {main, body};
  return p;
}

struct Scan8Run {
  std::vector<float> final_state, ys;
  Shape final_shape, ys_shape;
};

Expected<Scan8Run> run_scan8(bool with_lens, bool reverse, std::vector<int64_t> lens_v) {
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Session> s,
                        Session::create(scan8_program(with_lens, reverse), test_registry(), {1}));
  HostTensor lens(DType::kInt64, Shape{static_cast<int64_t>(lens_v.size())});
  for (size_t i = 0; i < lens_v.size(); ++i) lens.data<int64_t>()[i] = lens_v[i];
  HostTensor s0(DType::kFloat, Shape{2, 3});
  for (int i = 0; i < 6; ++i) s0.data<float>()[i] = static_cast<float>(10 * i);
  HostTensor x(DType::kFloat, Shape{2, 4, 3});
  for (int i = 0; i < 24; ++i) x.data<float>()[i] = static_cast<float>(i);
  const Tensor in[] = {lens.view(), s0.view(), x.view()};
  SOD2_ASSIGN_OR_RETURN(std::span<const Tensor> out, s->run(in));
  Scan8Run r;
  r.final_shape = out[0].shape;
  r.ys_shape = out[1].shape;
  r.final_state.assign(out[0].as<float>(), out[0].as<float>() + out[0].numel());
  r.ys.assign(out[1].as<float>(), out[1].as<float>() + out[1].numel());
  return r;
}

TEST(Scan8, BatchedWithoutLengths) {
  auto r = run_scan8(false, false, {0, 0});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->final_shape, (Shape{2, 3}));
  EXPECT_EQ(r->ys_shape, (Shape{2, 4, 3}));
  // Four steps for both entries: s0 + 4; every row of x doubled.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r->final_state[i], 10.f * i + 4.f);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(r->ys[i], 2.f * i);
}

TEST(Scan8, SequenceLengthsAndReverseDirection) {
  auto r = run_scan8(true, true, {4, 2});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // Entry 0 runs 4 steps, entry 1 runs 2.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r->final_state[i], 10.f * i + 4.f);
  for (int i = 3; i < 6; ++i) EXPECT_EQ(r->final_state[i], 10.f * i + 2.f);
  // Reverse: step t of entry 0 reads row 3 - t; entry 1 reads rows 1, 0 and then stops.
  for (int t = 0; t < 4; ++t)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(r->ys[t * 3 + c], 2.f * ((3 - t) * 3 + c));
  for (int t = 0; t < 4; ++t)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(r->ys[12 + t * 3 + c], t < 2 ? 2.f * (12 + (1 - t) * 3 + c) : 0.f);
}

TEST(Scan8, RejectsLengthsBeyondTheSequence) {
  auto r = run_scan8(true, false, {5, 1});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("sequence_lens[0] = 5"), std::string::npos)
      << r.status().to_string();
}

// main: Scan-8(lens, x [batch, seq, ...]) -> ys; body: xi -> Double(xi). No state.
ProgramDesc scan8_stateless_program(bool with_lens) {
  ProgramDesc p;
  p.inputs = {{"lens", DType::kInt64, 1}, {"x", DType::kFloat, 3}};
  GraphDesc main;
  main.values = {value("lens", ValueStorage::kGraphInput), value("x", ValueStorage::kGraphInput),
                 value("ys", ValueStorage::kHeap)};
  main.values[0].dtype = DType::kInt64;
  main.inputs = {0, 1};
  main.outputs = {2};
  NodeDesc scan = node("Scan", {with_lens ? 0 : -1, 1}, {2});
  scan.info.opset = 8;
  AttrValue m;
  m.kind = AttrValue::Kind::kInt;
  m.i = 1;
  scan.info.attrs.set("num_scan_inputs", m);
  scan.subgraphs = {1};
  main.nodes = {scan};
  GraphDesc body;
  body.name = "body";
  body.values = {value("xi", ValueStorage::kGraphInput), value("yi", ValueStorage::kHeap)};
  body.inputs = {0};
  body.outputs = {1};
  body.nodes = {node("Double", {0}, {1})};
  p.graphs = {main, body};
  return p;
}

Status run_stateless(bool with_lens, const Shape& x_shape, std::vector<int64_t> lens_v,
                     int64_t max_loop_iterations = 0) {
  SessionOptions options{1};
  options.limits.max_loop_iterations = max_loop_iterations;
  SOD2_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> s,
      Session::create(scan8_stateless_program(with_lens), test_registry(), std::move(options)));
  HostTensor lens(DType::kInt64, Shape{static_cast<int64_t>(lens_v.size())});
  for (size_t i = 0; i < lens_v.size(); ++i) lens.data<int64_t>()[i] = lens_v[i];
  HostTensor x(DType::kFloat, x_shape);  // empty: any batch and seq cost nothing to hold
  const Tensor in[] = {lens.view(), x.view()};
  return s->run(in).status();
}

// Empty scan inputs may have any batch size: the per-entry lengths were sized by it (8 TB here)
// and the entries looped over before any limit applied. Entries now count as iterations.
TEST(Scan8, HugeBatchOfEmptyInputsIsRefused) {
  Status st = run_stateless(false, Shape{int64_t{1} << 40, 0, 3}, {});
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
}

// Likewise any sequence length: the scan output's batch * seq slots and its stacked
// [batch, seq, ...] result were sized by it unchecked (2^61 slots; a 2^63-byte zero output when
// sequence_lens stops every entry at once).
TEST(Scan8, HugeSequenceOfEmptyInputsIsRefused) {
  const Shape x{1, int64_t{1} << 61, 0};
  Status st = run_stateless(true, x, {1});
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
  st = run_stateless(true, x, {0});
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
  // A small empty run still works: [1, 2, 0] -> ys [1, 2, 0].
  EXPECT_TRUE(run_stateless(true, Shape{1, 2, 0}, {2}).ok());
}

// The iteration limit bounds the body runs of all entries together, not of each entry alone
// (10^7 entries of 10^7 steps each would otherwise pass it).
TEST(Scan8, IterationLimitCountsEveryEntrysSteps) {
  EXPECT_TRUE(run_stateless(false, Shape{2, 2, 0}, {}, 4).ok());
  Status st = run_stateless(false, Shape{2, 2, 0}, {}, 3);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
}

}  // namespace
}  // namespace sod2::rt
