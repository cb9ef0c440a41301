#include "random_types.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "segment/type_create.hpp"

namespace adi3::test {
namespace {

constexpr Builtin kBasics[] = {
    Builtin::kChar,           Builtin::kShort,         Builtin::kInt,        Builtin::kLong,
    Builtin::kFloat,          Builtin::kDouble,        Builtin::kLongDouble, Builtin::kDoubleInt,
    Builtin::k2Int,           Builtin::kShortInt,      Builtin::kFloatInt,   Builtin::kLongDoubleInt,
    Builtin::kCDoubleComplex, Builtin::kCFloatComplex, Builtin::kByte,       Builtin::kCBool,
    Builtin::kInt8,           Builtin::kUint16,        Builtin::kWchar,      Builtin::kUnsignedLongLong,
};

// Beyond these the reference walk gets slow under ASan.
constexpr std::uint64_t kMaxElements = 3000;
constexpr std::ptrdiff_t kMaxSpan = 1 << 18;

}  // namespace

TypeRef TypeGen::basic(std::string* what) {
  const Datatype* t = B(kBasics[rnd(0, static_cast<int>(std::size(kBasics)) - 1)]);
  *what += t->name();
  return TypeRef(const_cast<Datatype*>(t));
}

// Sticky bounds (a struct mixing resized and plain members) may leave data
// outside [lb, ub); copies of such a type would overlap, so children get a
// covering resized around them.
TypeRef TypeGen::child(int depth, std::string* what) {
  TypeRef t = make(depth, what);
  if (t->size() == 0 || (t->true_lb() >= t->lb() && t->true_ub() <= t->ub())) return t;
  std::ptrdiff_t lb = std::min(t->lb(), t->true_lb()), ub = std::max(t->ub(), t->true_ub());
  TypeRef r;
  EXPECT_EQ(type_resized(t.get(), lb, ub - lb, r.out()), ErrorClass::Success);
  *what = "cover(" + *what + ")";
  return r;
}

TypeRef TypeGen::make(int depth, std::string* what) {
  if (depth == 0 || rnd(0, 9) == 0) return basic(what);
  std::string mine;
  TypeRef t = derived(depth, &mine);
  if (!t.get() || t->basic_count() > kMaxElements || t->true_extent() > kMaxSpan || std::abs(t->extent()) > kMaxSpan) {
    return basic(what);
  }
  *what += mine;
  return t;
}

TypeRef TypeGen::derived(int depth, std::string* what) {
  std::string cw;
  TypeRef c = child(depth - 1, &cw);
  const Datatype* old = c.get();
  std::ptrdiff_t ext = old->extent();
  TypeRef t;
  ErrorClass e = ErrorClass::Success;
  auto sign = [&] { return rnd(0, 2) == 0 ? -1 : 1; };
  auto len = [&](int hi) { return rnd(0, 11) == 0 ? 0 : rnd(1, hi); };  // empty blocks now and then
  int kind = rnd(0, 11);
  switch (kind) {
    case 0: {
      int n = len(4);
      e = type_contiguous(n, old, t.out());
      *what = "contig(" + std::to_string(n) + ", " + cw + ")";
      break;
    }
    case 1: {
      int count = rnd(1, 4), bl = len(3), stride = sign() * (bl + rnd(0, 2));
      e = type_vector(count, bl, stride, old, t.out());
      *what =
          "vector(" + std::to_string(count) + "," + std::to_string(bl) + "," + std::to_string(stride) + ", " + cw + ")";
      break;
    }
    case 2: {
      int count = rnd(1, 4), bl = len(3);
      std::ptrdiff_t stride = sign() * (bl * ext + rnd(0, 7));
      e = type_hvector(count, bl, stride, old, t.out());
      *what = "hvector(" + std::to_string(count) + "," + std::to_string(bl) + "," + std::to_string(stride) + "B, " +
              cw + ")";
      break;
    }
    case 3:
    case 4:
    case 5:
    case 6: {
      // Blocks laid out in order with gaps, then shuffled; displacements
      // in elements (indexed) or bytes (hindexed).
      bool bytes = kind == 4 || kind == 6, uniform = kind >= 5;
      int count = rnd(1, 5), ubl = len(3);
      std::vector<int> bls(static_cast<std::size_t>(count));
      std::vector<std::ptrdiff_t> pos(static_cast<std::size_t>(count));
      std::ptrdiff_t at = -rnd(0, 3) * (bytes ? 5 : 1);
      for (int i = 0; i < count; ++i) {
        bls[i] = uniform ? ubl : len(3);
        pos[i] = at;
        at += bytes ? bls[i] * ext + rnd(0, 9) : bls[i] + rnd(0, 2);
      }
      std::vector<int> order(static_cast<std::size_t>(count));
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng_);
      std::vector<int> b2, d2;
      std::vector<std::ptrdiff_t> h2;
      for (int i : order) {
        b2.push_back(bls[i]);
        d2.push_back(static_cast<int>(pos[i]));
        h2.push_back(pos[i]);
      }
      if (kind == 3) e = type_indexed(count, b2.data(), d2.data(), old, t.out());
      if (kind == 4) e = type_hindexed(count, b2.data(), h2.data(), old, t.out());
      if (kind == 5) e = type_indexed_block(count, ubl, d2.data(), old, t.out());
      if (kind == 6) e = type_hindexed_block(count, ubl, h2.data(), old, t.out());
      static const char* names[] = {"indexed", "hindexed", "indexed_block", "hindexed_block"};
      *what = std::string(names[kind - 3]) + "(" + std::to_string(count) + " blocks, " + cw + ")";
      break;
    }
    case 7: {
      int count = rnd(1, 3);
      std::vector<TypeRef> kids;
      std::vector<const Datatype*> ts;
      std::vector<int> bls;
      std::vector<std::ptrdiff_t> ds;
      std::ptrdiff_t at = -rnd(0, 16);
      *what = "struct(";
      for (int i = 0; i < count; ++i) {
        std::string kw;
        kids.push_back(i == 0 ? std::move(c) : child(depth - 1, &kw));
        if (i == 0) kw = cw;
        const Datatype* k = kids.back().get();
        int bl = len(2);
        ts.push_back(k);
        bls.push_back(bl);
        ds.push_back(at - k->lb());
        at += bl * k->extent() + rnd(0, 5);
        *what += std::to_string(bl) + "x" + kw + "@" + std::to_string(ds.back()) + (i + 1 < count ? ", " : ")");
      }
      std::vector<int> order(static_cast<std::size_t>(count));
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng_);
      std::vector<const Datatype*> t2;
      std::vector<int> b2;
      std::vector<std::ptrdiff_t> d2;
      for (int i : order) t2.push_back(ts[i]), b2.push_back(bls[i]), d2.push_back(ds[i]);
      e = type_struct(count, b2.data(), d2.data(), t2.data(), t.out());
      break;
    }
    case 8: {
      // Room on both sides of the data: [lb, lb + extent) covers it.
      int below = rnd(0, 8);
      std::ptrdiff_t lb = old->true_lb() - below, extent = old->true_extent() + below + rnd(0, 8);
      e = type_resized(old, lb, extent, t.out());
      *what = "resized(" + std::to_string(lb) + "," + std::to_string(extent) + ", " + cw + ")";
      break;
    }
    case 9: {
      int n = rnd(1, 3);
      std::vector<int> sizes, subs, starts;
      for (int d = 0; d < n; ++d) {
        sizes.push_back(rnd(1, 4));
        subs.push_back(rnd(1, sizes.back()));
        starts.push_back(rnd(0, sizes.back() - subs.back()));
      }
      int order = rnd(0, 1) ? kOrderC : kOrderFortran;
      e = type_subarray(n, sizes.data(), subs.data(), starts.data(), order, old, t.out());
      *what = "subarray(" + std::to_string(n) + "d, " + cw + ")";
      break;
    }
    case 10: {
      int n = rnd(1, 2), size = 1;
      std::vector<int> g, dist, darg, ps;
      for (int d = 0; d < n; ++d) {
        g.push_back(rnd(1, 7));
        int k = rnd(0, 2);
        ps.push_back(k == 2 ? 1 : rnd(1, 3));
        size *= ps.back();
        if (k == 0) {
          dist.push_back(kDistributeBlock);
          int need = (g.back() + ps.back() - 1) / ps.back();
          darg.push_back(rnd(0, 1) ? kDistributeDfltDarg : need + rnd(0, 1));
        } else if (k == 1) {
          dist.push_back(kDistributeCyclic);
          darg.push_back(rnd(0, 1) ? kDistributeDfltDarg : rnd(1, 3));
        } else {
          dist.push_back(kDistributeNone);
          darg.push_back(kDistributeDfltDarg);
        }
      }
      int rank = rnd(0, size - 1), order = rnd(0, 1) ? kOrderC : kOrderFortran;
      e = type_darray(size, rank, n, g.data(), dist.data(), darg.data(), ps.data(), order, old, t.out());
      *what = "darray(" + std::to_string(n) + "d, rank " + std::to_string(rank) + ", " + cw + ")";
      break;
    }
    default:
      e = type_dup(old, t.out());
      *what = "dup(" + cw + ")";
      break;
  }
  if (e != ErrorClass::Success) {
    ADD_FAILURE() << "constructor failed: " << *what;
    return TypeRef();
  }
  return t;
}

}  // namespace adi3::test
