// Partitioned point-to-point (MPI-4.0 chapter 4): MPI_Psend_init,
// MPI_Precv_init, MPI_Pready(_range,_list), MPI_Parrived.
//
// A partitioned request is a persistent request of its own class (restarted
// by MPI_Start, advanced by the progress engine) over ordinary messages on
// two contexts of the communicator that nothing else uses:
//  * setup: Psend_init sends (partitions, bytes, first tag) with the user's
//    tag, and Precv_init posts its receive, so the pairs match in the order
//    of the init calls, as the standard requires;
//  * data: each send partition travels as one message, tag first + p, as
//    soon as it is ready. The receiver posts one receive per send
//    partition (its own partitions may be fewer or more: only the total
//    size must agree), and a receive partition has arrived when the send
//    partitions covering its bytes have. Noncontiguous types go through a
//    packed copy of the whole message, packed per partition on the send
//    side and unpacked per partition as it arrives.
#include <atomic>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "mpi/api.hpp"
#include "segment/segment.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

constexpr uint32_t kSetupContext = 0x20000000;  // + the point-to-point context
constexpr uint32_t kDataContext = 0x40000000;

// What the sender tells its receiver once, at init (untrusted there).
struct Hello {
  uint64_t partitions = 0;
  uint64_t bytes = 0;  // of the whole message
  uint64_t first_tag = 0;
};

struct Part {
  Device* dev = nullptr;
  bool sender = false;
  char* buf = nullptr;
  std::size_t parts = 0;  // this side's partitions
  std::size_t bytes = 0;  // this side's whole message
  const Datatype* type = nullptr;
  std::size_t count = 0;  // elements of type in the whole message
  int peer = kProcNull;
  int tag = 0;
  Comm data;
  Request* setup = nullptr;
  Hello hello;
  std::mutex lock;  // the receiver's setup, posting and unpacking
  bool known = false;
  int error = 0;
  // Per send partition, this run's message (null until sent or posted).
  std::size_t nmsgs = 0;
  std::size_t per_msg = 0;  // bytes of a send partition
  std::unique_ptr<std::atomic<Request*>[]> msgs;
  // Sender: partition readied this run. Receiver: partition unpacked.
  std::unique_ptr<std::atomic<uint8_t>[]> marks;
  bool posted = false;
  std::vector<std::byte> packed;  // noncontiguous types

  bool contiguous() const { return type->is_contiguous(); }
  // Where bytes [off, ..) of the message are when they need no packing.
  char* at(std::size_t off) const { return buf + type->true_lb() + off; }
  ~Part() {
    if (type) type->release();
  }
};

Part* part_of(Request& r) { return static_cast<Part*>(r.ext); }

// A run ends: every message of it is done and reclaimed.
void finish_run(Request& r, Part& p) {
  for (std::size_t i = 0; i < p.nmsgs && p.msgs; ++i) {
    if (Request* m = p.msgs[i].exchange(nullptr)) {
      if (!p.error && m->status.error) p.error = m->status.error;
      p.dev->request_free(&m);
    }
  }
  r.status = Status{};
  r.status.source = p.peer;
  r.status.tag = p.tag;
  r.status.bytes = p.error ? 0 : p.bytes;
  r.status.error = p.error;
  p.error = 0;
  r.dev->complete(&r);  // drops the run's reference
}

bool all_done(Part& p) {
  for (std::size_t i = 0; i < p.nmsgs; ++i) {
    Request* m = p.msgs[i].load(std::memory_order_acquire);
    if (!m || !m->complete()) return false;
  }
  return true;
}

// ---- receiver ----

// Checks the sender's hello against this side (the caller holds the lock).
int learn(Part& p) {
  const Hello& h = p.hello;
  if (h.bytes != p.bytes) {
    return raise(ErrorClass::Truncate,
                 "partitioned receive of %zu bytes from rank %d (tag %d) matched a partitioned send of %llu bytes: "
                 "the total sizes must agree",
                 p.bytes, p.peer, p.tag, static_cast<unsigned long long>(h.bytes));
  }
  if (h.partitions == 0 || h.partitions > INT_MAX || h.bytes % h.partitions != 0 || h.first_tag > kTagUb ||
      h.partitions - 1 > kTagUb - h.first_tag) {
    return raise(ErrorClass::Intern, "invalid partitioned send from rank %d: %llu partitions, %llu bytes, tag %llu",
                 p.peer, static_cast<unsigned long long>(h.partitions), static_cast<unsigned long long>(h.bytes),
                 static_cast<unsigned long long>(h.first_tag));
  }
  p.nmsgs = h.partitions;
  p.per_msg = h.bytes / h.partitions;
  p.msgs.reset(new (std::nothrow) std::atomic<Request*>[p.nmsgs]);
  if (!p.msgs) return raise(ErrorClass::NoMem, "no memory for the %zu partitions from rank %d", p.nmsgs, p.peer);
  for (std::size_t i = 0; i < p.nmsgs; ++i) p.msgs[i].store(nullptr, std::memory_order_relaxed);
  return 0;
}

