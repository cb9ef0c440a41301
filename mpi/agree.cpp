#include "mpi/agree.hpp"

#include <cstring>
#include <vector>

#include "mpi/api.hpp"

namespace adi3::mpi {

int allgather_bytes(Device& dev, const Comm& over, const void* mine, std::size_t bytes, void* all, int tag) {
  auto* out = static_cast<char*>(all);
  int p = over.size, me = over.rank;
  std::memcpy(out + static_cast<std::size_t>(me) * bytes, mine, bytes);
  int right = (me + 1) % p, left = (me + p - 1) % p;
  const Datatype* byte = Datatype::byte();
  for (int s = 0; s < p - 1; ++s) {
    int send_block = (me - s + p) % p, recv_block = (me - s - 1 + 2 * p) % p;
    if (int e =
            dev.sendrecv(out + static_cast<std::size_t>(send_block) * bytes, bytes, byte, right, tag,
                         out + static_cast<std::size_t>(recv_block) * bytes, bytes, byte, left, tag, over, nullptr)) {
      return e;
    }
  }
  return 0;
}

int agree_context(Runtime& rt, const Comm& over, int tag, uint32_t* index) {
  constexpr int W = ContextIds::kWords;
  const auto n = static_cast<std::size_t>(over.size);
  std::vector<uint32_t> masks(n * W);
  for (;;) {
    uint32_t mine[W];
    rt.contexts.snapshot(mine);
    if (int e = allgather_bytes(rt.dev(), over, mine, sizeof mine, masks.data(), tag)) return e;
    uint32_t agreed[W];
    for (int w = 0; w < W; ++w) {
      agreed[w] = ~0u;
      for (std::size_t r = 0; r < n; ++r) agreed[w] &= masks[r * W + static_cast<std::size_t>(w)];
    }
    int pick = rt.contexts.claim_lowest(agreed);
    // Without other threads every rank picks the lowest agreed index; with
    // them a concurrent creation may have taken it here: check, or retry.
    bool ok = true;
    if (rt.thread_level == MPI_THREAD_MULTIPLE) {
      std::vector<int> picks(n);
      if (int e = allgather_bytes(rt.dev(), over, &pick, sizeof pick, picks.data(), tag)) return e;
      for (int p : picks) ok = ok && p == picks[0];
    }
    if (ok && pick >= 0) {
      *index = static_cast<uint32_t>(pick);
      return 0;
    }
    if (pick >= 0) rt.contexts.release(pick);
    bool none = true;
    for (uint32_t w : agreed) none = none && w == 0;
    if (none) {
      return raise(ErrorClass::Other, "no context id is free at every member: too many communicators (%d in use here)",
                   rt.contexts.in_use());
    }
  }
}

}  // namespace adi3::mpi
