// The hardware device: libibverbs, one reliable-connected (RC) queue pair
// per peer, made when first needed, on one completion queue; one
// unreliable-datagram (UD) queue pair per rank, on a completion queue of
// its own, carries the connection manager's datagrams. Only the UD
// address (LID, queue pair number, GID) goes through the bootstrap's
// key-value space; an RC queue pair's (queue pair number, first packet
// sequence number, MTU) travels in those datagrams, so no rdma_cm is
// needed. It cannot run on the build machine (no RDMA device, no
// rdma_rxe): read it with care.
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {
namespace {

constexpr int kCqDepth = 8192;
constexpr int kSendDepth = 512;
// Our wr_ids carry the operation in their low bits: an error completion's
// opcode is undefined (only wr_id, status and qp_num are).
constexpr int kOpBits = 3;
// The UD queue pair: its Q_Key (high bit clear: not a controlled key),
// receives kept posted, send slots. A UD receive buffer starts with 40
// bytes for the Global Routing Header, present or not; the device puts
// the sender's rank (4 bytes) before each datagram's data.
constexpr uint32_t kQkey = 0x0ad13c0d;
constexpr int kUdRecvs = 64;
constexpr int kUdSends = 16;
constexpr std::size_t kGrh = 40;
constexpr std::size_t kUdPayload = 4 + VerbsDevice::kMaxDatagram;
constexpr std::size_t kUdSlot = kGrh + kUdPayload;

std::runtime_error fail(const std::string& what, int err) {
  return std::runtime_error(what + " failed: " + std::strerror(err));
}

Status map_status(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS:
      return Status::Success;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
      return Status::RemoteAccess;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_LEN_ERR:
      return Status::LocalProtection;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return Status::ReceiverNotReady;
    case IBV_WC_WR_FLUSH_ERR:
      return Status::Flushed;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
      return Status::PeerUnreachable;
    default:
      return Status::Other;
  }
}

class IbvDevice final : public VerbsDevice {
 public:
  IbvDevice(const DeviceParams& p)
      : rank_(p.rank),
        size_(p.size),
        recv_depth_(p.recv_depth),
        qps_(static_cast<std::size_t>(p.size), nullptr),
        ud_peers_(static_cast<std::size_t>(p.size)) {}

  // Not in the constructor: when a step fails, the destructor releases
  // what the steps before it made.
  void open(const DeviceParams&, const DeviceChoice& c) {
    int n = 0;
    errno = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list) {
      throw std::runtime_error(std::string("no RDMA device: ibv_get_device_list failed: ") +
                               std::strerror(errno ? errno : ENODEV) +
                               " (no RDMA kernel support on this host; for testing, ADI3_VERBS_DEVICE=soft)");
    }
    ibv_device* dev = nullptr;
    std::string seen;
    for (int i = 0; i < n; ++i) {
      const char* name = ibv_get_device_name(list[i]);
      seen += (seen.empty() ? "" : ", ") + std::string(name ? name : "?");
      if (!dev && (c.ib_name.empty() || c.ib_name == (name ? name : ""))) dev = list[i];
    }
    if (!dev) {
      ibv_free_device_list(list);
      throw std::runtime_error(n == 0 ? std::string("no RDMA device: ibv_get_device_list returned 0 devices "
                                                    "(no InfiniBand/RoCE adapter or kernel driver; for testing, "
                                                    "ADI3_VERBS_DEVICE=soft)")
                                      : "no RDMA device named '" + c.ib_name + "' (ibv_get_device_list: " + seen + ")");
    }
    name_ = ibv_get_device_name(dev);
    ctx_ = ibv_open_device(dev);
    ibv_free_device_list(list);
    if (!ctx_) throw fail("ibv_open_device(" + name_ + ")", errno);
    port_ = static_cast<uint8_t>(c.port);
    if (ibv_query_port(ctx_, port_, &port_attr_)) throw fail("ibv_query_port(" + name_ + ")", errno);
    if (port_attr_.state != IBV_PORT_ACTIVE)
      throw std::runtime_error("RDMA device " + name_ + " port " + std::to_string(c.port) + " is not active");
    if (ibv_query_gid(ctx_, port_, 0, &gid_)) throw fail("ibv_query_gid", errno);
    ibv_device_attr da{};
    if (ibv_query_device(ctx_, &da)) throw fail("ibv_query_device", errno);
    rd_atomic_ = static_cast<uint8_t>(std::min(da.max_qp_rd_atom, 16));
    pd_ = ibv_alloc_pd(ctx_);
    if (!pd_) throw fail("ibv_alloc_pd", errno);
    events_ = ibv_create_comp_channel(ctx_);
    if (!events_) throw fail("ibv_create_comp_channel", errno);
    fcntl(events_->fd, F_SETFL, fcntl(events_->fd, F_GETFL) | O_NONBLOCK);
    cq_ = ibv_create_cq(ctx_, std::min(kCqDepth, da.max_cqe), nullptr, events_, 0);
    if (!cq_) throw fail("ibv_create_cq", errno);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw fail("eventfd", errno);
    open_ud();
  }

  // The connection manager's queue pair: UD, on its own completion queue
  // (sharing the completion channel), with its receives posted.
  void open_ud() {
    ud_cq_ = ibv_create_cq(ctx_, kUdRecvs + kUdSends, nullptr, events_, 0);
    if (!ud_cq_) throw fail("ibv_create_cq (datagrams)", errno);
    ud_mem_.assign(kUdSlot * (kUdRecvs + kUdSends), 0);
    ud_mr_ = ibv_reg_mr(pd_, ud_mem_.data(), ud_mem_.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!ud_mr_) throw fail("ibv_reg_mr (datagram buffers)", errno);
    ibv_qp_init_attr a{};
    a.send_cq = ud_cq_;
    a.recv_cq = ud_cq_;
    a.qp_type = IBV_QPT_UD;
    a.cap.max_send_wr = kUdSends;
    a.cap.max_recv_wr = kUdRecvs;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    ud_ = ibv_create_qp(pd_, &a);
    if (!ud_) throw fail("ibv_create_qp (UD)", errno);
    ibv_qp_attr m{};
    m.qp_state = IBV_QPS_INIT;
    m.pkey_index = 0;
    m.port_num = port_;
    m.qkey = kQkey;
    if (ibv_modify_qp(ud_, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
      throw fail("ibv_modify_qp (UD) to INIT", errno);
    for (int i = 0; i < kUdRecvs; ++i)
      if (!post_ud_recv(i)) throw fail("ibv_post_recv (UD)", errno);
    ibv_qp_attr r{};
    r.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(ud_, &r, IBV_QP_STATE)) throw fail("ibv_modify_qp (UD) to RTR", errno);
    ibv_qp_attr t{};
    t.qp_state = IBV_QPS_RTS;
    t.sq_psn = 0;
    if (ibv_modify_qp(ud_, &t, IBV_QP_STATE | IBV_QP_SQ_PSN)) throw fail("ibv_modify_qp (UD) to RTS", errno);
    for (int i = 0; i < kUdSends; ++i) free_sends_.push_back(kUdRecvs + i);
  }

  ~IbvDevice() override {
    for (ibv_qp* qp : qps_)
      if (qp) ibv_destroy_qp(qp);
    if (ud_) ibv_destroy_qp(ud_);
    for (UdPeer& u : ud_peers_)
      if (u.ah) ibv_destroy_ah(u.ah);
    if (ud_mr_) ibv_dereg_mr(ud_mr_);
    if (ud_cq_) {
      if (ud_unacked_) ibv_ack_cq_events(ud_cq_, ud_unacked_);
      ibv_destroy_cq(ud_cq_);
    }
    if (cq_) {
      if (unacked_) ibv_ack_cq_events(cq_, unacked_);
      ibv_destroy_cq(cq_);
    }
    if (events_) ibv_destroy_comp_channel(events_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
    if (wake_fd_ >= 0) close(wake_fd_);
  }

  const char* name() const override { return name_.c_str(); }

  // "lid qpn gid(32 hex)": our UD queue pair, published once.
  std::string datagram_address() const override {
    char buf[96];
    int at = std::snprintf(buf, sizeof buf, "%x %x ", port_attr_.lid, ud_->qp_num);
    for (uint8_t b : gid_.raw) at += std::snprintf(buf + at, sizeof buf - static_cast<std::size_t>(at), "%02x", b);
    return buf;
  }

  void datagram_peer(int peer, const std::string& addr) override {
    unsigned lid = 0, qpn = 0;
    char gidhex[33] = {};
    if (peer < 0 || peer >= size_ || std::sscanf(addr.c_str(), "%x %x %32s", &lid, &qpn, gidhex) != 3 || lid > 0xffff ||
        qpn == 0 || qpn > 0xffffff || !parse_gid(gidhex, ud_peers_[static_cast<std::size_t>(peer)].gid))
      throw std::runtime_error("rank " + std::to_string(peer) + " published a malformed verbs datagram address: '" +
                               addr + "'");
    UdPeer& u = ud_peers_[static_cast<std::size_t>(peer)];
    u.lid = static_cast<uint16_t>(lid);
    u.qpn = qpn;
  }

  bool send_datagram(int peer, const void* data, std::size_t len) override {
    if (peer < 0 || peer >= size_ || len > kMaxDatagram) return false;
    if (free_sends_.empty()) drain_ud();
    UdPeer& u = ud_peers_[static_cast<std::size_t>(peer)];
    if (!u.qpn || free_sends_.empty()) return false;
    if (!u.ah) {  // an address handle per peer, made at its first datagram
      ibv_ah_attr ah{};
      ah.dlid = u.lid;
      ah.port_num = port_;
      if (port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET || u.lid == 0) {  // RoCE: routed by GID
        ah.is_global = 1;
        ah.grh.dgid = u.gid;
        ah.grh.sgid_index = 0;
        ah.grh.hop_limit = 64;
      }
      u.ah = ibv_create_ah(pd_, &ah);
      if (!u.ah) return false;
    }
    const int slot = free_sends_.back();
    char* buf = ud_mem_.data() + static_cast<std::size_t>(slot) * kUdSlot;
    const uint32_t from = htonl(static_cast<uint32_t>(rank_));
    std::memcpy(buf, &from, 4);
    std::memcpy(buf + 4, data, len);
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(4 + len), ud_mr_->lkey};
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
    if (ibv_post_send(ud_, &wr, &bad)) return false;
    free_sends_.pop_back();
    return true;
  }

  int recv_datagram(void* out, std::size_t max, int* peer) override {
    drain_ud();
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

  std::string create_qp(int peer) override {
    if (peer < 0 || peer >= size_) throw std::runtime_error("verbs: no rank " + std::to_string(peer));
    ibv_qp*& qp = qps_[static_cast<std::size_t>(peer)];
    if (!qp) {
      ibv_qp_init_attr a{};
      a.send_cq = cq_;
      a.recv_cq = cq_;
      a.qp_type = IBV_QPT_RC;
      a.cap.max_send_wr = kSendDepth;
      a.cap.max_recv_wr = static_cast<uint32_t>(recv_depth_);
      a.cap.max_send_sge = 1;
      a.cap.max_recv_sge = 1;
      ibv_qp* q = ibv_create_qp(pd_, &a);
      if (!q) throw fail("ibv_create_qp (for rank " + std::to_string(peer) + ")", errno);
      ibv_qp_attr m{};
      m.qp_state = IBV_QPS_INIT;
      m.pkey_index = 0;
      m.port_num = port_;
      m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
      if (ibv_modify_qp(q, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        const int err = errno;
        ibv_destroy_qp(q);
        throw fail("ibv_modify_qp to INIT", err);
      }
      qp = q;
      by_qpn_[qp->qp_num] = peer;
      ++qps_created_;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%x %x %x", qp->qp_num, psn(rank_, peer),
                  static_cast<unsigned>(port_attr_.active_mtu));
    return buf;
  }
  int qps_created() const override { return qps_created_; }

  // "qpn psn mtu" from the peer's datagram; its LID and GID are those of
  // its published UD address (one port per rank).
  void connect(int peer, const std::string& addr) override {
    unsigned qpn = 0, rpsn = 0, mtu = 0;
    char extra = 0;
    if (peer < 0 || peer >= size_ || std::sscanf(addr.c_str(), "%x %x %x%c", &qpn, &rpsn, &mtu, &extra) != 3 ||
        qpn == 0 || qpn > 0xffffff || rpsn > 0xffffff || mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
      throw std::runtime_error("rank " + std::to_string(peer) + " sent a malformed queue pair address: '" + addr + "'");
    if (!qps_[static_cast<std::size_t>(peer)])
      throw std::runtime_error("verbs: connect to rank " + std::to_string(peer) + " before create_qp");
    const UdPeer& u = ud_peers_[static_cast<std::size_t>(peer)];
    const unsigned lid = u.lid;
    const ibv_gid gid = u.gid;
    ibv_qp* qp = qps_[static_cast<std::size_t>(peer)];
    ibv_qp_attr m{};
    m.qp_state = IBV_QPS_RTR;
    m.path_mtu = static_cast<ibv_mtu>(std::min<unsigned>(mtu, port_attr_.active_mtu));
    m.dest_qp_num = qpn;
    m.rq_psn = rpsn;
    m.max_dest_rd_atomic = rd_atomic_;
    m.min_rnr_timer = 12;  // 0.64 ms
    m.ah_attr.port_num = port_;
    m.ah_attr.dlid = static_cast<uint16_t>(lid);
    if (port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET || lid == 0) {  // RoCE: routed by GID
      m.ah_attr.is_global = 1;
      m.ah_attr.grh.dgid = gid;
      m.ah_attr.grh.sgid_index = 0;
      m.ah_attr.grh.hop_limit = 64;
    }
    if (ibv_modify_qp(qp, &m,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      throw fail("ibv_modify_qp to RTR (rank " + std::to_string(peer) + ")", errno);
    ibv_qp_attr r{};
    r.qp_state = IBV_QPS_RTS;
    r.timeout = 14;  // 4.096 us * 2^14 = 67 ms per try
    r.retry_cnt = 7;
    r.rnr_retry = 7;  // retry forever: the credits make RNR a bug, not a state
    r.sq_psn = psn(rank_, peer);
    r.max_rd_atomic = rd_atomic_;
    if (ibv_modify_qp(qp, &r,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC))
      throw fail("ibv_modify_qp to RTS (rank " + std::to_string(peer) + ")", errno);
  }

  Region reg(void* addr, std::size_t len, uint32_t access) override {
    int flags = 0;
    if (access & kLocalWrite) flags |= IBV_ACCESS_LOCAL_WRITE;
    if (access & kRemoteRead) flags |= IBV_ACCESS_REMOTE_READ;
    if (access & kRemoteWrite) flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (access & kRemoteAtomic) flags |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
    ibv_mr* mr = ibv_reg_mr(pd_, addr, len, flags);
    if (!mr) throw fail("ibv_reg_mr of " + std::to_string(len) + " bytes", errno);
    return {reinterpret_cast<uintptr_t>(addr), len, mr->lkey, mr->rkey, mr};
  }
  void dereg(Region& r) override {
    if (r.handle) ibv_dereg_mr(static_cast<ibv_mr*>(r.handle));
    r = Region{};
  }
  // Pinned pages: a region freed and mapped again is not followed.
  bool registrations_follow_mappings() const override { return false; }

  bool post_recv(int peer, uint64_t wr_id) override {
    ibv_qp* qp = qps_[static_cast<std::size_t>(peer)];
    if (!qp) return false;
    ibv_recv_wr wr{};
    wr.wr_id = wr_id << kOpBits | static_cast<uint64_t>(Op::RecvImm);
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, &wr, &bad) == 0;
  }

  bool write_imm(int peer, uint64_t wr_id, const void* local, std::size_t len, uint32_t lkey, uint64_t remote,
                 uint32_t rkey, uint32_t imm) override {
    ibv_sge sge{reinterpret_cast<uintptr_t>(local), static_cast<uint32_t>(len), lkey};
    ibv_send_wr wr = base(wr_id, Op::WriteImm, IBV_WR_RDMA_WRITE_WITH_IMM, len ? &sge : nullptr);
    wr.imm_data = htonl(imm);
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return post(peer, wr);
  }
  bool write(int peer, uint64_t wr_id, const void* local, std::size_t len, uint32_t lkey, uint64_t remote,
             uint32_t rkey) override {
    ibv_sge sge{reinterpret_cast<uintptr_t>(local), static_cast<uint32_t>(len), lkey};
    ibv_send_wr wr = base(wr_id, Op::Write, IBV_WR_RDMA_WRITE, len ? &sge : nullptr);
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return post(peer, wr);
  }
  bool read(int peer, uint64_t wr_id, void* local, std::size_t len, uint32_t lkey, uint64_t remote,
            uint32_t rkey) override {
    ibv_sge sge{reinterpret_cast<uintptr_t>(local), static_cast<uint32_t>(len), lkey};
    ibv_send_wr wr = base(wr_id, Op::Read, IBV_WR_RDMA_READ, &sge);
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return post(peer, wr);
  }
  // A chain of up to kChain signaled requests linked in one ibv_post_send
  // (one doorbell); the send queue may take only a prefix (bad names the
  // first refused): that many were posted, each yields its completion.
  std::size_t post_list(int peer, uint64_t wr_id, const ListEntry* list, std::size_t n, uint32_t lkey, uint32_t rkey,
                        bool write, std::size_t* completions) override {
    constexpr std::size_t kChain = 32;
    *completions = 0;
    ibv_qp* qp = qps_[static_cast<std::size_t>(peer)];
    if (!qp || n == 0) return 0;
    const std::size_t k = std::min(n, kChain);
    ibv_sge sge[kChain];
    ibv_send_wr wr[kChain];
    for (std::size_t i = 0; i < k; ++i) {
      sge[i] = {reinterpret_cast<uintptr_t>(list[i].local), static_cast<uint32_t>(list[i].len), lkey};
      wr[i] = base(wr_id, write ? Op::Write : Op::Read, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
                   list[i].len || !write ? &sge[i] : nullptr);
      wr[i].wr.rdma.remote_addr = list[i].remote;
      wr[i].wr.rdma.rkey = rkey;
      wr[i].next = i + 1 < k ? &wr[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    std::size_t posted = k;
    if (ibv_post_send(qp, wr, &bad) != 0) posted = bad >= wr && bad < wr + k ? static_cast<std::size_t>(bad - wr) : 0;
    *completions = posted;
    return posted;
  }
  bool fetch_add(int peer, uint64_t wr_id, uint64_t* result, uint32_t lkey, uint64_t remote, uint32_t rkey,
                 uint64_t add) override {
    return atomic(peer, wr_id, Op::FetchAdd, IBV_WR_ATOMIC_FETCH_AND_ADD, result, lkey, remote, rkey, add, 0);
  }
  bool compare_swap(int peer, uint64_t wr_id, uint64_t* result, uint32_t lkey, uint64_t remote, uint32_t rkey,
                    uint64_t compare, uint64_t swap) override {
    return atomic(peer, wr_id, Op::CompareSwap, IBV_WR_ATOMIC_CMP_AND_SWP, result, lkey, remote, rkey, compare, swap);
  }

  int poll(Completion* out, int max) override {
    ibv_wc wc[32];
    int n = ibv_poll_cq(cq_, std::min(max, 32), wc);
    if (n < 0) n = 0;
    int kept = 0;
    for (int i = 0; i < n; ++i) {
      auto it = by_qpn_.find(wc[i].qp_num);
      if (it == by_qpn_.end()) continue;
      Completion& c = out[kept++];
      c.wr_id = wc[i].wr_id >> kOpBits;
      c.op = static_cast<Op>(wc[i].wr_id & ((1u << kOpBits) - 1));
      c.peer = it->second;
      c.status = map_status(wc[i].status);
      c.imm = (wc[i].status == IBV_WC_SUCCESS && (wc[i].wc_flags & IBV_WC_WITH_IMM)) ? ntohl(wc[i].imm_data) : 0;
      c.bytes = wc[i].byte_len;
    }
    return kept;
  }

  // Arms the completion event, then sleeps on it or the wake eventfd. A
  // completion that arrived before arming is found by the caller's next
  // poll after the timeout (the core bounds its sleeps).
  void wait(std::chrono::microseconds timeout) override {
    if (ibv_req_notify_cq(cq_, 0) || ibv_req_notify_cq(ud_cq_, 0)) return;
    if (!inbox_.empty()) return;
    pollfd fds[2] = {{events_->fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int ms = static_cast<int>((timeout.count() + 999) / 1000);
    if (::poll(fds, 2, ms) <= 0) return;
    if (fds[0].revents & POLLIN) {
      ibv_cq* cq = nullptr;
      void* ctx = nullptr;
      // Events are acknowledged on the queue they came from, in batches.
      if (ibv_get_cq_event(events_, &cq, &ctx) == 0) {
        unsigned& n = cq == ud_cq_ ? ud_unacked_ : unacked_;
        if (++n >= 64) {
          ibv_ack_cq_events(cq, n);
          n = 0;
        }
      }
    }
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      [[maybe_unused]] ssize_t r = ::read(wake_fd_, &v, sizeof v);
    }
  }
  void wake() override {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t r = ::write(wake_fd_, &one, sizeof one);
  }

 private:
  // Both sides derive a pair's starting packet sequence number.
  static uint32_t psn(int from, int to) {
    return (static_cast<uint32_t>(from) * 7919u + static_cast<uint32_t>(to) * 104729u) & 0xffffffu;
  }

  static ibv_send_wr base(uint64_t wr_id, Op op, ibv_wr_opcode code, ibv_sge* sge) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id << kOpBits | static_cast<uint64_t>(op);
    wr.opcode = code;
    wr.sg_list = sge;
    wr.num_sge = sge ? 1 : 0;
    wr.send_flags = IBV_SEND_SIGNALED;
    return wr;
  }
  bool atomic(int peer, uint64_t wr_id, Op op, ibv_wr_opcode code, uint64_t* result, uint32_t lkey, uint64_t remote,
              uint32_t rkey, uint64_t a, uint64_t b) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(result), 8, lkey};
    ibv_send_wr wr = base(wr_id, op, code, &sge);
    wr.wr.atomic.remote_addr = remote;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = a;
    wr.wr.atomic.swap = b;
    return post(peer, wr);
  }
  bool post(int peer, ibv_send_wr& wr) {
    ibv_qp* qp = qps_[static_cast<std::size_t>(peer)];
    ibv_send_wr* bad = nullptr;
    return qp && ibv_post_send(qp, &wr, &bad) == 0;
  }
  bool post_ud_recv(int slot) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(ud_mem_.data() + static_cast<std::size_t>(slot) * kUdSlot),
                static_cast<uint32_t>(kUdSlot), ud_mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = static_cast<uint64_t>(slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(ud_, &wr, &bad) == 0;
  }
  // Takes the UD completion queue's completions: a send's frees its slot;
  // a receive's datagram goes to inbox_ if well formed and its sender's
  // rank is what it says: the source queue pair (and, on InfiniBand, the
  // source LID) must be the ones that rank published. The buffer is
  // reposted at once.
  void drain_ud() {
    ibv_wc wc[8];
    for (int n; (n = ibv_poll_cq(ud_cq_, 8, wc)) > 0;) {
      for (int i = 0; i < n; ++i) {
        const uint64_t slot = wc[i].wr_id;
        if (slot >= static_cast<uint64_t>(kUdRecvs)) {
          if (slot < static_cast<uint64_t>(kUdRecvs + kUdSends)) free_sends_.push_back(static_cast<int>(slot));
          continue;
        }
        const char* buf = ud_mem_.data() + slot * kUdSlot;
        if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= kGrh + 4 && wc[i].byte_len <= kUdSlot) {
          uint32_t f = 0;
          std::memcpy(&f, buf + kGrh, 4);
          const uint32_t from = ntohl(f);
          if (from < static_cast<uint32_t>(size_)) {
            const UdPeer& u = ud_peers_[from];
            const bool lid_ok = port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET || !u.lid || u.lid == wc[i].slid;
            if (u.qpn && u.qpn == wc[i].src_qp && lid_ok)
              inbox_.emplace_back(static_cast<int>(from), std::string(buf + kGrh + 4, wc[i].byte_len - kGrh - 4));
          }
        }
        post_ud_recv(static_cast<int>(slot));
      }
    }
  }
  static bool parse_gid(const char* hex, ibv_gid& gid) {
    if (std::strlen(hex) != 32) return false;
    for (int i = 0; i < 16; ++i) {
      unsigned b = 0;
      if (std::sscanf(hex + 2 * i, "%2x", &b) != 1) return false;
      gid.raw[i] = static_cast<uint8_t>(b);
    }
    return true;
  }

  struct UdPeer {
    uint16_t lid = 0;
    uint32_t qpn = 0;  // 0: not known
    ibv_gid gid{};
    ibv_ah* ah = nullptr;
  };

  int rank_, size_, recv_depth_;
  std::string name_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* events_ = nullptr;
  ibv_cq* cq_ = nullptr;
  uint8_t port_ = 1;
  uint8_t rd_atomic_ = 1;
  ibv_port_attr port_attr_{};
  ibv_gid gid_{};
  std::vector<ibv_qp*> qps_;
  std::unordered_map<uint32_t, int> by_qpn_;
  int wake_fd_ = -1;
  unsigned unacked_ = 0, ud_unacked_ = 0;
  int qps_created_ = 0;
  ibv_qp* ud_ = nullptr;
  ibv_cq* ud_cq_ = nullptr;
  ibv_mr* ud_mr_ = nullptr;
  std::vector<char> ud_mem_;  // [receives][sends] slots of kUdSlot
  std::vector<int> free_sends_;
  std::vector<UdPeer> ud_peers_;
  std::deque<std::pair<int, std::string>> inbox_;  // datagrams polled, not yet taken
};

}  // namespace

std::unique_ptr<VerbsDevice> open_ibv_device(const DeviceParams& p, const DeviceChoice& c) {
  auto d = std::make_unique<IbvDevice>(p);
  d->open(p, c);
  return d;
}

}  // namespace adi3::verbs