// Posts this run's receives once the hello is known (the caller holds the
// lock and the run is active).
void advance_recv(Part& p) {
  if (p.posted || p.error) return;
  if (!p.known) {
    if (!p.setup->complete()) return;
    p.known = true;
    if (int e = learn(p)) {
      p.error = e;
      return;
    }
  }
  for (std::size_t i = 0; i < p.nmsgs; ++i) {
    const std::size_t off = i * p.per_msg;
    void* into = p.contiguous() ? static_cast<void*>(p.at(off)) : static_cast<void*>(p.packed.data() + off);
    Request* m = nullptr;
    if (int e = p.dev->irecv(into, p.per_msg, Datatype::byte(), p.peer, static_cast<int>(p.hello.first_tag + i), p.data,
                             &m)) {
      p.error = e;
      return;
    }
    p.msgs[i].store(m, std::memory_order_release);
  }
  p.posted = true;
}

// Receive partition j: the send partitions over its bytes have arrived (and
// it is unpacked). The caller holds the lock.
bool arrived(Part& p, std::size_t j) {
  if (!p.posted) return false;
  if (p.marks[j].load(std::memory_order_acquire)) return true;
  const std::size_t each = p.bytes / p.parts;
  const std::size_t lo = j * each, hi = lo + each;
  if (p.per_msg == 0) {
    if (!all_done(p)) return false;
  } else {
    for (std::size_t i = lo / p.per_msg; i * p.per_msg < hi; ++i) {
      Request* m = p.msgs[i].load(std::memory_order_acquire);
      if (!m || !m->complete()) return false;
    }
  }
  if (!p.contiguous() && hi > lo) {
    Segment seg(p.buf, p.count, p.type);
    seg.unpack(lo, hi, p.packed.data() + lo);
  }
  p.marks[j].store(1, std::memory_order_release);
  return true;
}

int poll_part(Request& r, Status&) {
  Part& p = *part_of(r);
  if (p.peer == kProcNull) return 0;
  if (!p.sender) {
    std::unique_lock g(p.lock, std::try_to_lock);
    if (!g.owns_lock()) return 0;  // a user thread is at it
    advance_recv(p);
    if (p.error) {
      finish_run(r, p);
      return 0;
    }
    if (!p.posted || !all_done(p)) return 0;
    for (std::size_t j = 0; j < p.parts; ++j) arrived(p, j);
    finish_run(r, p);
    return 0;
  }
  if (all_done(p)) finish_run(r, p);
  return 0;
}

int start_part(Request& r) {
  Part& p = *part_of(r);
  r.refs.fetch_add(1, std::memory_order_relaxed);  // the run's reference
  r.cc.store(1, std::memory_order_release);
  if (p.peer == kProcNull) {
    finish_run(r, p);
    return 0;
  }
  const std::size_t marks = p.parts;
  for (std::size_t i = 0; i < marks; ++i) p.marks[i].store(0, std::memory_order_relaxed);
  if (!p.sender) {
    std::lock_guard g(p.lock);
    p.posted = false;
    advance_recv(p);
  }
  r.dev->add_pollable(&r);
  return 0;
}

// The handle goes (only while inactive: the binding refuses otherwise).
int free_part(Request& r) {
  Part* p = part_of(r);
  if (!p) return 0;
  r.ext = nullptr;
  int e = 0;
  if (p->setup) {
    // A receiver's hello may never come (no matching Psend_init): withdraw it.
    if (!p->sender && !p->setup->complete()) p->dev->cancel(p->setup);
    Status st;
    e = p->dev->wait(&p->setup, &st);
  }
  delete p;
  return e;
}

const RequestClass kPartitioned{nullptr, &free_part, nullptr, &poll_part, nullptr, &start_part};

