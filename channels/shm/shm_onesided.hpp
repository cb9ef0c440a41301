// The shm channel's one-sided part (channels/onesided.hpp).
//
// Two kinds of region:
//  - allocated: a POSIX shared-memory segment of its own; its key is the
//    segment's name, an offset and a size. A peer maps the segment, so
//    every operation is a load, a store or a hardware atomic (kOsLoadStore).
//  - exposed user memory: its key is the process id, the address and the
//    size; a peer reaches it with cross-memory attach (put and get only,
//    when the kernel permits it), never with the owner's help. Memory that
//    lies inside a live allocated region (MPI_Alloc_mem hands those out)
//    is exposed as that segment at an offset instead: peers map it.
// Copies are synchronous, so flush() is a full memory fence.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "channels/common/doorbell.hpp"
#include "channels/onesided.hpp"

namespace adi3::shm {

// Large copies by cross-memory attach split with the peer (the channel's
// cma_split.cpp).
class CmaSplitter {
 public:
  // A put (local into the peer's remote) or get of len bytes: whether the
  // splitter took it (from its threshold on, the host not crowded); *ok
  // then says whether the copy succeeded. mapped: remote as mapped here
  // (a shared segment: our part is a memcpy), or null (CMA).
  virtual bool split_window(int peer, bool put, void* local, uint64_t remote, std::size_t len, char* mapped,
                            bool* ok) = 0;

 protected:
  ~CmaSplitter() = default;
};

class ShmOneSided final : public OneSided {
 public:
  // pids: each rank's process id (from the inbox headers, which the channel
  // checked); cma: whether the start-up probe found cross-memory attach
  // usable; activity: each rank's poll counter (InboxHeader::activity);
  // bells: each rank's doorbell; calls: each rank's counts of threads in
  // blocking waits (empty, or null words: unknown); clock: nanoseconds for
  // attentive()'s timing (tests pass a clock they step, so their verdicts
  // do not hang on the scheduler).
  struct Calls {
    const std::atomic<uint32_t>* waiting = nullptr;  // InboxHeader::waiting: asleep with a condition
    const std::atomic<uint32_t>* calls = nullptr;    // InboxHeader::calls: in Device::block_until
    // The rank's sleeps run process_fence() and ours reach it: its doorbell
    // rings without a fence (Doorbell::ring_light).
    bool light = false;
  };
  using Clock = int64_t (*)();
  static int64_t steady_ns();
  ShmOneSided(std::string job_id, int rank, std::vector<pid_t> pids, bool cma,
              std::vector<const std::atomic<uint64_t>*> activity, std::vector<Doorbell*> bells,
              std::vector<Calls> calls = {}, Clock clock = steady_ns);
  ~ShmOneSided() = default;

  const OneSidedCaps& caps() const override { return caps_; }
  Region* allocate(std::size_t bytes) override;
  Region* expose(void* base, std::size_t bytes) override;
  void exposed_for_window(Region& r) override;
  void release(Region* r) override;
  void seal(Region* r) override;
  RemoteRegion* attach(int peer, const void* key, std::size_t key_bytes) override;
  void detach(RemoteRegion* r) override;
  int put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) override;
  int get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) override;
  int fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) override;
  int compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                   std::size_t width) override;
  int flush(int peer) override;
  bool attentive(int peer) override;
  void wake(int peer) override;

  // Large puts and gets go through splitter (set once, before any
  // operation): on memory reached by cross-memory attach, and from
  // mapped_min bytes on mapped segments (caps().split_min: the core sends
  // those here rather than copying them itself).
  void set_splitter(CmaSplitter* s, std::size_t mapped_min) {
    splitter_ = s;
    caps_.split_min = mapped_min;
  }
  // Whether [addr, +len) of our memory lies inside one region a window
  // exposed to peers (exposed_for_window: user memory or a segment): a
  // peer's split ask may copy from or into it (cma_split.cpp). Takes the
  // lock: asks are rare.
  bool exposes(uint64_t addr, uint64_t len);

 private:
  std::string job_id_;
  int rank_;
  std::vector<pid_t> pids_;
  bool cma_;
  std::size_t huge_max_;  // ADI3_SHM_WIN_HUGE_MAX: a window's bytes merged into huge pages
  OneSidedCaps caps_;
  std::atomic<int> fence_{0};
  // attentive(): what we last saw of each peer's poll counter and when,
  // when we last looked at all, until when it is known to be quiet, how
  // many operations in a row went to it by cross-memory attach and when we
  // last woke it with a packet (a hint: relaxed, races harmless).
  struct Watch {
    std::atomic<uint64_t> seen{0};
    std::atomic<int64_t> at_ns{0}, last_ns{0}, quiet_until_ns{0}, woke_ns{0};
    std::atomic<uint32_t> cma_run{0};
    uint32_t next_run(int64_t t);
    bool polled();
  };
  bool asleep_in_call(Watch& w, int64_t t);
  void copied(int peer);
  std::vector<const std::atomic<uint64_t>*> activity_;
  std::vector<Calls> calls_;
  std::unique_ptr<Watch[]> watch_;
  std::vector<Doorbell*> bells_;
  Clock clock_;
  CmaSplitter* splitter_ = nullptr;
  // Live allocated regions (expose() looks for the one holding its memory),
  // and user memory windows exposed (exposes()).
  std::mutex mu_;
  std::vector<Region*> allocated_;
  std::vector<Region*> windows_;
};

}  // namespace adi3::shm
