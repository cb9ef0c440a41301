#include "p2p_bodies.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.hpp"

namespace shm_test {
namespace {

using adi3::Device;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

const adi3::Datatype* byte() { return adi3::Datatype::byte(); }

// Below, at and above the eager limit, the chunk size and the CMA switch.
constexpr std::size_t kSizes[] = {0,     1,     7,      64,      1000,          4096,    16383,         16384,
                                  16385, 65536, 100000, 1 << 20, (4 << 20) - 1, 4 << 20, (4 << 20) + 3, 16 << 20};

const char* mode_name(SendMode m) {
  switch (m) {
    case SendMode::Standard:
      return "standard";
    case SendMode::Synchronous:
      return "synchronous";
    case SendMode::Ready:
      return "ready";
    case SendMode::Buffered:
      return "buffered";
  }
  return "?";
}

// Every rank sends to the next and receives from the previous one, in
// every mode and size.
void modes_sizes(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const std::size_t biggest = kSizes[std::size(kSizes) - 1];
  std::vector<char> out(biggest), in(biggest + 64);
  // Earlier buffered sends may still be in flight: room for all of them.
  std::size_t total = 0;
  for (std::size_t b : kSizes) total += b + adi3::BsendBuffer::kOverhead + 16;
  std::vector<char> attach(total);
  for (SendMode mode : {SendMode::Standard, SendMode::Synchronous, SendMode::Ready, SendMode::Buffered}) {
    if (mode == SendMode::Buffered) SHM_OK(dev, dev.buffer_attach(attach.data(), attach.size()));
    for (std::size_t i = 0; i < std::size(kSizes); ++i) {
      const std::size_t bytes = kSizes[i];
      const auto seed = [&](int sender) { return static_cast<uint32_t>((sender * 131 + i) * 4 + int(mode)); };
      fill_pattern(out.data(), bytes, seed(me));
      std::memset(in.data(), 0xee, in.size());
      Request* r = nullptr;
      SHM_OK(dev, dev.irecv(in.data(), in.size(), byte(), prev, static_cast<int>(i), dev.world(), &r));
      if (mode == SendMode::Ready) SHM_OK(dev, dev.barrier());  // every receive is posted
      SHM_OK(dev, dev.send(out.data(), bytes, byte(), next, static_cast<int>(i), dev.world(), mode));
      Status st;
      SHM_OK(dev, dev.wait(&r, &st));
      SHM_CHECK_MSG(dev, st.source == prev && st.tag == static_cast<int>(i) && st.bytes == bytes,
                    std::string(mode_name(mode)) + " " + std::to_string(bytes) + " bytes: got " +
                        std::to_string(st.bytes) + " from " + std::to_string(st.source));
      SHM_PATTERN(dev, in.data(), bytes, seed(prev));
      SHM_CHECK(dev, static_cast<unsigned char>(in[bytes]) == 0xee);
    }
    if (mode == SendMode::Buffered) {
      void* b = nullptr;
      std::size_t len = 0;
      SHM_OK(dev, dev.buffer_detach(&b, &len));
    }
  }
}

// Rank 0 takes everyone's messages with ANY_SOURCE / ANY_TAG; each
// source's messages must arrive in the order sent.
void wildcards(Device& dev) {
  constexpr int kPerSender = 60;
  constexpr std::size_t kBig = 40000;
  const int n = dev.size(), me = dev.rank();
  auto size_of = [](int seq) { return seq % 7 == 3 ? kBig : std::size_t{8} + static_cast<std::size_t>(seq); };
  if (me != 0) {
    std::vector<char> buf(kBig);
    for (int seq = 0; seq < kPerSender; ++seq) {
      std::size_t bytes = size_of(seq);
      fill_pattern(buf.data(), bytes, static_cast<uint32_t>(me * 1000 + seq));
      SHM_OK(dev, dev.send(buf.data(), bytes, byte(), 0, seq % 5, dev.world()));
    }
    return;
  }
  std::vector<int> next(static_cast<std::size_t>(n), 0);
  std::vector<char> buf(kBig);
  for (int k = 0; k < (n - 1) * kPerSender; ++k) {
    Status st;
    SHM_OK(dev, dev.recv(buf.data(), buf.size(), byte(), adi3::kAnySource, adi3::kAnyTag, dev.world(), &st));
    SHM_CHECK(dev, st.source > 0 && st.source < n);
    int seq = next[static_cast<std::size_t>(st.source)]++;
    SHM_CHECK_MSG(dev, st.tag == seq % 5 && st.bytes == size_of(seq),
                  "from " + std::to_string(st.source) + ": tag " + std::to_string(st.tag) + " bytes " +
                      std::to_string(st.bytes) + ", want message " + std::to_string(seq));
    SHM_PATTERN(dev, buf.data(), st.bytes, static_cast<uint32_t>(st.source * 1000 + seq));
  }
}

// Probe, iprobe and matched probe find messages of unknown size and source.
void probes(Device& dev) {
  const int n = dev.size(), me = dev.rank();
  auto size_of = [](int r, int round) { return static_cast<std::size_t>(r) * 1000 + (round == 1 ? 70000u : 16u); };
  for (int round = 0; round < 3; ++round) {
    if (me != 0) {
      std::vector<char> buf(size_of(me, round));
      fill_pattern(buf.data(), buf.size(), static_cast<uint32_t>(me + 100 * round));
      SHM_OK(dev, dev.send(buf.data(), buf.size(), byte(), 0, 10 + round, dev.world()));
      continue;
    }
    for (int k = 1; k < n; ++k) {
      Status st;
      std::vector<char> buf;
      if (round == 0) {
        SHM_OK(dev, dev.probe(adi3::kAnySource, 10, dev.world(), &st));
      } else if (round == 1) {
        bool flag = false;
        while (!flag) SHM_OK(dev, dev.iprobe(adi3::kAnySource, 11, dev.world(), &flag, &st));
      } else {
        Request* msg = nullptr;
        SHM_OK(dev, dev.mprobe(adi3::kAnySource, 12, dev.world(), &msg, &st));
        buf.resize(st.bytes);
        Status got;
        SHM_OK(dev, dev.mrecv(buf.data(), buf.size(), byte(), &msg, &got));
        SHM_CHECK(dev, got.source == st.source && got.bytes == st.bytes);
      }
      SHM_CHECK(dev, st.tag == 10 + round && st.bytes == size_of(st.source, round));
      if (round < 2) {
        buf.resize(st.bytes);
        SHM_OK(dev, dev.recv(buf.data(), buf.size(), byte(), st.source, st.tag, dev.world(), nullptr));
      }
      SHM_PATTERN(dev, buf.data(), buf.size(), static_cast<uint32_t>(st.source + 100 * round));
    }
  }
}

// Everyone floods everyone with small messages (full rings, senders that
// must be woken for room), then exchanges large ones all at once.
void flood(Device& dev) {
  constexpr int kSmall = 400;
  constexpr std::size_t kLarge = 3 << 20;
  const int n = dev.size(), me = dev.rank();
  std::vector<Request*> reqs;
  std::vector<std::vector<uint32_t>> got(static_cast<std::size_t>(n), std::vector<uint32_t>(kSmall * 4));
  std::vector<uint32_t> sent(kSmall * 4);
  for (int i = 0; i < kSmall; ++i) sent[static_cast<std::size_t>(i) * 4] = static_cast<uint32_t>(me << 16 | i);
  for (int p = 0; p < n; ++p) {
    for (int i = 0; i < kSmall; ++i) {
      Request* r = nullptr;
      SHM_OK(dev, dev.irecv(&got[static_cast<std::size_t>(p)][static_cast<std::size_t>(i) * 4], 16, byte(), p, 7,
                            dev.world(), &r));
      reqs.push_back(r);
    }
  }
  for (int i = 0; i < kSmall; ++i) {
    for (int k = 1; k <= n; ++k) {
      Request* r = nullptr;
      SHM_OK(dev, dev.isend(&sent[static_cast<std::size_t>(i) * 4], 16, byte(), (me + k) % n, 7, dev.world(),
                            SendMode::Standard, &r));
      reqs.push_back(r);
    }
  }
  SHM_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr));
  for (int p = 0; p < n; ++p) {
    for (int i = 0; i < kSmall; ++i) {
      SHM_CHECK(
          dev, got[static_cast<std::size_t>(p)][static_cast<std::size_t>(i) * 4] == static_cast<uint32_t>(p << 16 | i));
    }
  }
  reqs.clear();
  std::vector<char> out(kLarge);
  std::vector<std::vector<char>> in(static_cast<std::size_t>(n), std::vector<char>(kLarge));
  fill_pattern(out.data(), kLarge, static_cast<uint32_t>(me + 77));
  for (int p = 0; p < n; ++p) {
    Request* r = nullptr;
    SHM_OK(dev, dev.irecv(in[static_cast<std::size_t>(p)].data(), kLarge, byte(), p, 8, dev.world(), &r));
    reqs.push_back(r);
  }
  for (int k = 1; k <= n; ++k) {
    Request* r = nullptr;
    SHM_OK(dev, dev.isend(out.data(), kLarge, byte(), (me + k) % n, 8, dev.world(), SendMode::Standard, &r));
    reqs.push_back(r);
  }
  SHM_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr));
  for (int p = 0; p < n; ++p)
    SHM_PATTERN(dev, in[static_cast<std::size_t>(p)].data(), kLarge, static_cast<uint32_t>(p + 77));
}

