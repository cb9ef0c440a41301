// The copy ceilings of the shm channel's large-message paths on this host:
// what one message of B bytes (reused buffers, as bench/mpi's bw does) can
// cost between two processes pinned to cores 0 and 1.
//
//   memcpy        one core copies B bytes (the baseline)
//   pipe-plain    B bytes in chunks through a ring in shared memory, the
//                 sender copying in with ordinary stores, the receiver out
//   pipe-stream   the same with the channel's streaming stores
//                 (channels/shm/stream_copy.hpp)
//   cma           the receiver copies B bytes with process_vm_readv
//   cma-both      both copy half at once: the receiver reads one half, the
//                 sender writes the other with process_vm_writev
//
// Per mode: the median time of a message (GB/s) and, for the pipelines,
// the median rate of each side's chunk copies, which shows the side that
// sets the pace. Medians of many messages: a loaded host shifts them less
// than means. Usage: shm_xcopy [bytes=1048576] [chunk=32768] [ring=524288]
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "channels/shm/stream_copy.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

enum Mode { kPipePlain, kPipeStream, kCma, kCmaBoth, kModes };
const char* const kNames[] = {"pipe-plain", "pipe-stream", "cma", "cma-both"};

// Shared between the two processes (an anonymous shared mapping).
struct alignas(64) Shared {
  std::atomic<int> mode{-1};                  // the mode the receiver runs now
  std::atomic<int> finished{-1};              // the last mode the receiver finished
  alignas(64) std::atomic<uint64_t> tail{0};  // chunks published
  alignas(64) std::atomic<uint64_t> head{0};  // chunks consumed
  alignas(64) std::atomic<uint64_t> go{0};    // cma-both: message number started
  alignas(64) std::atomic<uint64_t> sent{0};  // cma-both: halves the sender wrote
  char* send_buf = nullptr;                   // the sender's buffer (its address)
  char* recv_buf = nullptr;                   // the receiver's
  double sender_chunk_gbs[kModes] = {};
  std::atomic<int> reported{-1};  // the last mode whose sender figure is in
};

struct Params {
  std::size_t bytes, chunk, ring;
  int messages;
};

