#include "reference.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <stdexcept>

#include "segment/type_create.hpp"
#include "segment/type_query.hpp"

namespace adi3::ref {

std::size_t c_size(Builtin b) {
  switch (b) {
    case Builtin::kChar:
    case Builtin::kSignedChar:
    case Builtin::kUnsignedChar:
    case Builtin::kByte:
    case Builtin::kPacked:
    case Builtin::kInt8:
    case Builtin::kUint8:
    case Builtin::kCBool:
    case Builtin::kCxxBool:
      return 1;
    case Builtin::kShort:
    case Builtin::kUnsignedShort:
    case Builtin::kInt16:
    case Builtin::kUint16:
      return 2;
    case Builtin::kInt:
    case Builtin::kUnsigned:
    case Builtin::kFloat:
    case Builtin::kInt32:
    case Builtin::kUint32:
    case Builtin::kWchar:
      return 4;
    case Builtin::kLong:
    case Builtin::kUnsignedLong:
    case Builtin::kLongLong:
    case Builtin::kUnsignedLongLong:
    case Builtin::kDouble:
    case Builtin::kInt64:
    case Builtin::kUint64:
    case Builtin::kAint:
    case Builtin::kOffset:
    case Builtin::kCount:
    case Builtin::kCComplex:
    case Builtin::kCFloatComplex:
    case Builtin::kCxxFloatComplex:
      return 8;
    case Builtin::kLongDouble:
    case Builtin::kCDoubleComplex:
    case Builtin::kCxxDoubleComplex:
      return 16;
    case Builtin::kCLongDoubleComplex:
    case Builtin::kCxxLongDoubleComplex:
      return 32;
    default:
      throw std::logic_error("c_size of a pair type");
  }
}

std::size_t TypeMap::size() const {
  std::size_t s = 0;
  for (const Entry& e : entries) s += e.size;
  return s;
}
std::ptrdiff_t TypeMap::true_lb() const {
  std::ptrdiff_t v = entries.empty() ? 0 : entries[0].off;
  for (const Entry& e : entries) v = std::min(v, e.off);
  return v;
}
std::ptrdiff_t TypeMap::true_ub() const {
  std::ptrdiff_t v = entries.empty() ? 0 : entries[0].off;
  for (const Entry& e : entries) v = std::max(v, e.off + static_cast<std::ptrdiff_t>(e.size));
  return v;
}

namespace {

// Accumulates copies of child maps into a parent map.
struct Builder {
  TypeMap m;
  bool any = false;
  std::ptrdiff_t s_lb = 0, s_ub = 0, lb = 0, ub = 0;

