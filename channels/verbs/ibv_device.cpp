// The hardware device: libibverbs, one reliable-connected (RC) queue pair
// per peer, made when first needed, on one completion queue; the
// connection manager's datagrams go through IbvDatagrams (its own UD
// queue pair). An RC queue pair's (queue pair number, first packet
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
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "channels/verbs/ibv_datagrams.hpp"
#include "channels/verbs/verbs_device.hpp"

namespace adi3::verbs {
namespace {

constexpr int kCqDepth = 8192;
constexpr int kSendDepth = 512;
// Our wr_ids carry the operation in their low bits: an error completion's
// opcode is undefined (only wr_id, status and qp_num are).
constexpr int kOpBits = 3;
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
        datagrams_(std::in_place, p.rank, p.size) {}

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
    if (!ctx_) throw ibv_failure("ibv_open_device(" + name_ + ")", errno);
    port_.num = static_cast<uint8_t>(c.port);
    if (ibv_query_port(ctx_, port_.num, &port_.attr)) throw ibv_failure("ibv_query_port(" + name_ + ")", errno);
    if (port_.attr.state != IBV_PORT_ACTIVE)
      throw std::runtime_error("RDMA device " + name_ + " port " + std::to_string(c.port) + " is not active");
    if (ibv_query_gid(ctx_, port_.num, 0, &port_.gid)) throw ibv_failure("ibv_query_gid", errno);
    ibv_device_attr da{};
    if (ibv_query_device(ctx_, &da)) throw ibv_failure("ibv_query_device", errno);
    rd_atomic_ = static_cast<uint8_t>(std::min(da.max_qp_rd_atom, 16));
    pd_ = ibv_alloc_pd(ctx_);
    if (!pd_) throw ibv_failure("ibv_alloc_pd", errno);
    events_ = ibv_create_comp_channel(ctx_);
    if (!events_) throw ibv_failure("ibv_create_comp_channel", errno);
    fcntl(events_->fd, F_SETFL, fcntl(events_->fd, F_GETFL) | O_NONBLOCK);
    cq_ = ibv_create_cq(ctx_, std::min(kCqDepth, da.max_cqe), nullptr, events_, 0);
    if (!cq_) throw ibv_failure("ibv_create_cq", errno);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw ibv_failure("eventfd", errno);
    datagrams_->open(ctx_, pd_, events_, port_);
  }

  ~IbvDevice() override {
    for (ibv_qp* qp : qps_)
      if (qp) ibv_destroy_qp(qp);
    datagrams_.reset();  // before the protection domain it uses
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

  std::string datagram_address() const override { return datagrams_->address(); }
  void datagram_peer(int peer, const std::string& addr) override { datagrams_->set_peer(peer, addr); }
  bool send_datagram(int peer, const void* data, std::size_t len) override { return datagrams_->send(peer, data, len); }
  int recv_datagram(void* out, std::size_t max, int* peer) override { return datagrams_->recv(out, max, peer); }

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
      if (!q) throw ibv_failure("ibv_create_qp (for rank " + std::to_string(peer) + ")", errno);
      ibv_qp_attr m{};
      m.qp_state = IBV_QPS_INIT;
      m.pkey_index = 0;
      m.port_num = port_.num;
      m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
      if (ibv_modify_qp(q, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        const int err = errno;
        ibv_destroy_qp(q);
        throw ibv_failure("ibv_modify_qp to INIT", err);
      }
      qp = q;
      by_qpn_[qp->qp_num] = peer;
      ++qps_created_;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%x %x %x", qp->qp_num, psn(rank_, peer),
                  static_cast<unsigned>(port_.attr.active_mtu));
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
    ibv_qp* qp = qps_[static_cast<std::size_t>(peer)];
    ibv_qp_attr m{};
    m.qp_state = IBV_QPS_RTR;
    m.path_mtu = static_cast<ibv_mtu>(std::min<unsigned>(mtu, port_.attr.active_mtu));
    m.dest_qp_num = qpn;
    m.rq_psn = rpsn;
    m.max_dest_rd_atomic = rd_atomic_;
    m.min_rnr_timer = 12;  // 0.64 ms
    route_to(m.ah_attr, port_, datagrams_->peer_lid(peer), datagrams_->peer_gid(peer));
    if (ibv_modify_qp(qp, &m,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      throw ibv_failure("ibv_modify_qp to RTR (rank " + std::to_string(peer) + ")", errno);
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
      throw ibv_failure("ibv_modify_qp to RTS (rank " + std::to_string(peer) + ")", errno);
  }

  Region reg(void* addr, std::size_t len, uint32_t access) override {
    int flags = 0;
    if (access & kLocalWrite) flags |= IBV_ACCESS_LOCAL_WRITE;
    if (access & kRemoteRead) flags |= IBV_ACCESS_REMOTE_READ;
    if (access & kRemoteWrite) flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (access & kRemoteAtomic) flags |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
    ibv_mr* mr = ibv_reg_mr(pd_, addr, len, flags);
    if (!mr) throw ibv_failure("ibv_reg_mr of " + std::to_string(len) + " bytes", errno);
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
    if (ibv_req_notify_cq(cq_, 0) || ibv_req_notify_cq(datagrams_->cq(), 0)) return;
    if (datagrams_->pending()) return;
    pollfd fds[2] = {{events_->fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int ms = static_cast<int>((timeout.count() + 999) / 1000);
    if (::poll(fds, 2, ms) <= 0) return;
    if (fds[0].revents & POLLIN) {
      ibv_cq* cq = nullptr;
      void* ctx = nullptr;
      // Events are acknowledged on the queue they came from, in batches.
      if (ibv_get_cq_event(events_, &cq, &ctx) == 0) {
        unsigned& n = cq == datagrams_->cq() ? datagrams_->unacked_events() : unacked_;
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
  int rank_, size_, recv_depth_;
  std::string name_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* events_ = nullptr;
  ibv_cq* cq_ = nullptr;
  IbvPort port_;
  uint8_t rd_atomic_ = 1;
  std::vector<ibv_qp*> qps_;
  std::unordered_map<uint32_t, int> by_qpn_;
  int wake_fd_ = -1;
  unsigned unacked_ = 0;
  int qps_created_ = 0;
  std::optional<IbvDatagrams> datagrams_;
};

}  // namespace

std::unique_ptr<VerbsDevice> open_ibv_device(const DeviceParams& p, const DeviceChoice& c) {
  auto d = std::make_unique<IbvDevice>(p);
  d->open(p, c);
  return d;
}

}  // namespace adi3::verbs