// Large messages sent before the receive is posted (unexpected
// rendezvous), synchronous ones included, and the completion families.
void unexpected_large(Device& dev) {
  constexpr std::size_t kBytes = (5 << 20) + 11;
  const int n = dev.size(), me = dev.rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  std::vector<char> out(kBytes), in(kBytes);
  for (SendMode mode : {SendMode::Standard, SendMode::Synchronous}) {
    fill_pattern(out.data(), kBytes, static_cast<uint32_t>(me * 3 + int(mode)));
    Request* s = nullptr;
    SHM_OK(dev, dev.isend(out.data(), kBytes, byte(), next, 5, dev.world(), mode, &s));
    SHM_OK(dev, dev.barrier());  // the request-to-send is now unexpected at `next`
    usleep(2000);
    Request* r = nullptr;
    SHM_OK(dev, dev.irecv(in.data(), kBytes, byte(), prev, 5, dev.world(), &r));
    Request* both[2] = {s, r};
    int done = 0;
    while (done < 2) {
      int outcount = 0, idx[2];
      SHM_OK(dev, dev.waitsome(2, both, &outcount, idx, nullptr));
      done += outcount;
    }
    SHM_PATTERN(dev, in.data(), kBytes, static_cast<uint32_t>(prev * 3 + int(mode)));
  }
}

