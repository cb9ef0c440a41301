// One-sided communication across two hosts (tests/tcp/hosts_test.sh, 2 x 2
// ranks): on one window, operations to same-host targets take the native
// path (shared memory) and those to the other host's ranks the emulation
// (packets over tcp), and accumulates stay exact while both kinds of
// origin hit one target at once. Checks, on every rank:
//  - a world window from allocate, fence epochs: puts (also with a vector
//    target type), gets, and int64 / double / int16 sum accumulates (the
//    three kinds of atomics: fetch-add, compare-and-swap loop, stripe lock)
//    from every rank into every rank; the counters of the paths taken
//    match the host layout exactly;
//  - the same window under lock_all: every lock goes through the target's
//    queue (one lock authority per target), granted at once by same-host
//    targets, whose operations then take the native path;
//  - a second spanning window, passive target: every rank accumulates into
//    rank 0 under shared locks and lock_all at once (same-host origins
//    natively, the others emulated): exact sums; every rank increments a
//    counter at rank 0 by get, flush, put under exclusive locks (rank 0
//    itself by load and store): no increment is lost, so the queue's lock
//    excludes native and emulated origins alike; the path counters match
//    the host layout;
//  - a window over this host's ranks only: native throughout, passive
//    target included, and it progresses without an agent;
//  - allocate_shared over the world fails with RMA_SHARED (the hosts
//    share no memory), over this host's ranks it works;
//  - a create window over this host's ranks: while its peer waits in a
//    blocking call, the one-sided part in job ranks says the peer polls
//    (attentive) and the route sends small operations as packets; a rank
//    of the other host is never attentive. With `hosts_rma wake` (run with
//    waits that sleep at once for long) only that window's fence epochs
//    run: the store that ends a fence wakes a same-host sleeper, so 10
//    epochs take well under the sleeps' timeouts.
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "adi3/device.hpp"
#include "adi3/error.hpp"
#include "adi3/process.hpp"
#include "coll/op.hpp"
#include "rma/native.hpp"
#include "rma/route.hpp"
#include "rma/window.hpp"
#include "rma/window_state.hpp"
#include "segment/type_create.hpp"

namespace {

using adi3::Datatype;
using adi3::Window;
using adi3::coll::Op;
using adi3::coll::OpKind;

constexpr int kIters = 300;  // accumulates per origin, target and kind

int failures = 0;
int me = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "rank %d: FAIL: %s\n", me, what.c_str());
  ++failures;
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

const Datatype* dt(adi3::Builtin b) { return Datatype::builtin(b); }

// The world window's layout per rank (bytes): n int64 put slots, then a
// vector target (n blocks of 1 int64, stride 2), then the accumulators.
struct Layout {
  int n;
  std::size_t puts() const { return 0; }
  std::size_t vec() const { return 8 * static_cast<std::size_t>(n); }
  std::size_t acc_i64() const { return vec() + 16 * static_cast<std::size_t>(n); }
  std::size_t acc_f64() const { return acc_i64() + 8; }
  std::size_t acc_i16() const { return acc_f64() + 8; }
  std::size_t fop() const { return acc_i64() + 64; }
  std::size_t bytes() const { return fop() + 8; }
};

