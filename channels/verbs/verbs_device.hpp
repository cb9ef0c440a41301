// The narrow interface the verbs channel's protocols sit on: the handful of
// RDMA verbs they use, with two implementations behind it.
//   - IbvDevice (ibv_device.*): libibverbs, reliable-connected queue pairs.
//   - SoftDevice (soft_device.*): processes on one host, shared memory and
//     cross-memory attach, obeying the same completion and ordering rules
//     so the protocols can be tested where no RDMA hardware exists.
//
// The rules both obey (those of an RC queue pair):
//   - Work requests to one peer execute in order; each posted operation
//     yields exactly one completion on this side, in posting order per peer.
//   - A write with immediate consumes one receive the target posted for the
//     initiator, and its receive completion (carrying the immediate) appears
//     at the target only after the written bytes are visible there.
//   - An access the target's registration does not allow (unknown or stale
//     key, range outside the region, missing permission) completes with
//     RemoteAccess; the queue pair is then in error and every later request
//     to that peer completes with Flushed. Nothing crashes.
//   - No receive posted at the target: ReceiverNotReady (RNR retries out).
//   - Atomics act on 8 aligned bytes and are atomic only against other
//     atomics of the same device (a NIC's atomics are not coherent with the
//     CPU's); fetch_add and compare_swap return the old value.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "channels/channel.hpp"  // WaitCondition

namespace adi3::verbs {

enum Access : uint32_t {
  kLocalWrite = 1,
  kRemoteRead = 2,
  kRemoteWrite = 4,
  kRemoteAtomic = 8,
};

// A registered memory region.
struct Region {
  uint64_t addr = 0;
  std::size_t len = 0;
  uint32_t lkey = 0;       // names it in local scatter/gather entries
  uint32_t rkey = 0;       // names it to peers
  void* handle = nullptr;  // the implementation's (ibv_mr*, table slot)
};

enum class Op : uint8_t { WriteImm, Read, FetchAdd, CompareSwap, RecvImm, Write };

enum class Status : uint8_t {
  Success,
  RemoteAccess,      // bad key, range or permission at the target
  LocalProtection,   // bad local buffer or key
  ReceiverNotReady,  // no receive posted at the target
  Flushed,           // the queue pair was already in error
  PeerUnreachable,   // transport retries exhausted, or the peer is gone
  Other,
};
const char* status_text(Status s);

struct Completion {
  uint64_t wr_id = 0;
  int peer = -1;
  Op op = Op::WriteImm;
  Status status = Status::Success;
  uint32_t imm = 0;    // RecvImm: the immediate
  uint32_t bytes = 0;  // RecvImm: bytes written
};

class VerbsDevice {
 public:
  virtual ~VerbsDevice() = default;
  virtual const char* name() const = 0;  // "soft", "mlx5_0"
  // ---- Connection management (lazy reliable-connected queue pairs) ----
  // Each rank publishes one datagram address at start (through the
  // bootstrap's key-value space): on hardware its unreliable-datagram (UD)
  // queue pair. A reliable-connected queue pair to a peer is made only when
  // the channel first needs it: create_qp() gives this side's address for
  // it, which reaches the peer in a datagram, and connect() takes the
  // peer's. Datagrams follow UD rules: each is whole or absent (dropped
  // when the target has no receive posted, never reported to the sender),
  // at most kMaxDatagram bytes, and carry their sender's rank as checked by
  // the device (the source queue pair must be the one that rank published).
  static constexpr std::size_t kMaxDatagram = 192;
  virtual std::string datagram_address() const = 0;
  // A peer's published datagram address; throws std::runtime_error when
  // malformed.
  virtual void datagram_peer(int peer, const std::string& address) = 0;
  // After every rank took everyone's datagram address (a bootstrap barrier).
  virtual void started() {}
  // false: not sent now (no send slot); the caller retries later.
  virtual bool send_datagram(int peer, const void* data, std::size_t len) = 0;
  // One arrived datagram into buf (up to max bytes): its length, the
  // sender in *peer; -1 when none.
  virtual int recv_datagram(void* buf, std::size_t max, int* peer) = 0;
  // Creates the queue pair to `peer` (ready for post_recv, not yet for
  // sends) and returns the address the peer connects it with. Throws
  // std::runtime_error when the device cannot.
  virtual std::string create_qp(int peer) = 0;
  // Connects the queue pair create_qp() made to the peer's (after this the
  // local side may send; the peer's side must be connected before a
  // request reaches it, else the request fails with PeerUnreachable).
  // Throws std::runtime_error on a malformed or unusable address.
  virtual void connect(int peer, const std::string& remote_address) = 0;
  // Reliable-connected queue pairs this device created (for tests and the
  // report; the datagram queue pair is not counted).
  virtual int qps_created() const = 0;

