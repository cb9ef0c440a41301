// The verbs channel's one-sided part (channels/onesided.hpp).
//
// A region is memory registered for remote read, write and atomics; its
// key is the owner's rank, the rkey, the address and the size. put and get
// are RDMA write and read, fetch_add and compare_swap the device's 8-byte
// atomics. Nothing is mapped at the origin (RemoteRegion::direct stays
// null, even for this rank's own regions: the NIC's atomics are not
// coherent with the CPU's, so a window over verbs reaches every location,
// its own included, through the device). Operations are posted and return;
// flush(peer) drives the completion queue until every operation to peer
// completed and hands back the atomics' old values.
//
// It lives inside the channel: it posts on the channel's device under the
// channel's lock, and the channel routes its completions here.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "channels/onesided.hpp"
#include "channels/verbs/mr_cache.hpp"
#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {

class VerbsChannel;

class VerbsOneSided final : public OneSided {
 public:
  explicit VerbsOneSided(VerbsChannel& ch);
  ~VerbsOneSided();

  const OneSidedCaps& caps() const override { return caps_; }
  adi3::Region* allocate(std::size_t bytes) override;
  adi3::Region* expose(void* base, std::size_t bytes) override;
  void release(adi3::Region* r) override;
  void seal(adi3::Region*) override {}  // nothing names a region but its key
  RemoteRegion* attach(int peer, const void* key, std::size_t key_bytes) override;
  void detach(RemoteRegion* r) override;
  int put(RemoteRegion& r, uint64_t offset, const void* src, std::size_t len) override;
  int get(RemoteRegion& r, uint64_t offset, void* dst, std::size_t len) override;
  // One chain of RDMA writes / reads (VerbsDevice::post_list).
  int put_runs(RemoteRegion& r, const Run* runs, std::size_t n, const void* local) override;
  int get_runs(RemoteRegion& r, const Run* runs, std::size_t n, void* local) override;
  int fetch_add(RemoteRegion& r, uint64_t offset, uint64_t operand, uint64_t* result, std::size_t width) override;
  int compare_swap(RemoteRegion& r, uint64_t offset, uint64_t compare, uint64_t swap, uint64_t* result,
                   std::size_t width) override;
  int flush(int peer) override;
  // The channel's dead-peer detection (the device's, paced by it).
  bool peer_alive(int peer) override;
  // Shared-memory segments for this host's ranks (shared_part.hpp).
  OneSided* shared_part() override;

  // ---- for the channel, with its lock held ----
  // A completion of one of our work requests (token: the wr_id's value).
  void completed(uint64_t token, const Completion& c);
  static constexpr uint64_t kWrKind = 3;  // the wr_id kind of one-sided requests

 private:
  struct SpanGet;
  struct Pending {
    int peer = -1;
    Region local{};  // registration of the local buffer (released at completion)
    int slot = -1;   // atomics: the registered result slot
    uint64_t* result = nullptr;
    std::size_t left = 1;  // completions still to come (a chain: as the device said)
    bool posting = false;  // a chain still being posted: not done at left == 0
    // A get of dense runs read as one covering span: scattered into the
    // packed local bytes at completion.
    std::shared_ptr<SpanGet> span;
  };
  // Posts one request (post(wr_id) returns the device's answer), waiting
  // for the peer's queue pair to be connected and for room in its send
  // queue; with the channel's lock held in g. false (errno EIO, p's
  // resources returned): the peer failed before it was connected.
  template <class Post>
  bool submit(std::unique_lock<std::mutex>& g, const Pending& p, Post&& post);
  int transfer(RemoteRegion& r, uint64_t offset, void* local, std::size_t len, bool write);
  int transfer_runs(RemoteRegion& r, const Run* runs, std::size_t n, char* local, bool write);
  int span_get(RemoteRegion& r, const Run* runs, std::size_t n, uint64_t lo, std::size_t span, char* local);
  void finish(std::map<uint64_t, Pending>::iterator it);
  template <class Post>
  int atomic(RemoteRegion& r, uint64_t offset, uint64_t* result, Post&& post);

  VerbsChannel& ch_;
  OneSidedCaps caps_;
  MrCache windows_;  // regions for windows: remote read, write and atomics
  std::vector<uint64_t> slots_mem_;
  Region slots_mr_{};
  std::vector<int> free_slots_;
  std::map<uint64_t, Pending> pending_;
  uint64_t next_token_ = 0;
  std::vector<uint64_t> outstanding_;  // per peer
  std::vector<Status> errors_;         // per peer: the first failure since its last flush
};

}  // namespace adi3::verbs