int check_part_args(Runtime& rt, CommObj& c, const void* buf, int partitions, MPI_Count count, MPI_Datatype dt,
                    int peer, bool recv, int tag, MPI_Request* request, const Datatype** type) {
  if (!request) return raise(ErrorClass::Arg, "request is null");
  if (partitions < 1) return raise(ErrorClass::Arg, "invalid number of partitions %d (at least 1)", partitions);
  if (int e = check_count(count)) return e;
  if (int e = get_comm_type(rt, dt, type)) return e;
  if (int e = check_extent(count * partitions, *type)) return e;
  if (int e = check_buffer(buf, count * partitions, *type)) return e;
  if (peer != MPI_PROC_NULL && (peer < 0 || peer >= c.pt2pt.size)) {
    return raise(ErrorClass::Rank, "invalid %s rank %d (partitioned communication takes no wildcard; size %d)",
                 recv ? "source" : "destination", peer, c.pt2pt.size);
  }
  if (tag < 0 || tag > kTagUb) {
    return raise(ErrorClass::Tag, "invalid tag %d: tags run from 0 to %d (no wildcard)", tag, kTagUb);
  }
  return 0;
}

// The first of n data tags for a new partitioned send (tags wrap after
// 2^30 partitions: a run still in flight by then would be confused).
uint32_t take_tags(Runtime& rt, uint32_t n) {
  uint32_t cur = rt.partition_tags.load(std::memory_order_relaxed);
  for (;;) {
    uint32_t first = cur > static_cast<uint32_t>(kTagUb) + 1 - n ? 0 : cur;
    if (rt.partition_tags.compare_exchange_weak(cur, first + n, std::memory_order_relaxed)) return first;
  }
}

int part_init(Runtime& rt, CommObj& c, bool sender, const void* buf, int partitions, MPI_Count count, MPI_Datatype dt,
              int peer, int tag, MPI_Request* request) {
  const Datatype* type = nullptr;
  if (int e = check_part_args(rt, c, buf, partitions, count, dt, peer, !sender, tag, request, &type)) return e;
  Device& dev = rt.dev();
  // The request first: out of them (ADI3_MAX_REQUESTS), nothing has started.
  Request* r = nullptr;
  if (int e = dev.new_request(RequestKind::Collective, sender ? "MPI_Psend_init" : "MPI_Precv_init", &r)) return e;
  auto p = std::make_unique<Part>();
  p->dev = &dev;
  p->sender = sender;
  p->buf = static_cast<char*>(const_cast<void*>(buf));
  p->parts = static_cast<std::size_t>(partitions);
  p->count = static_cast<std::size_t>(count) * p->parts;
  p->bytes = p->count * type->size();
  type->retain();
  p->type = type;
  p->peer = peer;
  p->tag = tag;
  p->data = c.pt2pt;
  p->data.context += kDataContext;
  p->marks.reset(new std::atomic<uint8_t>[p->parts]);
  if (!p->contiguous()) p->packed.resize(p->bytes);
  if (peer != MPI_PROC_NULL) {
    Comm setup = c.pt2pt;
    setup.context += kSetupContext;
    if (sender) {
      p->nmsgs = p->parts;
      p->per_msg = p->bytes / p->parts;
      p->msgs.reset(new std::atomic<Request*>[p->nmsgs]);
      for (std::size_t i = 0; i < p->nmsgs; ++i) p->msgs[i].store(nullptr, std::memory_order_relaxed);
      p->hello = {p->parts, p->bytes, take_tags(rt, static_cast<uint32_t>(partitions))};
      if (int e = dev.isend(&p->hello, sizeof p->hello, Datatype::byte(), peer, tag, setup, SendMode::Standard,
                            &p->setup)) {
        dev.release(r);
        return e;
      }
    } else if (int e = dev.irecv(&p->hello, sizeof p->hello, Datatype::byte(), peer, tag, setup, &p->setup)) {
      dev.release(r);
      return e;
    }
  }
  // r has one reference: the user's handle.
  r->cls = &kPartitioned;
  r->set(Request::kPersistent);
  r->cc.store(0, std::memory_order_release);
  r->ext = p.release();
  return new_request(rt, r, c.handle, true, request);
}

// The partitioned request behind a handle, of the side `sender` says.
int get_part(Runtime& rt, MPI_Request h, bool sender, ReqSlot* slot, Part** out) {
  if (h == MPI_REQUEST_NULL) return raise(ErrorClass::Request, "the request is MPI_REQUEST_NULL");
  if (int e = get_slot(rt, h, slot)) return e;
  Request* r = slot->req;
  if (r->cls != &kPartitioned || part_of(*r)->sender != sender) {
    return raise(ErrorClass::Request, "request 0x%x is not a partitioned %s request", h, sender ? "send" : "receive");
  }
  *out = part_of(*r);
  return 0;
}

