// verbs_dead_stripe: a rank dies holding a NIC stripe lock (rma/atomic_acc:
// the lock word of an accumulate's read-combine-write at the target).
//
//   mpiexec -n 2 verbs_dead_stripe
//
// Rank 1 takes the stripe lock that guards the first bytes of rank 0's
// window exactly as an accumulate does (a NIC compare-and-swap of its rank
// + 1 into the word), tells rank 0, and vanishes (_exit without finalize,
// which the launcher does not treat as a failure: only rank 0's channel can
// notice). Rank 0's accumulate of a 1-byte element on that stripe must then
// fail with MPI_ERR_PROC_FAILED naming the target rank, the window and the
// dead holder, instead of spinning for ever. Run under a timeout
// (tests/verbs/CMakeLists.txt), over the software device.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "adi3/device.hpp"
#include "adi3/process.hpp"
#include "rma/native.hpp"
#include "rma/native_sync.hpp"
#include "rma/window.hpp"
#include "rma/window_state.hpp"

// The window cannot be freed with a rank gone (free is collective): kept
// reachable here, as the job ends, so LeakSanitizer does not count it.
adi3::Window* g_win = nullptr;

int main() {
  auto dev = adi3::init_process();
  adi3::Device& d = *dev;
  if (d.size() != 2) {
    std::fprintf(stderr, "verbs_dead_stripe needs 2 ranks\n");
    return 2;
  }
  void* base = nullptr;
  adi3::Window* win = nullptr;
  if (int e = adi3::Window::allocate(d, 64, 1, {}, d.world(), &base, &win)) {
    std::fprintf(stderr, "rank %d: Win_allocate: %s\n", d.rank(), d.errors().message(e).c_str());
    return 1;
  }
  g_win = win;
  adi3::rma::WindowState& st = win->state();
  if (!st.native_usable || !st.native || !st.native->nic) {
    std::fprintf(stderr, "rank %d: not a NIC window (run over ADI3_CHANNEL=verbs)\n", d.rank());
    return 1;
  }
  d.barrier();
  const auto* byte = adi3::Datatype::byte();
  char token = 1;
  if (d.rank() == 1) {
    // Stripe 0 covers the first kNicGranule bytes of rank 0's window.
    adi3::rma::NativePeer& p = st.native->peers[0];
    adi3::OneSided& os = st.native->os;
    uint64_t old = 0;
    if (os.compare_swap(*p.ctl_r, offsetof(adi3::rma::Control, stripe), 0, 2, &old, 8) != 0 || os.flush(0) != 0 ||
        old != 0) {
      std::fprintf(stderr, "rank 1: could not take the stripe lock (old %llu)\n", static_cast<unsigned long long>(old));
      return 1;
    }
    d.send(&token, 1, byte, 0, 5, d.world());
    std::printf("HOLDER_GONE\n");
    std::fflush(stdout);
    _exit(0);
  }
  d.recv(&token, 1, byte, 1, 5, d.world(), nullptr);
  const int8_t one = 1;
  const adi3::coll::Op sum(adi3::coll::OpKind::Sum);
  const auto* i8 = adi3::Datatype::builtin(adi3::Builtin::kInt8);
  int e = win->lock(adi3::LockType::Shared, 0, 0);  // rank 0 only: rank 1 is gone
  if (!e) e = win->accumulate(&one, 1, i8, 0, 3, 1, i8, sum);
  if (!e) e = win->flush(0);
  if (!e) {
    std::printf("ACC_SUCCEEDED: the accumulate took a lock held by a dead rank\n");
    return 1;
  }
  // The message starts with the error class's name.
  std::printf("ACC_FAILED: %s\n", d.errors().message(e).c_str());
  std::fflush(stdout);
  return 0;  // the Device ends without finalize (a rank is gone)
}
