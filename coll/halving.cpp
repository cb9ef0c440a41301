// Rabenseifner's building blocks (reduce and allreduce for long vectors):
// folding a non-power-of-two rank count, recursive-halving reduce-scatter,
// and walking the halving steps back as an allgather or a gather.
#include "coll/algorithms.hpp"

namespace adi3::coll::detail {

Fold::Fold(int rank, int p) {
  pof2 = pof2_floor(p);
  rem = p - pof2;
  if (rank < 2 * rem) {
    newrank = rank % 2 ? rank / 2 : -1;
  } else {
    newrank = rank - rem;
  }
}

void fold_in(Schedule& s, const Reducer& r, const Fold& f, std::byte* acc, std::byte* tmp, std::size_t n) {
  int me = s.rank();
  if (me >= 2 * f.rem) return;
  if (f.newrank < 0) {
    r.send(s, acc, 0, n, me + 1);
  } else {
    r.recv(s, tmp, 0, n, me - 1);
    s.fence();
    r.combine(s, tmp, acc, 0, n);  // the lower rank's vector comes first
  }
  s.fence();
}

void fold_out(Schedule& s, const Reducer& r, const Fold& f, std::byte* acc, std::size_t n) {
  int me = s.rank();
  if (me >= 2 * f.rem) return;
  if (f.newrank < 0) {
    r.recv(s, acc, 0, n, me + 1);
  } else {
    r.send(s, acc, 0, n, me - 1);
  }
  s.fence();
}

std::vector<HalvingStep> halve(Schedule& s, const Reducer& r, const Fold& f, std::byte* acc, std::byte* tmp,
                               std::size_t n, const std::byte* src) {
  std::vector<HalvingStep> steps;
  if (f.newrank < 0) return steps;
  // Block b covers elements [first(b), first(b + 1)).
  auto first = [&](int b) {
    std::size_t q = n / static_cast<std::size_t>(f.pof2), x = n % static_cast<std::size_t>(f.pof2);
    auto ub = static_cast<std::size_t>(b);
    return ub * q + std::min(ub, x);
  };
  int lo = 0, hi = f.pof2;
  for (int mask = 1; mask < f.pof2; mask <<= 1) {
    int newdst = f.newrank ^ mask;
    int mid = lo + (hi - lo) / 2;
    // Partners share [lo, hi); the lower one keeps its lower half.
    int klo = f.newrank < newdst ? lo : mid, khi = f.newrank < newdst ? mid : hi;
    int glo = f.newrank < newdst ? mid : lo, ghi = f.newrank < newdst ? hi : mid;
    HalvingStep st{f.real(newdst), mask, first(klo), first(khi) - first(klo), first(glo), first(ghi) - first(glo)};
    if (src && src != acc && mask == 1) {
      r.send(s, src, st.give_first, st.give_n, st.peer);
      r.recv(s, acc, st.keep_first, st.keep_n, st.peer);
      s.fence();
      r.combine(s, src, acc, st.keep_first, st.keep_n);
    } else {
      r.send(s, acc, st.give_first, st.give_n, st.peer);
      r.recv(s, tmp, st.keep_first, st.keep_n, st.peer);
      s.fence();
      r.combine(s, tmp, acc, st.keep_first, st.keep_n);
    }
    steps.push_back(st);
    lo = klo;
    hi = khi;
  }
  return steps;
}

void unhalve_allgather(Schedule& s, const Reducer& r, const std::vector<HalvingStep>& steps, std::byte* acc) {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    r.send(s, acc, it->keep_first, it->keep_n, it->peer);
    r.recv(s, acc, it->give_first, it->give_n, it->peer);
    s.fence();
  }
}

void unhalve_gather(Schedule& s, const Reducer& r, const Fold& f, const std::vector<HalvingStep>& steps, std::byte* acc,
                    int newroot) {
  // Walking back, the half on newroot's side of each bit collects the
  // other half's blocks; the other half is done after sending.
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if ((f.newrank & it->mask) == (newroot & it->mask)) {
      r.recv(s, acc, it->give_first, it->give_n, it->peer);
      s.fence();
    } else {
      r.send(s, acc, it->keep_first, it->keep_n, it->peer);
      s.fence();
      return;
    }
  }
}

}  // namespace adi3::coll::detail