void sender(Shared* s, char* ring, const Params& p, pid_t receiver) {
  pin(0);
  for (int m = 0; m < kModes; ++m) {
    while (s->mode.load() < m) {
    }
    std::vector<double> chunk_s;
    if (m == kPipePlain || m == kPipeStream) {
      const uint64_t slots = p.ring / p.chunk;
      uint64_t tail = 0;
      for (int i = 0; i < p.messages; ++i) {
        for (std::size_t off = 0; off < p.bytes; off += p.chunk) {
          while (tail - s->head.load(std::memory_order_acquire) >= slots) {
          }
          const std::size_t n = std::min(p.chunk, p.bytes - off);
          char* dst = ring + (tail % slots) * p.chunk;
          auto t0 = Clock::now();
          if (m == kPipeStream) {
            adi3::shm::stream_copy(dst, s->send_buf + off, n);
          } else {
            std::memcpy(dst, s->send_buf + off, n);
          }
          chunk_s.push_back(static_cast<double>(n) / secs(t0, Clock::now()) / 1e9);
          s->tail.store(++tail, std::memory_order_release);
        }
      }
    } else if (m == kCmaBoth) {
      const std::size_t half = p.bytes / 2;
      for (uint64_t i = 1; i <= static_cast<uint64_t>(p.messages); ++i) {
        while (s->go.load(std::memory_order_acquire) < i) {
        }
        iovec l{s->send_buf + half, p.bytes - half}, r{s->recv_buf + half, p.bytes - half};
        if (process_vm_writev(receiver, &l, 1, &r, 1, 0) != static_cast<ssize_t>(p.bytes - half)) {
          perror("shm_xcopy: process_vm_writev");
        }
        s->sent.store(i, std::memory_order_release);
      }
    }
    s->sender_chunk_gbs[m] = median(chunk_s);
    s->reported.store(m, std::memory_order_release);
    while (s->finished.load() < m) {
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Params p{argc > 1 ? std::strtoul(argv[1], nullptr, 0) : 1u << 20,
           argc > 2 ? std::strtoul(argv[2], nullptr, 0) : 32768u,
           argc > 3 ? std::strtoul(argv[3], nullptr, 0) : 524288u, 0};
  if (p.bytes < 2 || p.chunk < 64 || p.ring < p.chunk) {
    std::fprintf(stderr, "usage: shm_xcopy [bytes] [chunk >= 64] [ring >= chunk]\n");
    return 2;
  }
  p.messages = static_cast<int>(std::max<std::size_t>(20, (std::size_t{2} << 30) / p.bytes / 4));
  auto* s =
      static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  auto* ring = static_cast<char*>(mmap(nullptr, p.ring, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (s == MAP_FAILED || ring == MAP_FAILED) return 1;
  new (s) Shared();
  std::memset(ring, 0, p.ring);
  // Private buffers, allocated before the fork: the same addresses in both.
  s->send_buf = static_cast<char*>(std::aligned_alloc(4096, (p.bytes + 4095) / 4096 * 4096));
  s->recv_buf = static_cast<char*>(std::aligned_alloc(4096, (p.bytes + 4095) / 4096 * 4096));
  std::memset(s->recv_buf, 0, p.bytes);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    std::memset(s->send_buf, 'x', p.bytes);  // the sender's pages, in its cache
    sender(s, ring, p, parent);
    _exit(0);
  }
  pin(1);
  {  // memcpy on one core, buffers reused
    std::vector<char> a(p.bytes, 'a'), b(p.bytes);
    std::vector<double> t;
    for (int i = 0; i < p.messages; ++i) {
      auto t0 = Clock::now();
      std::memcpy(b.data(), a.data(), p.bytes);
      t.push_back(static_cast<double>(p.bytes) / secs(t0, Clock::now()) / 1e9);
      asm volatile("" ::"r"(b.data()) : "memory");
    }
    std::printf("# shm_xcopy: %zu-byte messages, %d of each; chunk %zu, ring %zu\n", p.bytes, p.messages, p.chunk,
                p.ring);
    std::printf("%-12s %8.1f GB/s\n", "memcpy", median(t));
  }
  for (int m = 0; m < kModes; ++m) {
    std::vector<double> msg, chunk_s;
    s->tail.store(0);
    s->head.store(0);
    s->go.store(0);
    s->sent.store(0);
    s->mode.store(m);
    if (m == kPipePlain || m == kPipeStream) {
      const uint64_t slots = p.ring / p.chunk;
      uint64_t head = 0;
      for (int i = 0; i < p.messages; ++i) {
        auto t0 = Clock::now();
        for (std::size_t off = 0; off < p.bytes; off += p.chunk) {
          while (s->tail.load(std::memory_order_acquire) == head) {
          }
          const std::size_t n = std::min(p.chunk, p.bytes - off);
          auto c0 = Clock::now();
          std::memcpy(s->recv_buf + off, ring + (head % slots) * p.chunk, n);
          chunk_s.push_back(static_cast<double>(n) / secs(c0, Clock::now()) / 1e9);
          s->head.store(++head, std::memory_order_release);
        }
        msg.push_back(static_cast<double>(p.bytes) / secs(t0, Clock::now()) / 1e9);
      }
    } else {
      const bool both = m == kCmaBoth;
      const std::size_t mine = both ? p.bytes / 2 : p.bytes;
      for (uint64_t i = 1; i <= static_cast<uint64_t>(p.messages); ++i) {
        auto t0 = Clock::now();
        if (both) s->go.store(i, std::memory_order_release);
        iovec l{s->recv_buf, mine}, r{s->send_buf, mine};
        if (process_vm_readv(child, &l, 1, &r, 1, 0) != static_cast<ssize_t>(mine)) {
          std::perror("shm_xcopy: process_vm_readv (no ptrace permission?)");
          break;
        }
        if (both) {
          while (s->sent.load(std::memory_order_acquire) < i) {
          }
        }
        msg.push_back(static_cast<double>(p.bytes) / secs(t0, Clock::now()) / 1e9);
      }
    }
    s->finished.store(m);
    while (s->reported.load(std::memory_order_acquire) < m) {
    }
    if (m == kPipePlain || m == kPipeStream) {
      std::printf("%-12s %8.1f GB/s   sender's chunk copies %5.1f GB/s, receiver's %5.1f GB/s\n", kNames[m],
                  median(msg), s->sender_chunk_gbs[m], median(chunk_s));
    } else {
      std::printf("%-12s %8.1f GB/s\n", kNames[m], median(msg));
    }
  }
  waitpid(child, nullptr, 0);
  return 0;
}
