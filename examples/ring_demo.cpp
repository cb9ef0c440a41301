// The README's demo: N thread-ranks pass a token around a ring over the
// in-process channel, each adding its rank, then exchange one large message
// (rendezvous) with their neighbours, and say what happened.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <vector>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"

int main(int argc, char** argv) {
  int ranks = argc > 1 ? std::atoi(argv[1]) : 4;
  int laps = argc > 2 ? std::atoi(argv[2]) : 3;
  if (ranks < 2) ranks = 2;
  std::mutex out;
  adi3::run_thread_ranks(ranks, [&](adi3::Device& dev) {
    const adi3::Comm& world = dev.world();
    const adi3::Datatype* byte = adi3::Datatype::byte();
    int me = dev.rank(), n = dev.size();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    long token = 0;
    for (int lap = 0; lap < laps; ++lap) {
      if (me == 0) {
        dev.send(&token, sizeof token, byte, next, lap, world);
        dev.recv(&token, sizeof token, byte, prev, lap, world, nullptr);
        std::lock_guard<std::mutex> g(out);
        std::printf("lap %d: token came back to rank 0 carrying %ld\n", lap, token);
      } else {
        dev.recv(&token, sizeof token, byte, prev, lap, world, nullptr);
        token += me;
        dev.send(&token, sizeof token, byte, next, lap, world);
      }
    }
    // 1 MiB to the right neighbour: above the eager limit, so rendezvous.
    std::vector<int> mine(1 << 18, me), theirs(1 << 18, -1);
    adi3::Status st;
    dev.sendrecv(mine.data(), mine.size() * sizeof(int), byte, next, 99, theirs.data(), theirs.size() * sizeof(int),
                 byte, prev, 99, world, &st);
    bool ok = theirs.front() == prev && theirs.back() == prev && st.bytes == mine.size() * sizeof(int);
    std::lock_guard<std::mutex> g(out);
    std::printf("rank %d of %d: got %zu bytes from rank %d by rendezvous: %s\n", me, n, st.bytes, st.source,
                ok ? "correct" : "WRONG");
  });
  long expect = 0;
  for (int r = 1; r < ranks; ++r) expect += r;
  std::printf("%d thread-ranks over the in-process channel; each lap adds %ld to the token\n", ranks, expect);
  return 0;
}
