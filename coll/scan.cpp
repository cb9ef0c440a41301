// Scan and Exscan: recursive doubling (any rank count). Each rank keeps a
// partial result over the ranks of its current subcube and folds in what
// lower-ranked partners send, which keeps rank order for any op.
#include <utility>

#include "adi3/device.hpp"
#include "coll/algorithms.hpp"
#include "coll/copy.hpp"

namespace adi3::coll::detail {

int build_scan(Schedule& s, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
               bool exclusive) {
  Reducer made;
  if (int e = Reducer::make(s.device().errors(), op, type, count, &made)) return e;
  if (made.bytes() == 0) return 0;
  s.keep(type);
  const Reducer& r = s.own(std::move(made));
  int me = s.rank(), p = s.size();
  std::size_t n = r.elems();
  const void* input = in_place(sbuf) ? rbuf : sbuf;
  // partial: the op over my subcube so far; result: over the ranks below
  // me (exscan) or up to me (scan).
  std::byte* partial = r.copy_in(s, input);
  std::byte* result;
  bool have_result = !exclusive;  // exscan: nothing until a lower partner
  if (r.layout()) {
    result = static_cast<std::byte*>(rbuf);
    if (!exclusive && !in_place(sbuf)) s.local([&r, sbuf, rbuf, n] { r.copy_now(sbuf, rbuf, 0, n); });
  } else {
    result = exclusive ? r.temp(s, n) : r.copy_in(s, input);
  }
  std::byte* tmp = r.temp(s, n);
  for (int mask = 1; mask < p; mask <<= 1) {
    int dst = me ^ mask;
    if (dst >= p) continue;
    r.send(s, partial, 0, n, dst);
    r.recv(s, tmp, 0, n, dst);
    s.fence();
    if (dst < me) {
      r.combine(s, tmp, partial, 0, n);
      if (have_result) {
        r.combine(s, tmp, result, 0, n);
      } else {
        r.copy(s, tmp, result, 0, n);
        have_result = true;
      }
    } else if (r.commutative()) {
      r.combine(s, tmp, partial, 0, n);
    } else {
      r.combine(s, partial, tmp, 0, n);  // mine comes first
      std::swap(partial, tmp);
    }
  }
  if (have_result) r.copy_out(s, result, rbuf, 0, n);
  return 0;
}

}  // namespace adi3::coll::detail