void world_window(adi3::Device& dev, const adi3::NodeMap& map, int node) {
  const int n = dev.size();
  const Layout L{n};
  int same = 0;
  for (int p = 0; p < n; ++p) same += map.node_of[static_cast<std::size_t>(p)] == node;
  const int other = n - same;
  adi3::Comm comm = dev.world();
  comm.context = 0x6e00;
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, static_cast<std::ptrdiff_t>(L.bytes()), 1, {}, comm, &base, &win);
  if (e) return fail("allocate: " + dev.errors().message(e));
  char* mem = static_cast<char*>(base);
  adi3::rma::WindowState& st = win->state();
  check(st.native_usable, "the world window is not native at all (same-host targets should be)");
  check(st.native_usable && st.native->partial, "the world window does not know some ranks are on another host");
  for (int p = 0; p < n; ++p) {
    const bool near = map.node_of[static_cast<std::size_t>(p)] == node;
    if (adi3::rma::native::reaches(st, p) != near)
      fail("rank " + std::to_string(p) + (near ? " (this host) is not reached" : " (other host) is reached"));
  }
  const Datatype* i64 = dt(adi3::Builtin::kInt64);
  const Datatype* f64 = dt(adi3::Builtin::kDouble);
  const Datatype* i16 = dt(adi3::Builtin::kInt16);
  Datatype* vec = nullptr;
  if (adi3::type_vector(n, 1, 2, i64, &vec) != adi3::ErrorClass::Success) return fail("type_vector");
  vec->commit();
  const Op sum(OpKind::Sum);

  // Fence epoch: puts, vector puts, and the three accumulate kinds.
  if ((e = win->fence(0))) fail("fence: " + dev.errors().message(e));
  std::vector<int64_t> row(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) row[static_cast<std::size_t>(i)] = 1000 * me + i;
  const int64_t v = 100 * me + 1, one = 1;
  const double half = 0.5;
  const int16_t one16 = 1;
  uint64_t ops = 0;
  for (int t = 0; t < n; ++t) {
    const int s = (me + t) % n;  // everybody starts at a different target
    e = win->put(&v, 1, i64, s, static_cast<std::ptrdiff_t>(L.puts() + 8 * static_cast<std::size_t>(me)), 1, i64);
    check(e == 0, "put");
    ++ops;
  }
  // The vector target: rank 1 writes every other int64 at rank 0..n-1.
  if (me == 1) {
    for (int t = 0; t < n; ++t) {
      e = win->put(row.data(), n, i64, t, static_cast<std::ptrdiff_t>(L.vec()), 1, vec);
      check(e == 0, "vector put");
      ++ops;
    }
  }
  for (int k = 0; k < kIters; ++k) {
    for (int t = 0; t < n; ++t) {
      const int s = (me + t + k) % n;
      check(win->accumulate(&one, 1, i64, s, static_cast<std::ptrdiff_t>(L.acc_i64()), 1, i64, sum) == 0, "acc i64");
      check(win->accumulate(&half, 1, f64, s, static_cast<std::ptrdiff_t>(L.acc_f64()), 1, f64, sum) == 0, "acc f64");
      check(win->accumulate(&one16, 1, i16, s, static_cast<std::ptrdiff_t>(L.acc_i16()), 1, i16, sum) == 0, "acc i16");
      ops += 3;
    }
  }
  if ((e = win->fence(0))) fail("fence: " + dev.errors().message(e));
  // Counted per target kind: 1 put, (rank 1) 1 vector put, 3 * kIters accumulates each.
  const uint64_t per_target = 1 + (me == 1 ? 1 : 0) + 3 * kIters;
  check(ops == per_target * static_cast<uint64_t>(n), "ops counted");
  if (st.native_ops != per_target * static_cast<uint64_t>(same) ||
      st.emulated_ops != per_target * static_cast<uint64_t>(other)) {
    fail("fence epoch paths: native " + std::to_string(st.native_ops) + " emulated " + std::to_string(st.emulated_ops) +
         ", want " + std::to_string(per_target * same) + " and " + std::to_string(per_target * other));
  }
  for (int p = 0; p < n; ++p) {
    int64_t got;
    std::memcpy(&got, mem + L.puts() + 8 * static_cast<std::size_t>(p), 8);
    check(got == 100 * p + 1, "put slot " + std::to_string(p) + " holds " + std::to_string(got));
    std::memcpy(&got, mem + L.vec() + 16 * static_cast<std::size_t>(p), 8);
    check(got == 1000 + p, "vector slot " + std::to_string(p) + " holds " + std::to_string(got));
  }
  int64_t ai;
  double af;
  int16_t as;
  std::memcpy(&ai, mem + L.acc_i64(), 8);
  std::memcpy(&af, mem + L.acc_f64(), 8);
  std::memcpy(&as, mem + L.acc_i16(), 2);
  check(ai == int64_t{n} * kIters, "int64 sum is " + std::to_string(ai) + ", want " + std::to_string(n * kIters));
  check(af == 0.5 * n * kIters, "double sum is " + std::to_string(af));
  check(as == n * kIters, "int16 sum is " + std::to_string(as));

  // Gets and fetch_and_op in a fence epoch: reads back what the others wrote.
  const uint64_t nat0 = st.native_ops, emu0 = st.emulated_ops;
  std::vector<int64_t> back(static_cast<std::size_t>(n), -1), old(static_cast<std::size_t>(n), -1);
  for (int t = 0; t < n; ++t) {
    check(win->get(&back[static_cast<std::size_t>(t)], 1, i64, t,
                   static_cast<std::ptrdiff_t>(L.puts() + 8 * static_cast<std::size_t>(me)), 1, i64) == 0,
          "get");
    check(win->fetch_and_op(&one, &old[static_cast<std::size_t>(t)], i64, t, static_cast<std::ptrdiff_t>(L.fop()),
                            sum) == 0,
          "fetch_and_op");
  }
  if ((e = win->fence(0))) fail("fence: " + dev.errors().message(e));
  for (int t = 0; t < n; ++t) {
    check(back[static_cast<std::size_t>(t)] == 100 * me + 1, "get from " + std::to_string(t));
    check(old[static_cast<std::size_t>(t)] >= 0 && old[static_cast<std::size_t>(t)] < n, "fetch_and_op old value");
  }
  check(st.native_ops - nat0 == 2u * static_cast<uint64_t>(same) &&
            st.emulated_ops - emu0 == 2u * static_cast<uint64_t>(other),
        "get epoch paths");

  // Passive target on the mixed window: one lock authority, the target's
  // queue; same-host targets' memory moves natively once granted.
  const uint64_t nat1 = st.native_ops, emu1 = st.emulated_ops;
  check(!st.native->passive, "passive target is native on a window spanning hosts");
  if ((e = win->lock_all(0))) fail("lock_all: " + dev.errors().message(e));
  for (int t = 0; t < n; ++t) {
    check(win->accumulate(&one, 1, i64, t, static_cast<std::ptrdiff_t>(L.acc_i64()), 1, i64, sum) == 0,
          "acc under lock_all");
  }
  if ((e = win->unlock_all())) fail("unlock_all: " + dev.errors().message(e));
  check(st.native_ops - nat1 == static_cast<uint64_t>(same) && st.emulated_ops - emu1 == static_cast<uint64_t>(other),
        "lock_all epoch paths: native " + std::to_string(st.native_ops - nat1) + " emulated " +
            std::to_string(st.emulated_ops - emu1) + ", want " + std::to_string(same) + " and " +
            std::to_string(other));
  if ((e = win->fence(0))) fail("fence: " + dev.errors().message(e));
  std::memcpy(&ai, mem + L.acc_i64(), 8);
  check(ai == int64_t{n} * (kIters + 1), "int64 sum after lock_all is " + std::to_string(ai));
  if ((e = win->fence(adi3::kModeNoSucceed))) fail("fence: " + dev.errors().message(e));
  (void)adi3::type_free(&vec);
  if ((e = Window::free(&win))) fail("free: " + dev.errors().message(e));

  // allocate_shared over hosts that share no memory: a clear RMA_SHARED.
  Window* sh = nullptr;
  comm.context = 0x6e10;
  e = Window::allocate_shared(dev, 64, 1, {}, comm, &base, &sh);
  check(e != 0 && adi3::error_class_of(e) == adi3::ErrorClass::RmaShared,
        "allocate_shared across hosts did not fail with RMA_SHARED");
  if (!e) Window::free(&sh);
}

