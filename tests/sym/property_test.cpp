// Randomised property tests with fixed seeds: canonicalisation preserves values, the shape
// program agrees with evaluate(), and simplify/bounds/prove_* are sound against evaluation.
#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include "core/sym/evaluate.h"
#include "core/sym/prover.h"
#include "core/sym/shape_compiler.h"
#include "tests/sym/random_expr.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::RandomTrees;

// SOD2_PROPERTY_SCALE multiplies the iteration counts and SOD2_PROPERTY_SEED shifts the seeds, for
// longer soak runs than CI's; defaults keep the suite to well under a second.
int scale() {
  const char* s = std::getenv("SOD2_PROPERTY_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}
uint64_t seed(uint64_t base) {
  const char* s = std::getenv("SOD2_PROPERTY_SEED");
  return base + (s ? std::strtoull(s, nullptr, 10) : 0);
}

std::vector<Symbol> test_symbols() { return {symbol("pa"), symbol("pb"), symbol("pc")}; }

Binding make_binding(const std::vector<Symbol>& syms, std::span<const int64_t> values) {
  Binding b;
  for (size_t i = 0; i < syms.size(); ++i) b[syms[i]] = values[i];
  return b;
}

TEST(Property, CanonicalFormsKeepTheValueAndRoundTrip) {
  const auto syms = test_symbols();
  RandomTrees gen(seed(0x5eed0001), syms);
  int compared = 0;
  for (int iter = 0; iter < 3000 * scale(); ++iter) {
    auto tree = gen.tree(static_cast<int>(gen.uniform(1, 4)));
    SymExpr e = gen.build(*tree);
    ASSERT_TRUE(verify(e).ok()) << gen.text(*tree) << " -> " << verify(e).to_string();
    auto back = parse(e.to_string());
    ASSERT_TRUE(back.ok()) << e.to_string() << ": " << back.status().to_string();
    ASSERT_EQ(*back, e) << e.to_string();
    for (int k = 0; k < 8; ++k) {
      std::vector<int64_t> values;
      for (size_t s = 0; s < syms.size(); ++s) values.push_back(gen.uniform(-20, 20));
      auto expected = RandomTrees::eval(*tree, values);
      if (!expected) continue;  // undefined input: the canonical form may be anything
      auto got = evaluate(e, make_binding(syms, values));
      ASSERT_TRUE(got.ok()) << gen.text(*tree) << " -> " << e.to_string() << ": "
                            << got.status().to_string();
      ASSERT_EQ(*got, *expected) << gen.text(*tree) << " -> " << e.to_string()
                                 << " at pa=" << values[0] << " pb=" << values[1]
                                 << " pc=" << values[2];
      ++compared;
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(Property, ShapeProgramAgreesWithEvaluate) {
  const auto syms = test_symbols();
  RandomTrees gen(seed(0x5eed0002), syms);
  int runs = 0, failures = 0;
  for (int batch = 0; batch < 200 * scale(); ++batch) {
    std::vector<SymExpr> exprs;
    for (int i = 0; i < 12; ++i) {
      SymExpr e = gen.build(*gen.tree(static_cast<int>(gen.uniform(1, 4))));
      if (!e.is_overflow()) exprs.push_back(e);
    }
    auto program = sym::compile_shape_program(exprs, syms);
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    std::vector<int64_t> out(exprs.size()), scratch(program->scratch_size());
    for (int k = 0; k < 20; ++k) {
      std::vector<int64_t> values;
      // Mostly small values; sometimes huge ones so both sides must report the same overflows.
      const int64_t span = gen.uniform(0, 4) == 0 ? (int64_t{1} << 40) : 30;
      for (size_t s = 0; s < syms.size(); ++s) values.push_back(gen.uniform(-span, span));
      Status st = program->run(values, out, scratch);
      bool all_ok = true;
      Binding b = make_binding(syms, values);
      for (size_t i = 0; i < exprs.size(); ++i) {
        auto v = evaluate(exprs[i], b);
        if (!v.ok()) {
          all_ok = false;
          continue;
        }
        if (st.ok()) {
          ASSERT_EQ(out[i], *v) << exprs[i].to_string();
        }
      }
      ASSERT_EQ(st.ok(), all_ok) << st.to_string();
      ++runs;
      failures += st.ok() ? 0 : 1;
    }
  }
  EXPECT_GT(runs - failures, 1000);
  EXPECT_GT(failures, 10);  // the error paths were exercised too
}

struct Counts {
  int decided = 0;
  int checked = 0;
};

// Whether `p` agrees with `holds` (the relation at one binding).
void check(Proof p, bool holds, const std::string& what, Counts* counts) {
  if (p == Proof::kUnknown) return;
  ++counts->checked;
  ASSERT_EQ(p == Proof::kTrue, holds) << what << " was " << proof_name(p);
}

TEST(Property, SimplifyBoundsAndProofsAreSound) {
  const auto syms = test_symbols();
  RandomTrees gen(seed(0x5eed0003), syms);
  Counts counts;
  for (int iter = 0; iter < 600 * scale(); ++iter) {
    RangeMap ranges;
    for (const Symbol& s : syms) {
      const int64_t lo = gen.uniform(-8, 16);
      const int64_t multiples[] = {1, 1, 2, 4, 8};
      SymbolRange r{lo, lo + gen.uniform(0, 40), multiples[gen.uniform(0, 4)]};
      if (!ranges.set(s, r).ok()) {
        ASSERT_TRUE(ranges.set(s, {lo, r.hi, 1}).ok());
      }
    }
    SymExpr x = gen.build(*gen.tree(static_cast<int>(gen.uniform(1, 3))));
    SymExpr y;
    switch (gen.uniform(0, 4)) {
      case 0: y = x + gen.uniform(-2, 2); break;
      case 1: y = simplify(x, ranges); break;
      case 2: y = min(x, gen.build(*gen.tree(1))); break;
      case 3: y = floordiv(x, 4) * 4; break;
      default: y = gen.build(*gen.tree(static_cast<int>(gen.uniform(0, 3)))); break;
    }
    const SymExpr sx = simplify(x, ranges);
    ASSERT_TRUE(verify(sx).ok());
    const Interval bx = bounds(x, ranges);
    const Proof eq = prove_eq(x, y, ranges), le = prove_le(x, y, ranges),
                lt = prove_lt(x, y, ranges), ge = prove_ge(x, y, ranges),
                gt = prove_gt(x, y, ranges), ne = prove_ne(x, y, ranges);
    for (Proof p : {eq, le, lt, ge, gt}) counts.decided += p != Proof::kUnknown;
    const std::string what = x.to_string() + " vs " + y.to_string();
    for (int k = 0; k < 30; ++k) {
      std::vector<int64_t> values;
      for (const Symbol& s : syms) {
        const SymbolRange r = ranges.get(s);
        values.push_back(gen.uniform(r.lo / r.multiple, r.hi / r.multiple) * r.multiple);
      }
      const Binding b = make_binding(syms, values);
      auto vx = evaluate(x, b);
      if (!vx.ok()) continue;
      EXPECT_TRUE(bx.contains(*vx))
          << x.to_string() << " = " << *vx << " outside [" << bx.lo << ", " << bx.hi << "]";
      auto vs = evaluate(sx, b);
      ASSERT_TRUE(vs.ok()) << x.to_string() << " simplified to " << sx.to_string();
      ASSERT_EQ(*vs, *vx) << x.to_string() << " simplified to " << sx.to_string();
      auto vy = evaluate(y, b);
      if (!vy.ok()) continue;
      check(eq, *vx == *vy, "eq " + what, &counts);
      check(ne, *vx != *vy, "ne " + what, &counts);
      check(le, *vx <= *vy, "le " + what, &counts);
      check(lt, *vx < *vy, "lt " + what, &counts);
      check(ge, *vx >= *vy, "ge " + what, &counts);
      check(gt, *vx > *vy, "gt " + what, &counts);
    }
  }
  EXPECT_GT(counts.decided, 800);  // not vacuous: the prover decided many relations
  EXPECT_GT(counts.checked, 10000);
}

}  // namespace
}  // namespace sod2::sym