  void place(const TypeMap& c, std::ptrdiff_t shift) {
    for (const Entry& e : c.entries) m.entries.push_back({e.off + shift, e.type, e.size});
    m.align = std::max(m.align, c.align);
    if (!c.contributes) return;
    if (c.sticky_lb) s_lb = m.sticky_lb ? std::min(s_lb, c.lb + shift) : c.lb + shift, m.sticky_lb = true;
    if (c.sticky_ub) s_ub = m.sticky_ub ? std::max(s_ub, c.ub + shift) : c.ub + shift, m.sticky_ub = true;
    lb = any ? std::min(lb, c.lb + shift) : c.lb + shift;
    ub = any ? std::max(ub, c.ub + shift) : c.ub + shift;
    any = true;
  }
  TypeMap done(bool struct_epsilon) {
    m.contributes = any;
    m.lb = m.sticky_lb ? s_lb : any ? lb : 0;
    m.ub = m.sticky_ub ? s_ub : any ? ub : 0;
    auto a = static_cast<std::ptrdiff_t>(m.align);
    if (struct_epsilon && !m.sticky_ub && any && (m.ub - m.lb) % a) m.ub += a - (m.ub - m.lb) % a;
    return m;
  }
};

std::size_t c_align(Builtin b) {
  switch (b) {
    case Builtin::kCComplex:
    case Builtin::kCFloatComplex:
    case Builtin::kCxxFloatComplex:
      return 4;
    case Builtin::kCDoubleComplex:
    case Builtin::kCxxDoubleComplex:
      return 8;
    case Builtin::kCLongDoubleComplex:
    case Builtin::kCxxLongDoubleComplex:
      return 16;
    default:
      return c_size(b);  // scalars are aligned to their size on x86-64
  }
}

TypeMap predefined(Builtin b) {
  TypeMap m;
  auto add = [&](Builtin t, std::ptrdiff_t off) { m.entries.push_back({off, t, c_size(t)}); };
  switch (b) {
    case Builtin::kFloatInt:
      add(Builtin::kFloat, 0), add(Builtin::kInt, 4), m.ub = 8, m.align = 4;
      break;
    case Builtin::kDoubleInt:
      add(Builtin::kDouble, 0), add(Builtin::kInt, 8), m.ub = 16, m.align = 8;
      break;
    case Builtin::kLongInt:
      add(Builtin::kLong, 0), add(Builtin::kInt, 8), m.ub = 16, m.align = 8;
      break;
    case Builtin::k2Int:
      add(Builtin::kInt, 0), add(Builtin::kInt, 4), m.ub = 8, m.align = 4;
      break;
    case Builtin::kShortInt:
      add(Builtin::kShort, 0), add(Builtin::kInt, 4), m.ub = 8, m.align = 4;
      break;
    case Builtin::kLongDoubleInt:
      add(Builtin::kLongDouble, 0), add(Builtin::kInt, 16), m.ub = 32, m.align = 16;
      break;
    default:
      add(b, 0);
      m.ub = static_cast<std::ptrdiff_t>(c_size(b));
      m.align = c_align(b);
  }
  m.contributes = true;
  return m;
}

// Global element indices (fastest dimension last in `dims` order) of an
// n-d box: calls f(linear index in the full array).
template <class F>
void for_each_index(const std::vector<std::vector<long>>& owned, const std::vector<long>& sizes, bool c_order, F f) {
  std::size_t n = sizes.size();
  std::vector<std::size_t> at(n, 0);
  for (const auto& o : owned) {
    if (o.empty()) return;
  }
  // Iterate with the fastest dimension innermost.
  auto dim = [&](std::size_t k) { return c_order ? n - 1 - k : k; };  // k-th fastest
  for (;;) {
    long lin = 0;
    for (std::size_t k = n; k-- > 0;) {
      std::size_t d = dim(k);
      lin = lin * sizes[d] + owned[d][at[d]];
    }
    f(lin);
    std::size_t k = 0;
    for (; k < n; ++k) {
      std::size_t d = dim(k);
      if (++at[d] < owned[d].size()) break;
      at[d] = 0;
    }
    if (k == n) return;
  }
}

TypeMap array_map(const TypeMap& c, const std::vector<std::vector<long>>& owned, const std::vector<long>& sizes,
                  bool c_order) {
  Builder b;
  std::ptrdiff_t ext = c.extent();
  for_each_index(owned, sizes, c_order, [&](long lin) {
    for (const Entry& e : c.entries) b.m.entries.push_back({e.off + lin * ext, e.type, e.size});
  });
  long total = 1;
  for (long s : sizes) total *= s;
  b.m.align = c.align;
  b.m.contributes = true;
  b.m.sticky_lb = b.m.sticky_ub = true;
  b.m.lb = 0;
  b.m.ub = total * ext;
  return b.m;
}

}  // namespace

TypeMap flatten(const Datatype* t) {
  Envelope env;
  if (type_get_envelope(t, &env) != ErrorClass::Success) throw std::logic_error("envelope");
  if (env.combiner == Combiner::kNamed) {
    Builtin b;
    if (!t->builtin_id(&b)) throw std::logic_error("named but not builtin");
    return predefined(b);
  }
  std::vector<int> is(static_cast<std::size_t>(env.num_integers));
  std::vector<std::ptrdiff_t> as(static_cast<std::size_t>(env.num_addresses));
  std::vector<const Datatype*> ts(static_cast<std::size_t>(env.num_datatypes));
  if (type_get_contents(t, env.num_integers, env.num_addresses, env.num_datatypes, is.data(), as.data(), ts.data()) !=
      ErrorClass::Success) {
    throw std::logic_error("contents");
  }
  std::vector<TypeMap> cs;
  for (const Datatype*& c : ts) {
    cs.push_back(flatten(c));
    if (!c->is_predefined()) (void)type_free(&c);
  }
  Builder b;
  const TypeMap& c = cs[0];
  std::ptrdiff_t ext = c.extent();
  auto blocks = [&](std::ptrdiff_t disp, long bl, const TypeMap& m) {
    for (long j = 0; j < bl; ++j) b.place(m, disp + j * m.extent());
  };
  switch (env.combiner) {
    case Combiner::kDup:
      return c;
    case Combiner::kContiguous:
      blocks(0, is[0], c);
      return b.done(false);
    case Combiner::kVector:
      for (long i = 0; i < is[0]; ++i) blocks(i * is[2] * ext, is[1], c);
      return b.done(false);
    case Combiner::kHvector:
      for (long i = 0; i < is[0]; ++i) blocks(i * as[0], is[1], c);
      return b.done(false);
    case Combiner::kIndexed:
      for (int i = 0; i < is[0]; ++i) blocks(is[1 + is[0] + i] * ext, is[1 + i], c);
      return b.done(false);
    case Combiner::kHindexed:
      for (int i = 0; i < is[0]; ++i) blocks(as[i], is[1 + i], c);
      return b.done(false);
    case Combiner::kIndexedBlock:
      for (int i = 0; i < is[0]; ++i) blocks(is[2 + i] * ext, is[1], c);
      return b.done(false);
    case Combiner::kHindexedBlock:
      for (int i = 0; i < is[0]; ++i) blocks(as[i], is[1], c);
      return b.done(false);
    case Combiner::kStruct:
      for (int i = 0; i < is[0]; ++i) blocks(as[i], is[1 + i], cs[i]);
      return b.done(true);
    case Combiner::kResized: {
      TypeMap m = c;
      m.lb = as[0];
      m.ub = as[0] + as[1];
      m.sticky_lb = m.sticky_ub = m.contributes = true;
      return m;
    }
    case Combiner::kSubarray: {
      int n = is[0];
      std::vector<std::vector<long>> owned(static_cast<std::size_t>(n));
      std::vector<long> sizes(static_cast<std::size_t>(n));
      for (int d = 0; d < n; ++d) {
        sizes[d] = is[1 + d];
        for (long i = 0; i < is[1 + n + d]; ++i) owned[d].push_back(is[1 + 2 * n + d] + i);
      }
      return array_map(c, owned, sizes, is[1 + 3 * n] == kOrderC);
    }
    case Combiner::kDarray: {
      int size = is[0], rank = is[1], n = is[2];
      const int* g = &is[3];
      const int* dist = &is[3 + n];
      const int* darg = &is[3 + 2 * n];
      const int* ps = &is[3 + 3 * n];
      bool c_order = is[3 + 4 * n] == kOrderC;
      (void)size;
      std::vector<long> coord(static_cast<std::size_t>(n)), sizes(g, g + n);
      for (int d = n - 1, r = rank; d >= 0; --d) coord[d] = r % ps[d], r /= ps[d];
      std::vector<std::vector<long>> owned(static_cast<std::size_t>(n));
      for (int d = 0; d < n; ++d) {
        for (long i = 0; i < g[d]; ++i) {
          bool mine;
          if (dist[d] == kDistributeNone) {
            mine = true;
          } else if (dist[d] == kDistributeBlock) {
            long bsz = darg[d] == kDistributeDfltDarg ? (g[d] + ps[d] - 1) / ps[d] : darg[d];
            mine = i / bsz == coord[d];
          } else {
            long bsz = darg[d] == kDistributeDfltDarg ? 1 : darg[d];
            mine = (i / bsz) % ps[d] == coord[d];
          }
          if (mine) owned[d].push_back(i);
        }
      }
      return array_map(c, owned, sizes, c_order);
    }
    case Combiner::kNamed:
      break;
  }
  throw std::logic_error("combiner");
}

std::vector<Entry> replicate(const TypeMap& m, std::size_t count) {
  std::vector<Entry> out;
  for (std::size_t k = 0; k < count; ++k) {
    for (const Entry& e : m.entries)
      out.push_back({e.off + static_cast<std::ptrdiff_t>(k) * m.extent(), e.type, e.size});
  }
  return out;
}

std::vector<unsigned char> pack(const std::vector<Entry>& es, const unsigned char* base) {
  std::vector<unsigned char> s;
  for (const Entry& e : es) s.insert(s.end(), base + e.off, base + e.off + e.size);
  return s;
}

namespace {

bool is_long_double(Builtin b) {
  return b == Builtin::kLongDouble || b == Builtin::kCLongDoubleComplex || b == Builtin::kCxxLongDoubleComplex;
}

std::size_t part_size(Builtin b) {
  switch (b) {
    case Builtin::kCComplex:
    case Builtin::kCFloatComplex:
    case Builtin::kCxxFloatComplex:
      return 4;
    case Builtin::kCDoubleComplex:
    case Builtin::kCxxDoubleComplex:
      return 8;
    case Builtin::kCLongDoubleComplex:
    case Builtin::kCxxLongDoubleComplex:
      return 16;
    default:
      return c_size(b);
  }
}

}  // namespace

std::vector<unsigned char> pack_external32(const std::vector<Entry>& es, const unsigned char* base) {
  std::vector<unsigned char> s;
  for (const Entry& e : es) {
    const unsigned char* p = base + e.off;
    if (is_long_double(e.type)) {
      for (std::size_t k = 0; k < e.size / 16; ++k) {
        long double v;
        std::memcpy(&v, p + 16 * k, sizeof v);
        __float128 q = static_cast<__float128>(v);
        unsigned char b[16];
        std::memcpy(b, &q, 16);
        for (int i = 15; i >= 0; --i) s.push_back(b[i]);
      }
      continue;
    }
    std::size_t w = part_size(e.type);
    // The table makes long and wchar_t narrower than in memory: their low bytes.
    std::size_t keep = e.type == Builtin::kLong || e.type == Builtin::kUnsignedLong ? 4
                       : e.type == Builtin::kWchar                                  ? 2
                                                                                    : w;
    for (std::size_t k = 0; k < e.size / w; ++k) {
      for (std::size_t i = keep; i-- > 0;) s.push_back(p[k * w + i]);
    }
  }
  return s;
}

void unpack(const std::vector<Entry>& es, const unsigned char* stream, unsigned char* base) {
  for (const Entry& e : es) {
    std::memcpy(base + e.off, stream, e.size);
    stream += e.size;
  }
}

long long elements(const std::vector<Entry>& es, std::size_t bytes) {
  long long n = 0;
  std::size_t pos = 0;
  for (const Entry& e : es) {
    if (pos == bytes) return n;
    if (pos + e.size > bytes) return -1;
    pos += e.size;
    ++n;
  }
  return pos == bytes ? n : -1;
}

bool disjoint(std::vector<Entry> es) {
  std::sort(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return a.off < b.off; });
  for (std::size_t i = 1; i < es.size(); ++i) {
    if (es[i - 1].off + static_cast<std::ptrdiff_t>(es[i - 1].size) > es[i].off) return false;
  }
  return true;
}

}  // namespace adi3::ref