// Passive target on a window spanning hosts, everyone at rank 0 at once.
void spanning_passive(adi3::Device& dev, const adi3::NodeMap& map, int node) {
  constexpr int kRounds = 40;  // exclusive read-modify-write rounds per rank
  constexpr std::size_t kI64 = 0, kF64 = 8, kI16 = 16, kCounter = 64;
  // Arrays accumulated whole: the target's apply of one packet and a
  // native accumulate overlap for many elements at once.
  constexpr int kLen = 256;
  constexpr std::size_t kArr64 = 128, kArr16 = kArr64 + 8 * kLen, kBytes = kArr16 + 2 * kLen;
  const int n = dev.size();
  const bool near0 = map.node_of[0] == node;
  adi3::Comm comm = dev.world();
  comm.context = 0x6e30;
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, static_cast<std::ptrdiff_t>(kBytes), 1, {}, comm, &base, &win);
  if (e) return fail("spanning allocate: " + dev.errors().message(e));
  char* mem = static_cast<char*>(base);
  std::memset(mem, 0, kBytes);
  const std::vector<int64_t> ones64(kLen, 1);
  const std::vector<int16_t> ones16(kLen, 1);
  adi3::rma::WindowState& st = win->state();
  check(st.native_usable && st.native->partial && !st.native->passive, "the spanning window's paths");
  check(adi3::rma::queue_lock_native(st, 0) == near0, "queue_lock_native(0) does not follow the host layout");
  const Datatype* i64 = dt(adi3::Builtin::kInt64);
  const Datatype* f64 = dt(adi3::Builtin::kDouble);
  const Datatype* i16 = dt(adi3::Builtin::kInt16);
  const Op sum(OpKind::Sum);
  const int64_t one = 1;
  const double half = 0.5;
  const int16_t one16 = 1;
  if ((e = win->fence(0))) fail("spanning fence: " + dev.errors().message(e));  // everyone's zeros are in

  // Accumulates from every rank at once: half of them under a shared lock
  // of rank 0, half under lock_all, the three kinds of element atomics.
  const uint64_t nat0 = st.native_ops, emu0 = st.emulated_ops;
  for (int half_no = 0; half_no < 2; ++half_no) {
    e = half_no == 0 ? win->lock(adi3::LockType::Shared, 0, 0) : win->lock_all(0);
    if (e) fail("spanning lock: " + dev.errors().message(e));
    for (int k = 0; k < kIters / 2; ++k) {
      check(win->accumulate(&one, 1, i64, 0, kI64, 1, i64, sum) == 0, "spanning acc i64");
      check(win->accumulate(&half, 1, f64, 0, kF64, 1, f64, sum) == 0, "spanning acc f64");
      check(win->accumulate(&one16, 1, i16, 0, kI16, 1, i16, sum) == 0, "spanning acc i16");
      check(win->accumulate(ones64.data(), kLen, i64, 0, kArr64, kLen, i64, sum) == 0, "spanning acc i64[]");
      check(win->accumulate(ones16.data(), kLen, i16, 0, kArr16, kLen, i16, sum) == 0, "spanning acc i16[]");
    }
    e = half_no == 0 ? win->unlock(0) : win->unlock_all();
    if (e) fail("spanning unlock: " + dev.errors().message(e));
  }
  const uint64_t acc_ops = 5u * (kIters / 2) * 2u;
  check(st.native_ops - nat0 == (near0 ? acc_ops : 0) && st.emulated_ops - emu0 == (near0 ? 0 : acc_ops),
        "spanning accumulate paths: native " + std::to_string(st.native_ops - nat0) + " emulated " +
            std::to_string(st.emulated_ops - emu0) + (near0 ? " (rank 0 is on this host)" : " (rank 0 is not)"));

  // Exclusive locks: increment a counter at rank 0 by get, flush, put.
  // Rank 0 loads and stores its own memory under its own lock.
  const uint64_t nat1 = st.native_ops, emu1 = st.emulated_ops;
  for (int k = 0; k < kRounds; ++k) {
    if ((e = win->lock(adi3::LockType::Exclusive, 0, 0))) fail("spanning exclusive lock: " + dev.errors().message(e));
    int64_t c = -1;
    if (me == 0) {
      std::memcpy(&c, mem + kCounter, 8);
    } else {
      check(win->get(&c, 1, i64, 0, kCounter, 1, i64) == 0, "spanning get");
      if ((e = win->flush(0))) fail("spanning flush: " + dev.errors().message(e));
    }
    sched_yield();  // a wider window for a lost update, were the lock not exclusive
    ++c;
    if (me == 0) {
      std::memcpy(mem + kCounter, &c, 8);
    } else {
      check(win->put(&c, 1, i64, 0, kCounter, 1, i64) == 0, "spanning put");
    }
    if ((e = win->unlock(0))) fail("spanning exclusive unlock: " + dev.errors().message(e));
  }
  const uint64_t rmw_ops = me == 0 ? 0 : 2u * kRounds;
  check(st.native_ops - nat1 == (near0 ? rmw_ops : 0) && st.emulated_ops - emu1 == (near0 ? 0 : rmw_ops),
        "spanning exclusive paths: native " + std::to_string(st.native_ops - nat1) + " emulated " +
            std::to_string(st.emulated_ops - emu1));
  if ((e = win->fence(0))) fail("spanning fence: " + dev.errors().message(e));
  if (me == 0) {
    int64_t ai, cnt;
    double af;
    int16_t as;
    std::memcpy(&ai, mem + kI64, 8);
    std::memcpy(&af, mem + kF64, 8);
    std::memcpy(&as, mem + kI16, 2);
    std::memcpy(&cnt, mem + kCounter, 8);
    const int64_t want = int64_t{n} * (kIters / 2) * 2;
    check(ai == want, "spanning int64 sum is " + std::to_string(ai) + ", want " + std::to_string(want));
    check(af == 0.5 * static_cast<double>(want), "spanning double sum is " + std::to_string(af));
    check(as == want, "spanning int16 sum is " + std::to_string(as));
    int bad = 0;
    for (int i = 0; i < kLen; ++i) {
      int64_t a;
      int16_t b;
      std::memcpy(&a, mem + kArr64 + 8 * static_cast<std::size_t>(i), 8);
      std::memcpy(&b, mem + kArr16 + 2 * static_cast<std::size_t>(i), 2);
      bad += (a != want) + (b != want);
    }
    check(bad == 0, "spanning array sums: " + std::to_string(bad) + " elements are not " + std::to_string(want));
    check(cnt == int64_t{n} * kRounds,
          "counter is " + std::to_string(cnt) + ", want " + std::to_string(n * kRounds) + ": an update was lost");
    std::printf("hosts_rma: spanning passive target: sums %lld, counter %lld\n", static_cast<long long>(ai),
                static_cast<long long>(cnt));
  }
  if ((e = win->fence(adi3::kModeNoSucceed))) fail("spanning fence: " + dev.errors().message(e));
  if ((e = Window::free(&win))) fail("spanning free: " + dev.errors().message(e));
}