// Partners (ranks 2k and 2k+1) send large messages to each other at once,
// as a bidirectional bandwidth test does: each rank offers its buffer while
// the partner's offer arrives (Channel::get_crossing), in windows, with the
// receives posted first, posted late (unexpected) and with one side
// sending only after its receives completed (no crossing). Each message
// has its own pattern, so a message fetched twice, from the wrong buffer
// or only in part shows. The sizes span the timed CMA range from 16 KiB
// (one chunk, several chunks, odd lengths).
void crossing(Device& dev) {
  constexpr std::size_t kWindowSizes[] = {300000, 1 << 20, 20000, (2 << 20) + 5, 262144, 65536 + 3};
  constexpr int kWindow = static_cast<int>(std::size(kWindowSizes));
  const int me = dev.rank(), partner = me ^ 1;
  if (partner >= dev.size()) return;
  std::vector<std::vector<char>> out(kWindow), in(kWindow);
  for (int k = 0; k < kWindow; ++k) {
    out[static_cast<std::size_t>(k)].resize(kWindowSizes[k]);
    in[static_cast<std::size_t>(k)].resize(kWindowSizes[k] + 64);
  }
  // The tiny variant pipelines 2 KiB chunks through 8 KiB rings: every lap
  // needs both ranks on a CPU, and under load 25-30 its 12 rounds took
  // 36-60+ s (the blocking wait's sched_yield calls, ~17,000 a run, each
  // giving the CPU away), past the launch timeout. Each style once there.
  const char* few = std::getenv("SHM_TEST_CROSSING_ROUNDS");
  const int rounds = few ? std::atoi(few) : 12;
  for (int round = 0; round < rounds; ++round) {
    const int style = round % 3;  // 0: receives first; 1: sends first (unexpected); 2: me odd sends late
    const auto seed = [&](int sender, int k) { return static_cast<uint32_t>(sender * 1000 + round * 10 + k); };
    std::vector<Request*> recvs(kWindow), sends(kWindow);
    for (int k = 0; k < kWindow; ++k) {
      fill_pattern(out[static_cast<std::size_t>(k)].data(), kWindowSizes[k], seed(me, k));
      std::memset(in[static_cast<std::size_t>(k)].data(), 0xee, in[static_cast<std::size_t>(k)].size());
    }
    auto post_recvs = [&] {
      for (int k = 0; k < kWindow; ++k) {
        SHM_OK(dev, dev.irecv(in[static_cast<std::size_t>(k)].data(), in[static_cast<std::size_t>(k)].size(), byte(),
                              partner, k, dev.world(), &recvs[static_cast<std::size_t>(k)]));
      }
    };
    auto post_sends = [&] {
      for (int k = 0; k < kWindow; ++k) {
        SHM_OK(dev, dev.isend(out[static_cast<std::size_t>(k)].data(), kWindowSizes[k], byte(), partner, k, dev.world(),
                              SendMode::Standard, &sends[static_cast<std::size_t>(k)]));
      }
    };
    if (style == 1) {
      post_sends();
      SHM_OK(dev, dev.barrier());  // the requests-to-send wait unexpected
      post_recvs();
    } else if (style == 2 && (me & 1)) {
      post_recvs();
      SHM_OK(dev, dev.waitall(kWindow, recvs.data(), nullptr));
      post_sends();
    } else {
      post_recvs();
      post_sends();
    }
    if (!(style == 2 && (me & 1))) SHM_OK(dev, dev.waitall(kWindow, recvs.data(), nullptr));
    SHM_OK(dev, dev.waitall(kWindow, sends.data(), nullptr));
    for (int k = 0; k < kWindow; ++k) {
      SHM_PATTERN(dev, in[static_cast<std::size_t>(k)].data(), kWindowSizes[k], seed(partner, k));
      SHM_CHECK(dev, static_cast<unsigned char>(in[static_cast<std::size_t>(k)][kWindowSizes[k]]) == 0xee);
    }
  }
}