  // Throws std::runtime_error (naming the region) when it cannot register.
  virtual Region reg(void* addr, std::size_t len, uint32_t access) = 0;
  virtual void dereg(Region& r) = 0;
  // Whether a registration follows the mapping (re-mapped pages are seen):
  // then a registration cache may keep regions across frees.
  virtual bool registrations_follow_mappings() const = 0;

  // Work requests, on a connected queue pair only (post_recv: one that
  // create_qp() made). false: the send queue is full (poll, then retry);
  // the request was not posted. Every accepted one yields one completion.
  virtual bool post_recv(int peer, uint64_t wr_id) = 0;
  virtual bool write_imm(int peer, uint64_t wr_id, const void* local, std::size_t len, uint32_t lkey, uint64_t remote,
                         uint32_t rkey, uint32_t imm) = 0;
  // A plain RDMA write: no receive is consumed, the target sees nothing.
  virtual bool write(int peer, uint64_t wr_id, const void* local, std::size_t len, uint32_t lkey, uint64_t remote,
                     uint32_t rkey) = 0;
  virtual bool read(int peer, uint64_t wr_id, void* local, std::size_t len, uint32_t lkey, uint64_t remote,
                    uint32_t rkey) = 0;
  // Plain RDMA writes (or reads) of a list, local[i] <-> remote[i] for len[i]
  // bytes, all local buffers under lkey, all remote under rkey: posted as
  // one chain of work requests where the device can. Returns how many
  // entries it posted (the caller retries the rest after polling: 0 when
  // the send queue is full) and in *completions how many completions with
  // wr_id they will yield (one for a whole chain, or one per entry).
  struct ListEntry {
    char* local;
    std::size_t len;
    uint64_t remote;
  };
  virtual std::size_t post_list(int peer, uint64_t wr_id, const ListEntry* list, std::size_t n, uint32_t lkey,
                                uint32_t rkey, bool write, std::size_t* completions) {
    // Default: one signaled request per entry.
    std::size_t i = 0;
    for (; i < n; ++i) {
      const ListEntry& e = list[i];
      if (!(write ? this->write(peer, wr_id, e.local, e.len, lkey, e.remote, rkey)
                  : read(peer, wr_id, e.local, e.len, lkey, e.remote, rkey)))
        break;
    }
    *completions = i;
    return i;
  }
  // *result receives the old value (8 bytes, registered with lkey).
  virtual bool fetch_add(int peer, uint64_t wr_id, uint64_t* result, uint32_t lkey, uint64_t remote, uint32_t rkey,
                         uint64_t add) = 0;
  virtual bool compare_swap(int peer, uint64_t wr_id, uint64_t* result, uint32_t lkey, uint64_t remote, uint32_t rkey,
                            uint64_t compare, uint64_t swap) = 0;

  // Up to `max` completions (send and receive side together).
  virtual int poll(Completion* out, int max) = 0;
  // Sleeps until a completion may be ready, wake() was called, or timeout.
  virtual void wait(std::chrono::microseconds timeout) = 0;
  // wait() that never sleeps past `done` (Channel::wait_until): a device
  // whose wake() rings only a sleep that is already announced must check
  // done after the announcement. The default checks it once first (enough
  // for a device whose wakeups persist until consumed: an eventfd).
  virtual void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) {
    if (!done()) wait(timeout);
  }
  virtual void wake() = 0;
  // A peer the device knows to be dead (its process exited): -1 if none
  // newly found; `why` says how it was noticed.
  virtual int dead_peer(std::string& /*why*/) { return -1; }
};

// Which device ADI3_VERBS_DEVICE asks for.
struct DeviceChoice {
  enum Kind { Auto, Soft, Hardware } kind = Auto;
  std::string ib_name;  // a hardware device by name ("" = the first)
  int port = 1;
};

struct DeviceParams {
  int rank = 0;
  int size = 1;
  std::string job_id;
  int recv_depth = 0;  // receives posted per peer at most
};

// Opens the software device (throws std::runtime_error).
std::unique_ptr<VerbsDevice> open_soft_device(const DeviceParams& p);
// Opens a hardware device through libibverbs; throws std::runtime_error
// saying "no RDMA device" and what ibv_get_device_list returned when there
// is none, or which call failed.
std::unique_ptr<VerbsDevice> open_ibv_device(const DeviceParams& p, const DeviceChoice& c);

}  // namespace adi3::verbs