// The host's ranks, in a communicator of their own (context: its base).
adi3::Comm host_comm(adi3::Device& dev, const adi3::NodeMap& map, int node, uint32_t context) {
  adi3::Comm comm;
  comm.context = context + static_cast<uint32_t>(node) * 4;
  comm.peers = map.ranks_on(node);
  comm.size = static_cast<int>(comm.peers.size());
  for (int i = 0; i < comm.size; ++i) {
    if (comm.peers[static_cast<std::size_t>(i)] == dev.rank()) comm.rank = i;
  }
  return comm;
}

// A window over this host's ranks only: native, passive target included.
void host_window(adi3::Device& dev, const adi3::NodeMap& map, int node) {
  adi3::Comm comm = host_comm(dev, map, node, 0x6e20);
  void* base = nullptr;
  Window* win = nullptr;
  int e = Window::allocate(dev, 64, 8, {}, comm, &base, &win);
  if (e) return fail("host window: " + dev.errors().message(e));
  adi3::rma::WindowState& st = win->state();
  check(st.native_usable && !st.native->partial && st.native->passive, "the host window is not native throughout");
  check(win->passive_progress(), "the host window does not progress without target calls");
  const Datatype* i64 = dt(adi3::Builtin::kInt64);
  const Op sum(OpKind::Sum);
  const int64_t one = 1;
  if ((e = win->lock_all(0))) fail("host lock_all: " + dev.errors().message(e));
  for (int k = 0; k < kIters; ++k) {
    for (int t = 0; t < comm.size; ++t) check(win->accumulate(&one, 1, i64, t, 0, 1, i64, sum) == 0, "host acc");
  }
  if ((e = win->unlock_all())) fail("host unlock_all: " + dev.errors().message(e));
  check(st.emulated_ops == 0 && st.native_ops == static_cast<uint64_t>(kIters * comm.size),
        "host window paths: native " + std::to_string(st.native_ops) + " emulated " + std::to_string(st.emulated_ops));
  if ((e = win->fence(0))) fail("host fence: " + dev.errors().message(e));
  int64_t got;
  std::memcpy(&got, base, 8);
  check(got == int64_t{kIters} * comm.size, "host window sum is " + std::to_string(got));
  if ((e = win->fence(adi3::kModeNoSucceed))) fail("host fence: " + dev.errors().message(e));
  if ((e = Window::free(&win))) fail("host free: " + dev.errors().message(e));

  Window* sh = nullptr;
  comm.context += 2;
  e = Window::allocate_shared(dev, 64, 1, {}, comm, &base, &sh);
  check(e == 0, "allocate_shared on one host: " + (e ? dev.errors().message(e) : std::string()));
  if (!e) Window::free(&sh);
}