// Messages to oneself, small and large.
void self(Device& dev) {
  const int me = dev.rank();
  for (std::size_t bytes : {std::size_t{0}, std::size_t{100}, std::size_t{1} << 20, std::size_t{16} << 20}) {
    std::vector<char> out(bytes), in(bytes);
    fill_pattern(out.data(), bytes, static_cast<uint32_t>(bytes));
    Request* r = nullptr;
    SHM_OK(dev, dev.irecv(in.data(), bytes, byte(), me, 1, dev.world(), &r));
    SHM_OK(dev, dev.send(out.data(), bytes, byte(), me, 1, dev.world()));
    SHM_OK(dev, dev.wait(&r, nullptr));
    SHM_PATTERN(dev, in.data(), bytes, static_cast<uint32_t>(bytes));
  }
}

// The corners of a copy both ranks share (channels/shm/cma_split.cpp; the
// split variant splits every rendezvous): partners 2k and 2k+1 exchange a
// message longer than the receive (truncated: the sender's half must stop
// at the receive's end), one from a sender that computes without calling
// the library while its message is fetched (the receiver takes its half
// back), one received with ANY_SOURCE, and odd lengths at odd addresses.
void split_corners(Device& dev) {
  const int me = dev.rank(), partner = me ^ 1;
  if (partner >= dev.size()) return;
  const bool sends = (me & 1) == 0;
  constexpr std::size_t kLong = (1 << 20) + 5, kRoom = 700001, kOdd = (3 << 20) + 4095;
  std::vector<char> out((4 << 20) + 8), in((4 << 20) + 72);
  int step = 0;
  // One message of `bytes` from out + shift into a receive of `room` bytes
  // at in + shift; the sender may compute for `away_ms` before its wait.
  auto exchange = [&](std::size_t bytes, std::size_t room, std::size_t shift, int away_ms, bool any) {
    const auto seed = static_cast<uint32_t>(100 + step);
    const int tag = step++;
    if (sends) {
      fill_pattern(out.data() + shift, bytes, seed);
      Request* s = nullptr;
      SHM_OK(dev, dev.isend(out.data() + shift, bytes, byte(), partner, tag, dev.world(), SendMode::Standard, &s));
      if (away_ms) {
        // Busy outside the library: the receiver asks and must not wait.
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(away_ms);
        while (std::chrono::steady_clock::now() < until) {
        }
      }
      SHM_OK(dev, dev.wait(&s, nullptr));
    } else {
      std::memset(in.data(), 0xee, in.size());
      Status st;
      const int e = dev.recv(in.data() + shift, room, byte(), any ? adi3::kAnySource : partner, tag, dev.world(), &st);
      const std::size_t got = std::min(bytes, room);
      if (bytes > room) {
        SHM_CHECK_MSG(dev, e != 0 && adi3::error_class_of(e) == adi3::ErrorClass::Truncate,
                      "a message of " + std::to_string(bytes) + " bytes into " + std::to_string(room) +
                          " must fail with MPI_ERR_TRUNCATE");
      } else {
        SHM_OK(dev, e);
      }
      SHM_CHECK(dev, st.source == partner && st.bytes == got);
      SHM_PATTERN(dev, in.data() + shift, got, seed);
      SHM_CHECK(dev, static_cast<unsigned char>(in[shift + got]) == 0xee);
      if (shift) SHM_CHECK(dev, static_cast<unsigned char>(in[shift - 1]) == 0xee);
    }
  };
  const int rounds = std::getenv("SHM_TEST_CROSSING_ROUNDS") ? 1 : 3;  // the tiny rings: once
  for (int round = 0; round < rounds; ++round) {
    exchange(kLong, kRoom, 0, 0, false);       // truncated
    exchange(kOdd, kOdd, 3, 0, false);         // odd length, odd addresses
    exchange(kOdd, kOdd + 64, 0, 0, true);     // ANY_SOURCE
    exchange(4 << 20, 4 << 20, 0, 30, false);  // the sender computes
    exchange(1 << 16, 1 << 16, 0, 0, false);   // the smallest split
    SHM_OK(dev, dev.barrier());
  }
}

constexpr Body kBodies[] = {
    {"modes_sizes", &modes_sizes, "all four send modes, 0 B .. 16 MiB, around a ring"},
    {"wildcards", &wildcards, "ANY_SOURCE/ANY_TAG at rank 0, per-source order"},
    {"probes", &probes, "probe, iprobe, mprobe/mrecv of unknown sizes"},
    {"flood", &flood, "all-to-all small flood (full rings), then all-to-all 3 MiB"},
    {"unexpected_large", &unexpected_large, "rendezvous sends that arrive before the receive"},
    {"self", &self, "messages to oneself, 0 B .. 16 MiB"},
    {"crossing", &crossing, "partners send large messages to each other at once (bibw)"},
    {"split_corners", &split_corners, "truncated, ANY_SOURCE, odd, away-sender messages (shared copies)"},
};

}  // namespace

std::span<const Body> p2p_bodies() { return kBodies; }

}  // namespace shm_test