// MPI_Pready's work for partition i of an active send.
int ready(Request& r, Part& p, int i) {
  if (!r.has(Request::kActive)) return raise(ErrorClass::Request, "MPI_Pready on an inactive partitioned request");
  if (i < 0 || static_cast<std::size_t>(i) >= p.parts) {
    return raise(ErrorClass::Arg, "invalid partition %d (the request has %zu)", i, p.parts);
  }
  if (p.marks[static_cast<std::size_t>(i)].exchange(1, std::memory_order_acq_rel)) {
    return raise(ErrorClass::Arg, "partition %d is already ready in this run", i);
  }
  if (p.peer == kProcNull) return 0;
  const std::size_t off = static_cast<std::size_t>(i) * p.per_msg;
  const void* from = p.at(off);
  if (!p.contiguous()) {
    Segment seg(p.buf, p.count, p.type);
    seg.pack(off, off + p.per_msg, p.packed.data() + off);
    from = p.packed.data() + off;
  }
  Request* m = nullptr;
  if (int e = p.dev->isend(from, p.per_msg, Datatype::byte(), p.peer, static_cast<int>(p.hello.first_tag) + i, p.data,
                           SendMode::Standard, &m)) {
    return e;
  }
  p.msgs[static_cast<std::size_t>(i)].store(m, std::memory_order_release);
  return 0;
}

}  // namespace

#define ADI3_PART_INIT(name, sender, BufT)                                                                            \
  ADI3_MPI_API(int, name,                                                                                             \
               (BufT * buf, int partitions, MPI_Count count, MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, \
                MPI_Info info, MPI_Request* request),                                                                 \
               (buf, partitions, count, datatype, peer, tag, comm, info, request)) {                                  \
    ADI3_MPI_ENTER();                                                                                                 \
    (void)info;                                                                                                       \
    CommObj* c = nullptr;                                                                                             \
    if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);                                             \
    return comm_error(c, part_init(*rt, *c, sender, buf, partitions, count, datatype, peer, tag, request), __func__); \
  }
ADI3_PART_INIT(Psend_init, true, const void)
ADI3_PART_INIT(Precv_init, false, void)
#undef ADI3_PART_INIT

// Pready over a set of partitions: `at(k)` gives the k-th of n.
#define ADI3_PREADY_BODY(n, at)                                                      \
  ADI3_MPI_ENTER();                                                                  \
  ReqSlot s;                                                                         \
  Part* p = nullptr;                                                                 \
  if (int e = get_part(*rt, request, true, &s, &p)) return world_error(e, __func__); \
  for (long long k = 0; k < (n); ++k) {                                              \
    if (int e = ready(*s.req, *p, (at))) return comm_error(s.comm, e, __func__);     \
  }                                                                                  \
  return MPI_SUCCESS

ADI3_MPI_API(int, Pready, (int partition, MPI_Request request), (partition, request)) {
  ADI3_PREADY_BODY(1, partition);
}

ADI3_MPI_API(int, Pready_range, (int partition_low, int partition_high, MPI_Request request),
             (partition_low, partition_high, request)) {
  ADI3_PREADY_BODY(static_cast<long long>(partition_high) - partition_low + 1, partition_low + static_cast<int>(k));
}

ADI3_MPI_API(int, Pready_list, (int length, const int array_of_partitions[], MPI_Request request),
             (length, array_of_partitions, request)) {
  if (length > 0 && !array_of_partitions)
    return world_error(raise(ErrorClass::Arg, "array_of_partitions is null"), __func__);
  ADI3_PREADY_BODY(length, array_of_partitions[k]);
}
#undef ADI3_PREADY_BODY

ADI3_MPI_API(int, Parrived, (MPI_Request request, int partition, int* flag), (request, partition, flag)) {
  ADI3_MPI_ENTER();
  ReqSlot s;
  Part* p = nullptr;
  if (int e = get_part(*rt, request, false, &s, &p)) return world_error(e, __func__);
  if (!flag) return comm_error(s.comm, raise(ErrorClass::Arg, "flag is null"), __func__);
  if (partition < 0 || static_cast<std::size_t>(partition) >= p->parts) {
    return comm_error(s.comm, raise(ErrorClass::Arg, "invalid partition %d (the request has %zu)", partition, p->parts),
                      __func__);
  }
  Request& r = *s.req;
  // An inactive request's partitions are all there (its run completed).
  if (!r.has(Request::kActive) || r.complete() || p->peer == kProcNull) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  {
    std::lock_guard g(p->lock);
    advance_recv(*p);
    *flag = arrived(*p, static_cast<std::size_t>(partition));
  }
  if (!*flag) rt->dev().progress();  // a caller spinning on Parrived must move things on
  return MPI_SUCCESS;
}
