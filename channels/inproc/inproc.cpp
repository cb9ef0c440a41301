#include "channels/inproc/inproc.hpp"

#include <cstdlib>
#include <thread>
#include <vector>

#include "adi3/device.hpp"
#include "channels/common/doorbell.hpp"
#include "channels/common/spsc_ring.hpp"

namespace adi3 {

namespace {
constexpr Knob kInprocKnobs[] = {
    {"ADI3_INPROC_RING_BYTES", "262144", "Bytes of each in-process ring (one per ordered pair of thread-ranks)."},
};
}  // namespace

std::span<const Knob> inproc_knobs() { return kInprocKnobs; }

struct InprocShared {
  struct Pair {
    SpscRing ring;
    char* data = nullptr;
  };
  struct alignas(64) Rank {
    Doorbell bell;
  };

  InprocShared(int n, std::size_t ring_bytes)
      : n(n), ring_bytes(ring_bytes), pairs(static_cast<std::size_t>(n) * n), ranks(static_cast<std::size_t>(n)) {
    memory = static_cast<char*>(std::aligned_alloc(64, ring_bytes * pairs.size()));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      pairs[i].data = memory + i * ring_bytes;
      pairs[i].ring.init(ring_bytes);
    }
  }
  ~InprocShared() { std::free(memory); }
  Pair& pair(int from, int to) { return pairs[static_cast<std::size_t>(from) * n + to]; }

  int n;
  std::size_t ring_bytes;
  std::vector<Pair> pairs;
  std::vector<Rank> ranks;
  char* memory = nullptr;
};

namespace {

class InprocChannel final : public Channel {
 public:
  InprocChannel(std::shared_ptr<InprocShared> s, int rank) : s_(std::move(s)), rank_(rank) {
    caps_.native = kPointToPoint | kActiveRma;
    caps_.max_header = 128;
    caps_.max_payload = s_->pair(0, 0).ring.max_record() - caps_.max_header - 64;
    caps_.eager_limit = 16384;
    caps_.get_min = caps_.eager_limit;
  }

  const char* name() const override { return "inproc"; }
  const ChannelCaps& caps() const override { return caps_; }
  int rank() const override { return rank_; }
  int size() const override { return s_->n; }

  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& p) override {
    auto& pair = s_->pair(rank_, dest);
    if (!pair.ring.push(pair.data, hdr, hdr_bytes, p)) return SendResult::Busy;
    s_->ranks[static_cast<std::size_t>(dest)].bell.ring();
    return SendResult::Sent;
  }

  int poll(PacketSink& sink) override {
    int total = 0;
    for (int i = 0; i < s_->n; ++i) {
      int src = next_ + i < s_->n ? next_ + i : next_ + i - s_->n;
      auto& pair = s_->pair(src, rank_);
      int n = pair.ring.drain(pair.data, 16, [&](const void* h, std::size_t hb, const void* p, std::size_t pb) {
        sink.on_packet(src, h, hb, p, pb);
      });
      // A sender blocked on a full ring may sleep: room appeared.
      if (n) s_->ranks[static_cast<std::size_t>(src)].bell.ring();
      total += n;
    }
    next_ = next_ + 1 < s_->n ? next_ + 1 : 0;  // fairness among sources
    return total;
  }

  void wait(std::chrono::microseconds timeout) override { wait_until(timeout, WaitCondition{}); }
  void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) override {
    // done after the announcement (see Channel::wait_until).
    s_->ranks[static_cast<std::size_t>(rank_)].bell.sleep_if(
        [&] {
          for (int src = 0; src < s_->n; ++src) {
            if (!s_->pair(src, rank_).ring.empty()) return false;
          }
          return !done();
        },
        timeout);
  }

  // Rings only when a thread of this rank sleeps: cheap enough for every completion.
  void wake() override { s_->ranks[static_cast<std::size_t>(rank_)].bell.ring(); }

  int get(int, void* local, uint64_t remote, std::size_t len) override {
    std::memcpy(local, reinterpret_cast<const void*>(static_cast<uintptr_t>(remote)), len);
    return 0;
  }
  int put(int, uint64_t remote, const void* local, std::size_t len) override {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(remote)), local, len);
    return 0;
  }

 private:
  std::shared_ptr<InprocShared> s_;
  int rank_;
  int next_ = 0;
  ChannelCaps caps_;
};

std::size_t ring_bytes_from_env() {
  auto v = static_cast<std::size_t>(env_int("ADI3_INPROC_RING_BYTES", 262144));
  std::size_t p = 4096;
  while (p < v) p <<= 1;  // the ring needs a power of two
  return p;
}

}  // namespace

InprocFabric::InprocFabric(int ranks) : shared_(std::make_shared<InprocShared>(ranks, ring_bytes_from_env())) {}
InprocFabric::~InprocFabric() = default;
int InprocFabric::size() const { return shared_->n; }

std::unique_ptr<Channel> InprocFabric::channel(int rank) { return std::make_unique<InprocChannel>(shared_, rank); }

void run_thread_ranks(int ranks, const std::function<void(Device&)>& fn, const Config& config) {
  InprocFabric fabric(ranks);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      Device dev(fabric.channel(r), config);
      fn(dev);
      dev.finalize();
    });
  }
  for (auto& t : threads) t.join();
}

void run_thread_ranks(int ranks, const std::function<void(Device&)>& fn) {
  run_thread_ranks(ranks, fn, Config::from_env());
}

}  // namespace adi3
