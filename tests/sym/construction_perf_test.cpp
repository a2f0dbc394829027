// Construction speed on a propagation-like workload: a 10k-node chain of shape rules, each
// building a handful of dims from its predecessor's (the RDP hot path).
#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "core/sym/prover.h"
#include "core/sym/sym_expr.h"

namespace sod2::sym {
namespace {

TEST(ConstructionPerf, TenThousandNodeChain) {
  const SymExpr batch = symbol("perf_batch"), seq = symbol("perf_seq");
  SymExpr h = symbol("perf_h"), w = symbol("perf_w"), c = SymExpr(3);
  RangeMap ranges;
  ASSERT_TRUE(ranges.set(symbol("perf_h"), {32, 1024, 32}).ok());
  int proofs = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int node = 0; node < 10000; ++node) {
    switch (node % 5) {
      case 0: {  // Conv: (h + 2p - k) / s + 1, channels change
        const int k = 1 + 2 * (node % 3), s = 1 + node % 2;
        h = floordiv(h + 2 * (k / 2) - k, s) + 1;
        w = floordiv(w + 2 * (k / 2) - k, s) + 1;
        c = SymExpr(16 + node % 64);
        break;
      }
      case 1: {  // Reshape to (batch, seq, -1): the -1 is numel / known
        SymExpr numel = batch * seq * c * h * w;
        SymExpr inferred = floordiv(numel, batch * seq);
        c = inferred;
        h = SymExpr(1);
        w = SymExpr(1);
        break;
      }
      case 2: {  // Concat along channels, then a broadcast check
        c = c + c;
        proofs += prove_eq(c, 2 * c - c, ranges) == Proof::kTrue;
        break;
      }
      case 3:  // Pooling with ceil mode
        h = max(ceildiv(h, 2), 1);
        w = max(ceildiv(w, 2), 1);
        break;
      default:  // Slice to a bound
        h = min(h, 4096);
        w = min(w, 4096);
        break;
    }
    if (node % 1000 == 999) {  // keep expressions from growing without bound, as RDP would
      h = symbol("perf_h");
      w = symbol("perf_w");
      c = SymExpr(3);
    }
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("10k-node chain: %.1f ms, %d proofs, %zu interned nodes\n", ms, proofs,
              interned_node_count());
  EXPECT_EQ(proofs, 2000);
  // No timing assertion: speed targets live in `make bench` (rdp_bench), not in unit tests.
}

}  // namespace
}  // namespace sod2::sym
