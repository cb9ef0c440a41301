// See ibv_datagrams.hpp.
#include "channels/verbs/ibv_datagrams.hpp"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {
namespace {

// The Q_Key (high bit clear: not a controlled key), receives kept posted,
// send slots. A receive buffer starts with 40 bytes for the Global Routing
// Header, present or not; we put the sender's rank (4 bytes) before each
// datagram's data.
constexpr uint32_t kQkey = 0x0ad13c0d;
constexpr int kRecvs = 64;
constexpr int kSends = 16;
constexpr std::size_t kGrh = 40;
constexpr std::size_t kSlot = kGrh + 4 + VerbsDevice::kMaxDatagram;

bool parse_gid(const char* hex, ibv_gid& gid) {
  if (std::strlen(hex) != 32) return false;
  for (int i = 0; i < 16; ++i) {
    unsigned b = 0;
    if (std::sscanf(hex + 2 * i, "%2x", &b) != 1) return false;
    gid.raw[i] = static_cast<uint8_t>(b);
  }
  return true;
}

}  // namespace

std::runtime_error ibv_failure(const std::string& what, int err) {
  return std::runtime_error(what + " failed: " + std::strerror(err));
}

void route_to(ibv_ah_attr& ah, const IbvPort& port, uint16_t lid, const ibv_gid& gid) {
  ah.dlid = lid;
  ah.port_num = port.num;
  if (port.attr.link_layer == IBV_LINK_LAYER_ETHERNET || lid == 0) {
    ah.is_global = 1;
    ah.grh.dgid = gid;
    ah.grh.sgid_index = 0;
    ah.grh.hop_limit = 64;
  }
}

