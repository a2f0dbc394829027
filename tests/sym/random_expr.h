// Random expression trees for property tests. A tree is built through the public constructors
// (so canonicalisation happens) and also evaluated directly, node by node, in 128-bit arithmetic
// with Python semantics: the reference every canonical form must agree with.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/sym/sym_expr.h"

namespace sod2::sym::testing {

struct RTree {
  enum Op { kConst, kSym, kAdd, kSub, kMul, kFloorDiv, kCeilDiv, kMod, kMin, kMax };
  Op op = kConst;
  int64_t value = 0;
  int sym = 0;
  std::shared_ptr<const RTree> a, b;
};

class RandomTrees {
 public:
  RandomTrees(uint64_t seed, std::vector<Symbol> symbols)
      : rng_(seed), symbols_(std::move(symbols)) {}

  std::mt19937_64& rng() { return rng_; }
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  std::shared_ptr<const RTree> tree(int depth) {
    auto t = std::make_shared<RTree>();
    if (depth == 0 || uniform(0, 9) < 2) {
      if (uniform(0, 9) < 4) {
        t->op = RTree::kConst;
        t->value = uniform(-6, 9);
      } else {
        t->op = RTree::kSym;
        t->sym = static_cast<int>(uniform(0, static_cast<int64_t>(symbols_.size()) - 1));
      }
      return t;
    }
    static constexpr RTree::Op kOps[] = {
        RTree::kAdd,     RTree::kAdd, RTree::kSub, RTree::kMul, RTree::kFloorDiv, RTree::kFloorDiv,
        RTree::kCeilDiv, RTree::kMod, RTree::kMod, RTree::kMin, RTree::kMax};
    t->op = kOps[uniform(0, std::size(kOps) - 1)];
    t->a = tree(depth - 1);
    const bool division =
        t->op == RTree::kFloorDiv || t->op == RTree::kCeilDiv || t->op == RTree::kMod;
    if (division && uniform(0, 9) < 7) {
      // Mostly constant divisors, the common case in shapes; 0 is rare but present.
      auto d = std::make_shared<RTree>();
      d->value = uniform(0, 20) == 0 ? 0 : (uniform(0, 4) == 0 ? -uniform(1, 6) : uniform(1, 12));
      t->b = d;
    } else {
      t->b = tree(depth - 1);
    }
    return t;
  }

  SymExpr build(const RTree& t) const {
    switch (t.op) {
      case RTree::kConst: return SymExpr(t.value);
      case RTree::kSym: return symbols_[static_cast<size_t>(t.sym)];
      case RTree::kAdd: return build(*t.a) + build(*t.b);
      case RTree::kSub: return build(*t.a) - build(*t.b);
      case RTree::kMul: return build(*t.a) * build(*t.b);
      case RTree::kFloorDiv: return floordiv(build(*t.a), build(*t.b));
      case RTree::kCeilDiv: return ceildiv(build(*t.a), build(*t.b));
      case RTree::kMod: return mod(build(*t.a), build(*t.b));
      case RTree::kMin: return min(build(*t.a), build(*t.b));
      case RTree::kMax: return max(build(*t.a), build(*t.b));
    }
    return SymExpr();
  }

  // Uncanonicalised text, for failure messages.
  std::string text(const RTree& t) const {
    static const char* kNames[] = {"",         "",        "+",   "-",   "*",
                                   "floordiv", "ceildiv", "mod", "min", "max"};
    switch (t.op) {
      case RTree::kConst: return "(" + std::to_string(t.value) + ")";
      case RTree::kSym: return symbols_[static_cast<size_t>(t.sym)].name();
      case RTree::kAdd:
      case RTree::kSub:
      case RTree::kMul: return "(" + text(*t.a) + kNames[t.op] + text(*t.b) + ")";
      default: return std::string(kNames[t.op]) + "(" + text(*t.a) + "," + text(*t.b) + ")";
    }
  }

  // nullopt when undefined (division by zero) or outside int64 at any node.
  static std::optional<int64_t> eval(const RTree& t, std::span<const int64_t> values) {
    using I = __int128;
    if (t.op == RTree::kConst) return t.value;
    if (t.op == RTree::kSym) return values[static_cast<size_t>(t.sym)];
    auto a = eval(*t.a, values);
    auto b = eval(*t.b, values);
    if (!a || !b) return std::nullopt;
    const I x = *a, y = *b;
    I r = 0;
    auto floor_div = [](I p, I q) {
      I d = p / q;
      if (p % q != 0 && ((p < 0) != (q < 0))) --d;
      return d;
    };
    switch (t.op) {
      case RTree::kAdd: r = x + y; break;
      case RTree::kSub: r = x - y; break;
      case RTree::kMul: r = x * y; break;
      case RTree::kFloorDiv:
        if (y == 0) return std::nullopt;
        r = floor_div(x, y);
        break;
      case RTree::kCeilDiv:
        if (y == 0) return std::nullopt;
        r = -floor_div(-x, y);
        break;
      case RTree::kMod:
        if (y == 0) return std::nullopt;
        r = x - y * floor_div(x, y);
        break;
      case RTree::kMin: r = x < y ? x : y; break;
      case RTree::kMax: r = x > y ? x : y; break;
      default: return std::nullopt;
    }
    if (r < INT64_MIN || r > INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(r);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<Symbol> symbols_;
};

}  // namespace sod2::sym::testing