// A create window over this host's ranks. Not `wake`: its first rank looks
// at its peer while the peer waits in the fence, then all run the epochs.
void host_create(adi3::Device& dev, const adi3::NodeMap& map, int node, bool wake) {
  adi3::Comm comm = host_comm(dev, map, node, 0x6e40);
  if (comm.size < 2) return;
  int64_t mem[2] = {0, 0};
  Window* win = nullptr;
  int e = Window::create(dev, mem, sizeof mem, 8, {}, comm, &win);
  if (e) return fail("host create window: " + dev.errors().message(e));
  adi3::rma::WindowState& st = win->state();
  check(st.native_usable && st.native_active(), "the host create window is not native with native fences");
  if (!wake && comm.rank == 0) {
    adi3::OneSided* os = dev.channel().onesided();
    const int peer = comm.peers[1];
    bool seen = false, routed = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!(seen && routed) && std::chrono::steady_clock::now() < until) {
      seen = seen || (os && os->attentive(peer));
      routed = routed || adi3::rma::polls_now(st, 1) == 1;
    }
    check(seen, "the host peer waiting in a fence never looked attentive through the channel set");
    check(routed, "the route never saw the host peer waiting in a fence as polling");
    for (int r = 0; r < dev.size(); ++r) {
      if (os && map.node_of[static_cast<std::size_t>(r)] != node)
        check(!os->attentive(r), "a rank of the other host looked attentive");
    }
    check(os && !os->attentive(-1) && !os->attentive(dev.size()), "a rank outside the job looked attentive");
  }
  constexpr int kEpochs = 10;
  auto t0 = std::chrono::steady_clock::now();
  const Datatype* i64 = dt(adi3::Builtin::kInt64);
  // Epoch 0 is untimed: it waits for the peer's checks above.
  for (int k = 0; k <= kEpochs && !e; ++k) {
    if (k == 1) t0 = std::chrono::steady_clock::now();
    if ((e = win->fence(0))) break;
    const int64_t v = k;
    e = win->put(&v, 1, i64, (comm.rank + 1) % comm.size, 0, 1, i64);
  }
  if (!e) e = win->fence(adi3::kModeNoSucceed);
  if (e) fail("host create epochs: " + dev.errors().message(e));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check(e || mem[0] == kEpochs,
        "host create window holds " + std::to_string(mem[0]) + ", want " + std::to_string(kEpochs));
  if (wake) {
    std::printf("hosts_rma: rank %d: %d fence epochs on the host create window took %.3f s\n", dev.rank(), kEpochs,
                took);
    check(took < 2.5, "a same-host rank asleep in a fence was not woken (" + std::to_string(took) + " s)");
  }
  if ((e = Window::free(&win))) fail("host create free: " + dev.errors().message(e));
}

}  // namespace

int main(int argc, char** argv) {
  auto dev = adi3::init_process();
  me = dev->rank();
  auto* boot = adi3::process_bootstrap(*dev);
  const adi3::NodeMap& map = boot->node_map();
  if (map.nodes != 2) fail("the job spans " + std::to_string(map.nodes) + " hosts, not 2");
  if (std::strcmp(dev->channel().name(), "shm+tcp") != 0) fail(std::string("channel is ") + dev->channel().name());
  const bool wake = argc > 1 && std::strcmp(argv[1], "wake") == 0;
  if (!failures && !wake) {
    world_window(*dev, map, boot->node());
    spanning_passive(*dev, map, boot->node());
    host_window(*dev, map, boot->node());
  }
  if (!failures) host_create(*dev, map, boot->node(), wake);
  if (dev->finalize() != 0) fail("finalize");
  if (me == 0 && !failures) std::printf("hosts_rma: passed on %d ranks over 2 hosts\n", dev->size());
  return failures ? 1 : 0;
}
