// Datatype descriptions: envelope/contents out, constructors back in.
#include "rma/type_desc.hpp"

#include <cstring>

#include "segment/type_create.hpp"
#include "segment/type_query.hpp"

namespace adi3::rma {
namespace {

constexpr int kMaxDepth = 16;
constexpr int kMaxItems = 1 << 20;  // integers + addresses + types of one node
constexpr int kMaxNodes = 4096;     // constructor calls (derived types) in one description
constexpr uint8_t kNamed = 0, kDerived = 1;

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

bool too_long(const std::vector<uint8_t>& out, std::string* why) {
  if (out.size() <= kMaxDescBytes) return false;
  *why = "its description exceeds " + std::to_string(kMaxDescBytes >> 20) + " MiB";
  return true;
}

bool encode_at(const Datatype* t, std::vector<uint8_t>& out, std::string* why, int depth, int* nodes) {
  if (depth > kMaxDepth) {
    *why = "the datatype nests deeper than " + std::to_string(kMaxDepth) + " constructors";
    return false;
  }
  if (too_long(out, why)) return false;
  Builtin b;
  if (t->builtin_id(&b)) {
    out.push_back(kNamed);
    out.push_back(static_cast<uint8_t>(b));
    return true;
  }
  if (++*nodes > kMaxNodes) {
    *why = "the datatype is made of more than " + std::to_string(kMaxNodes) + " constructor calls";
    return false;
  }
  Envelope env;
  if (type_get_envelope(t, &env) != ErrorClass::Success) {
    *why = "the datatype has no envelope";
    return false;
  }
  std::vector<int> ints(static_cast<std::size_t>(env.num_integers));
  std::vector<std::ptrdiff_t> addrs(static_cast<std::size_t>(env.num_addresses));
  std::vector<const Datatype*> types(static_cast<std::size_t>(env.num_datatypes));
  if (type_get_contents(t, env.num_integers, env.num_addresses, env.num_datatypes, ints.data(), addrs.data(),
                        types.data()) != ErrorClass::Success) {
    *why = "the datatype's contents cannot be read";
    return false;
  }
  out.push_back(kDerived);
  put<int32_t>(out, static_cast<int32_t>(env.combiner));
  put<int32_t>(out, env.num_integers);
  put<int32_t>(out, env.num_addresses);
  put<int32_t>(out, env.num_datatypes);
  for (int v : ints) put<int32_t>(out, v);
  for (std::ptrdiff_t v : addrs) put<int64_t>(out, v);
  bool ok = true;
  for (const Datatype* c : types) {
    if (ok) ok = encode_at(c, out, why, depth + 1, nodes);
    if (!c->is_predefined()) c->release();
  }
  return ok;
}

class Reader {
 public:
  Reader(const void* p, std::size_t n) : p_(static_cast<const uint8_t*>(p)), n_(n) {}
  template <class T>
  bool get(T* v) {
    if (n_ - at_ < sizeof(T)) return false;
    std::memcpy(v, p_ + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  std::size_t left() const { return n_ - at_; }

 private:
  const uint8_t* p_;
  std::size_t n_, at_ = 0;
};

// Builds the type of one node from its contents (MPI's layout of each
// combiner's integers, addresses and types).
ErrorClass build(Combiner c, const std::vector<int>& ints, const std::vector<std::ptrdiff_t>& a,
                 const std::vector<const Datatype*>& t, Datatype** out) {
  auto ni = ints.size(), na = a.size(), nt = t.size();
  auto count_ok = [&](std::size_t want_i, std::size_t want_a, std::size_t want_t) {
    return ni == want_i && na == want_a && nt == want_t;
  };
  const int n = ni ? ints[0] : 0;
  const auto un = static_cast<std::size_t>(n < 0 ? 0 : n);
  switch (c) {
    case Combiner::kDup:
      if (!count_ok(0, 0, 1)) break;
      return type_dup(t[0], out);
    case Combiner::kContiguous:
      if (!count_ok(1, 0, 1)) break;
      return type_contiguous(n, t[0], out);
    case Combiner::kVector:
      if (!count_ok(3, 0, 1)) break;
      return type_vector(n, ints[1], ints[2], t[0], out);
    case Combiner::kHvector:
      if (!count_ok(2, 1, 1)) break;
      return type_hvector(n, ints[1], a[0], t[0], out);
    case Combiner::kIndexed:
      if (n < 0 || !count_ok(1 + 2 * un, 0, 1)) break;
      return type_indexed(n, ints.data() + 1, ints.data() + 1 + n, t[0], out);
    case Combiner::kHindexed:
      if (n < 0 || !count_ok(1 + un, un, 1)) break;
      return type_hindexed(n, ints.data() + 1, a.data(), t[0], out);
    case Combiner::kIndexedBlock:
      if (n < 0 || !count_ok(2 + un, 0, 1)) break;
      return type_indexed_block(n, ints[1], ints.data() + 2, t[0], out);
    case Combiner::kHindexedBlock:
      if (n < 0 || !count_ok(2, un, 1)) break;
      return type_hindexed_block(n, ints[1], a.data(), t[0], out);
    case Combiner::kStruct:
      if (n < 0 || !count_ok(1 + un, un, un)) break;
      return type_struct(n, ints.data() + 1, a.data(), t.data(), out);
    case Combiner::kSubarray: {
      if (n < 0 || !count_ok(2 + 3 * un, 0, 1)) break;
      const int* p = ints.data() + 1;
      return type_subarray(n, p, p + n, p + 2 * n, p[3 * n], t[0], out);
    }
    case Combiner::kDarray: {
      if (ni < 3) break;
      const int nd = ints[2];
      const auto und = static_cast<std::size_t>(nd < 0 ? 0 : nd);
      if (nd < 0 || !count_ok(4 + 4 * und, 0, 1)) break;
      const int* p = ints.data() + 3;
      return type_darray(ints[0], ints[1], nd, p, p + nd, p + 2 * nd, p + 3 * nd, p[4 * nd], t[0], out);
    }
    case Combiner::kResized:
      if (!count_ok(0, 2, 1)) break;
      return type_resized(t[0], a[0], a[1], out);
    default:
      break;
  }
  return ErrorClass::Type;
}

const Datatype* decode_at(Reader& in, std::string* why, int depth, int* nodes) {
  if (depth > kMaxDepth) {
    *why = "datatype description too deep or too large";
    return nullptr;
  }
  uint8_t tag;
  if (!in.get(&tag)) {
    *why = "datatype description truncated";
    return nullptr;
  }
  if (tag == kNamed) {
    uint8_t b;
    if (!in.get(&b) || b >= kNumBuiltins) {
      *why = "datatype description names no predefined type";
      return nullptr;
    }
    return Datatype::builtin(static_cast<Builtin>(b));
  }
  if (tag != kDerived) {
    *why = "datatype description has a bad node tag " + std::to_string(tag);
    return nullptr;
  }
  if (++*nodes > kMaxNodes) {  // (named types cost nothing to decode)
    *why = "datatype description too large";
    return nullptr;
  }
  int32_t comb, ni, na, nt;
  if (!in.get(&comb) || !in.get(&ni) || !in.get(&na) || !in.get(&nt) || ni < 0 || na < 0 || nt < 0 || ni > kMaxItems ||
      na > kMaxItems || nt > kMaxItems ||
      static_cast<std::size_t>(ni) * 4 + static_cast<std::size_t>(na) * 8 + static_cast<std::size_t>(nt) * 2 >
          in.left()) {
    *why = "datatype description has bad counts";
    return nullptr;
  }
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<std::ptrdiff_t> addrs(static_cast<std::size_t>(na));
  for (int& v : ints) {
    int32_t x = 0;
    in.get(&x);
    v = x;
  }
  for (std::ptrdiff_t& v : addrs) {
    int64_t x = 0;
    in.get(&x);
    v = static_cast<std::ptrdiff_t>(x);
  }
  // The parts' references are dropped however this returns, std::bad_alloc
  // (a commit or a deeper node out of memory) included.
  struct Parts {
    std::vector<const Datatype*> v;
    ~Parts() {
      for (const Datatype* k : v) k->release();
    }
  } kids;
  kids.v.reserve(static_cast<std::size_t>(nt));
  const Datatype* result = nullptr;
  bool ok = true;
  for (int i = 0; i < nt && ok; ++i) {
    const Datatype* k = decode_at(in, why, depth + 1, nodes);
    if (!k)
      ok = false;
    else
      kids.v.push_back(k);
  }
  if (ok) {
    Datatype* made = nullptr;
    const ErrorClass built = build(static_cast<Combiner>(comb), ints, addrs, kids.v, &made);
    if (built == ErrorClass::Success) {
      try {
        made->commit();  // compiles: allocates
      } catch (...) {
        made->release();
        throw;
      }
      result = made;
    } else if (built == ErrorClass::NoMem) {
      *why = kOutOfMemory;  // the description may be fine: this rank lacks memory
    } else {
      *why = "datatype description is not a valid constructor call (combiner " + std::to_string(comb) + ")";
    }
  }
  return result;
}

}  // namespace

bool encode_type(const Datatype* t, std::vector<uint8_t>& out, std::string* why) {
  int nodes = 0;
  return encode_at(t, out, why, 0, &nodes) && !too_long(out, why);
}

const Datatype* decode_type(const void* bytes, std::size_t n, std::string* why) {
  Reader in(bytes, n);
  int nodes = 0;
  const Datatype* t = decode_at(in, why, 0, &nodes);
  if (t && in.left()) {
    *why = "datatype description has trailing bytes";
    t->release();
    return nullptr;
  }
  return t;
}

}  // namespace adi3::rma
