// The process-wide interning table and the structural order of canonical forms.
//
// Nodes are never freed. The table is bounded by the number of distinct expressions a process
// builds (a few per tensor dim of the graphs it analyses), and immortality means a handle is a
// plain pointer: copies cost nothing, there is no reference count to contend on between threads,
// and equality is one compare. The table itself is leaked for the same reason, so that handles
// held by other static objects stay valid during program exit.
#include <algorithm>
#include <array>
#include <mutex>
#include <unordered_set>

#include "core/sym/canonical_internal.h"

namespace sod2::sym {
namespace detail {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64's finaliser over a running xor: cheap, and deterministic across runs and
  // platforms (no pointer values), so the hash can also order or shard things reproducibly.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

uint64_t hash_name(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a: defined bytewise, unlike std::hash
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

struct Key {
  Kind kind;
  int64_t value;
  std::string_view name;
  std::span<const SymExpr> operands;
  std::span<const int64_t> coeffs;
  uint64_t hash;
};

bool same_contents(const Node* n, const Key& k) {
  if (n->kind != k.kind || n->value != k.value || n->name != k.name) return false;
  if (n->operands.size() != k.operands.size() || n->coeffs.size() != k.coeffs.size()) return false;
  // Operands are themselves interned, so pointer equality is structural equality.
  for (size_t i = 0; i < k.operands.size(); ++i) {
    if (n->operands[i].node() != k.operands[i].node()) return false;
  }
  return std::equal(k.coeffs.begin(), k.coeffs.end(), n->coeffs.begin());
}

struct NodeHash {
  using is_transparent = void;
  size_t operator()(const Node* n) const { return n->hash; }
  size_t operator()(const Key& k) const { return k.hash; }
};

struct NodeEq {
  using is_transparent = void;
  bool operator()(const Node* a, const Node* b) const { return a == b; }  // stored nodes are unique
  bool operator()(const Key& k, const Node* n) const { return same_contents(n, k); }
  bool operator()(const Node* n, const Key& k) const { return same_contents(n, k); }
};

constexpr int64_t kSmallMin = -64;
constexpr int64_t kSmallMax = 1024;

class Table {
 public:
  Table() {
    nodes_.reserve(1 << 12);
    for (int64_t v = kSmallMin; v <= kSmallMax; ++v) {
      small_[static_cast<size_t>(v - kSmallMin)] =
          intern_locked(make_key(Kind::kConst, v, {}, {}, {}));
    }
    overflow_ = intern_locked(make_key(Kind::kOverflow, 0, {}, {}, {}));
  }

  static Key make_key(Kind kind, int64_t value, std::string_view name,
                      std::span<const SymExpr> operands, std::span<const int64_t> coeffs) {
    return Key{kind,     value,  name,
               operands, coeffs, structural_hash(kind, value, name, operands, coeffs)};
  }

  const Node* intern(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return intern_locked(key);
  }

  // Small constants are the most frequent nodes (coefficients, divisors, literal dims); serving
  // them from an array skips the lock and the hash lookup.
  const Node* small_constant(int64_t v) const {
    if (v < kSmallMin || v > kSmallMax) return nullptr;
    return small_[static_cast<size_t>(v - kSmallMin)];
  }
  const Node* overflow() const { return overflow_; }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return nodes_.size();
  }

 private:
  const Node* intern_locked(const Key& key) {
    auto it = nodes_.find(key);
    if (it != nodes_.end()) return *it;
    uint32_t depth = 0;
    for (const SymExpr& op : key.operands) depth = std::max(depth, op.depth());
    auto* node = new Node{key.kind,
                          depth + 1,
                          key.hash,
                          key.value,
                          std::string(key.name),
                          std::vector<SymExpr>(key.operands.begin(), key.operands.end()),
                          std::vector<int64_t>(key.coeffs.begin(), key.coeffs.end())};
    nodes_.insert(node);
    return node;
  }

  std::mutex mu_;
  std::unordered_set<const Node*, NodeHash, NodeEq> nodes_;
  std::array<const Node*, static_cast<size_t>(kSmallMax - kSmallMin + 1)> small_{};
  const Node* overflow_ = nullptr;
};

Table& table() {
  static Table* t = new Table;  // intentionally leaked, see the file comment
  return *t;
}

}  // namespace

uint64_t structural_hash(Kind kind, int64_t value, std::string_view name,
                         std::span<const SymExpr> operands, std::span<const int64_t> coeffs) {
  uint64_t h = mix(static_cast<uint64_t>(kind) + 1, static_cast<uint64_t>(value));
  if (!name.empty()) h = mix(h, hash_name(name));
  for (const SymExpr& op : operands) h = mix(h, op.hash());
  for (int64_t c : coeffs) h = mix(h, static_cast<uint64_t>(c));
  return h;
}

SymExpr intern(Kind kind, int64_t value, std::string_view name, std::span<const SymExpr> operands,
               std::span<const int64_t> coeffs) {
  return SymExpr::from_node(table().intern(Table::make_key(kind, value, name, operands, coeffs)));
}

}  // namespace detail

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kSymbol: return "symbol";
    case Kind::kFloorDiv: return "floordiv";
    case Kind::kCeilDiv: return "ceildiv";
    case Kind::kMod: return "mod";
    case Kind::kMin: return "min";
    case Kind::kMax: return "max";
    case Kind::kProduct: return "product";
    case Kind::kSum: return "sum";
    case Kind::kConst: return "const";
    case Kind::kOverflow: return "overflow";
  }
  return "unknown";
}

SymExpr::SymExpr() : SymExpr(int64_t{0}) {}

SymExpr::SymExpr(int64_t value) {
  detail::Table& t = detail::table();
  node_ = t.small_constant(value);
  if (node_ == nullptr) node_ = detail::intern(Kind::kConst, value, {}, {}, {}).node();
}

SymExpr SymExpr::overflow() { return from_node(detail::table().overflow()); }

std::optional<Symbol> SymExpr::as_symbol() const {
  if (!is_symbol()) return std::nullopt;
  return Symbol::from_node(node_);
}

Symbol symbol(std::string_view name) {
  return Symbol::from_node(detail::intern(Kind::kSymbol, 0, name, {}, {}).node());
}

size_t interned_node_count() { return detail::table().size(); }

namespace {
template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}
}  // namespace

int compare(const SymExpr& a, const SymExpr& b) {
  if (a == b) return 0;
  if (a.kind() != b.kind()) return three_way(a.kind(), b.kind());
  switch (a.kind()) {
    case Kind::kConst: return three_way(a.constant_term(), b.constant_term());
    case Kind::kSymbol: {
      int c = a.symbol_name().compare(b.symbol_name());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default: break;
  }
  auto ao = a.operands(), bo = b.operands();
  for (size_t i = 0; i < std::min(ao.size(), bo.size()); ++i) {
    if (int c = compare(ao[i], bo[i]); c != 0) return c;
  }
  if (int c = three_way(ao.size(), bo.size()); c != 0) return c;
  auto ac = a.coefficients(), bc = b.coefficients();
  for (size_t i = 0; i < std::min(ac.size(), bc.size()); ++i) {
    if (int c = three_way(ac[i], bc[i]); c != 0) return c;
  }
  if (int c = three_way(ac.size(), bc.size()); c != 0) return c;
  return three_way(a.constant_term(), b.constant_term());
}

}  // namespace sod2::sym