void IbvDatagrams::open(ibv_context* ctx, ibv_pd* pd, ibv_comp_channel* events, const IbvPort& port) {
  pd_ = pd;
  port_ = port;
  cq_ = ibv_create_cq(ctx, kRecvs + kSends, nullptr, events, 0);
  if (!cq_) throw ibv_failure("ibv_create_cq (datagrams)", errno);
  mem_.assign(kSlot * (kRecvs + kSends), 0);
  mr_ = ibv_reg_mr(pd_, mem_.data(), mem_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr_) throw ibv_failure("ibv_reg_mr (datagram buffers)", errno);
  ibv_qp_init_attr a{};
  a.send_cq = cq_;
  a.recv_cq = cq_;
  a.qp_type = IBV_QPT_UD;
  a.cap.max_send_wr = kSends;
  a.cap.max_recv_wr = kRecvs;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  qp_ = ibv_create_qp(pd_, &a);
  if (!qp_) throw ibv_failure("ibv_create_qp (UD)", errno);
  ibv_qp_attr m{};
  m.qp_state = IBV_QPS_INIT;
  m.pkey_index = 0;
  m.port_num = port_.num;
  m.qkey = kQkey;
  if (ibv_modify_qp(qp_, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
    throw ibv_failure("ibv_modify_qp (UD) to INIT", errno);
  for (int i = 0; i < kRecvs; ++i)
    if (!post_recv(i)) throw ibv_failure("ibv_post_recv (UD)", errno);
  ibv_qp_attr r{};
  r.qp_state = IBV_QPS_RTR;
  if (ibv_modify_qp(qp_, &r, IBV_QP_STATE)) throw ibv_failure("ibv_modify_qp (UD) to RTR", errno);
  ibv_qp_attr t{};
  t.qp_state = IBV_QPS_RTS;
  t.sq_psn = 0;
  if (ibv_modify_qp(qp_, &t, IBV_QP_STATE | IBV_QP_SQ_PSN)) throw ibv_failure("ibv_modify_qp (UD) to RTS", errno);
  for (int i = 0; i < kSends; ++i) free_sends_.push_back(kRecvs + i);
}

IbvDatagrams::~IbvDatagrams() {
  if (qp_) ibv_destroy_qp(qp_);
  for (Peer& u : peers_)
    if (u.ah) ibv_destroy_ah(u.ah);
  if (mr_) ibv_dereg_mr(mr_);
  if (cq_) {
    if (unacked_) ibv_ack_cq_events(cq_, unacked_);
    ibv_destroy_cq(cq_);
  }
}

std::string IbvDatagrams::address() const {
  char buf[96];
  int at = std::snprintf(buf, sizeof buf, "%x %x ", port_.attr.lid, qp_->qp_num);
  for (uint8_t b : port_.gid.raw) at += std::snprintf(buf + at, sizeof buf - static_cast<std::size_t>(at), "%02x", b);
  return buf;
}

void IbvDatagrams::set_peer(int peer, const std::string& addr) {
  unsigned lid = 0, qpn = 0;
  char gidhex[33] = {};
  if (peer < 0 || peer >= size_ || std::sscanf(addr.c_str(), "%x %x %32s", &lid, &qpn, gidhex) != 3 || lid > 0xffff ||
      qpn == 0 || qpn > 0xffffff || !parse_gid(gidhex, peers_[static_cast<std::size_t>(peer)].gid))
    throw std::runtime_error("rank " + std::to_string(peer) + " published a malformed verbs datagram address: '" +
                             addr + "'");
  Peer& u = peers_[static_cast<std::size_t>(peer)];
  u.lid = static_cast<uint16_t>(lid);
  u.qpn = qpn;
}

bool IbvDatagrams::send(int peer, const void* data, std::size_t len) {
  if (peer < 0 || peer >= size_ || len > VerbsDevice::kMaxDatagram) return false;
  if (free_sends_.empty()) drain();
  Peer& u = peers_[static_cast<std::size_t>(peer)];
  if (!u.qpn || free_sends_.empty()) return false;
  if (!u.ah) {  // an address handle per peer, made at its first datagram
    ibv_ah_attr ah{};
    route_to(ah, port_, u.lid, u.gid);
    u.ah = ibv_create_ah(pd_, &ah);
    if (!u.ah) return false;
  }
  const int slot = free_sends_.back();
  char* buf = mem_.data() + static_cast<std::size_t>(slot) * kSlot;
  const uint32_t from = htonl(static_cast<uint32_t>(rank_));
  std::memcpy(buf, &from, 4);
  std::memcpy(buf + 4, data, len);
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(4 + len), mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = static_cast<uint64_t>(slot);
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = u.ah;
  wr.wr.ud.remote_qpn = u.qpn;
  wr.wr.ud.remote_qkey = kQkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(qp_, &wr, &bad)) return false;
  free_sends_.pop_back();
  return true;
}

int IbvDatagrams::recv(void* out, std::size_t max, int* peer) {
  drain();
  while (!inbox_.empty()) {
    auto [from, bytes] = std::move(inbox_.front());
    inbox_.pop_front();
    if (bytes.size() > max) continue;  // as a receive buffer too short: lost
    std::memcpy(out, bytes.data(), bytes.size());
    *peer = from;
    return static_cast<int>(bytes.size());
  }
  return -1;
}

bool IbvDatagrams::post_recv(int slot) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(mem_.data() + static_cast<std::size_t>(slot) * kSlot),
              static_cast<uint32_t>(kSlot), mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = static_cast<uint64_t>(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp_, &wr, &bad) == 0;
}

// A send's completion frees its slot; a receive's datagram goes to inbox_
// if well formed and its sender's rank is what it says: the source queue
// pair (and, on InfiniBand, the source LID) must be the ones that rank
// published. The buffer is reposted at once.
void IbvDatagrams::drain() {
  ibv_wc wc[8];
  for (int n; (n = ibv_poll_cq(cq_, 8, wc)) > 0;) {
    for (int i = 0; i < n; ++i) {
      const uint64_t slot = wc[i].wr_id;
      if (slot >= static_cast<uint64_t>(kRecvs)) {
        if (slot < static_cast<uint64_t>(kRecvs + kSends)) free_sends_.push_back(static_cast<int>(slot));
        continue;
      }
      const char* buf = mem_.data() + slot * kSlot;
      if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= kGrh + 4 && wc[i].byte_len <= kSlot) {
        uint32_t f = 0;
        std::memcpy(&f, buf + kGrh, 4);
        const uint32_t from = ntohl(f);
        if (from < static_cast<uint32_t>(size_)) {
          const Peer& u = peers_[from];
          const bool lid_ok = port_.attr.link_layer == IBV_LINK_LAYER_ETHERNET || !u.lid || u.lid == wc[i].slid;
          if (u.qpn && u.qpn == wc[i].src_qp && lid_ok)
            inbox_.emplace_back(static_cast<int>(from), std::string(buf + kGrh + 4, wc[i].byte_len - kGrh - 4));
        }
      }
      post_recv(static_cast<int>(slot));
    }
  }
}

}  // namespace adi3::verbs
