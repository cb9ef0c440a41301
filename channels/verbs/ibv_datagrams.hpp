// The connection manager's transport on hardware: one unreliable-datagram
// (UD) queue pair per rank, on a completion queue of its own that shares
// the device's completion channel. Only its address (LID, queue pair
// number, GID) goes through the bootstrap; everything a reliable queue pair
// needs travels in its datagrams. Part of IbvDevice (ibv_device.cpp); it
// cannot run on the build machine (no RDMA device): read it with care.
#pragma once
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace adi3::verbs {

std::runtime_error ibv_failure(const std::string& what, int err);

// The port a device opened, as both queue pair kinds route by it.
struct IbvPort {
  uint8_t num = 1;
  ibv_port_attr attr{};
  ibv_gid gid{};
};

// Addresses a peer's port: by LID on InfiniBand, by GID on RoCE (and when
// the peer published no LID).
void route_to(ibv_ah_attr& ah, const IbvPort& port, uint16_t lid, const ibv_gid& gid);

class IbvDatagrams {
 public:
  IbvDatagrams(int rank, int size) : rank_(rank), size_(size), peers_(static_cast<std::size_t>(size)) {}
  ~IbvDatagrams();
  IbvDatagrams(const IbvDatagrams&) = delete;
  IbvDatagrams& operator=(const IbvDatagrams&) = delete;

  void open(ibv_context* ctx, ibv_pd* pd, ibv_comp_channel* events, const IbvPort& port);

  // "lid qpn gid(32 hex)": ours, published once; a peer's, as published.
  std::string address() const;
  void set_peer(int peer, const std::string& addr);
  uint16_t peer_lid(int peer) const { return peers_[static_cast<std::size_t>(peer)].lid; }
  const ibv_gid& peer_gid(int peer) const { return peers_[static_cast<std::size_t>(peer)].gid; }

  bool send(int peer, const void* data, std::size_t len);
  int recv(void* out, std::size_t max, int* peer);
  bool pending() const { return !inbox_.empty(); }

  ibv_cq* cq() const { return cq_; }
  unsigned& unacked_events() { return unacked_; }

 private:
  struct Peer {
    uint16_t lid = 0;
    uint32_t qpn = 0;  // 0: not known
    ibv_gid gid{};
    ibv_ah* ah = nullptr;
  };

  bool post_recv(int slot);
  void drain();

  int rank_, size_;
  ibv_pd* pd_ = nullptr;
  IbvPort port_;
  ibv_qp* qp_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  unsigned unacked_ = 0;
  std::vector<char> mem_;  // [receives][sends] slots
  std::vector<int> free_sends_;
  std::vector<Peer> peers_;
  std::deque<std::pair<int, std::string>> inbox_;  // polled, not yet taken
};

}  // namespace adi3::verbs
