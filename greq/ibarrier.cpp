// The nonblocking barrier: a generalized request with a poll function. Each
// poll advances as many rounds as have arrived; the last one completes the
// request with grequest_complete, as a user's poll function would.
#include "greq/ibarrier.hpp"

#include <atomic>

#include "greq/greq.hpp"
#include "greq/hub.hpp"
#include "greq/state.hpp"

namespace adi3 {

namespace {

struct Ibarrier {
  Device* dev;
  Comm comm;
  uint32_t seq;             // which barrier of this device: all ranks count alike
  int round = 0;            // messages of round k go 2^k ranks ahead
  Request* recv = nullptr;  // the round's messages, while in flight
  Request* send = nullptr;
  int error = 0;
  // Set once the request exists and round 0 is posted; the poll function
  // leaves the barrier alone until then.
  std::atomic<Request*> self{nullptr};
};

// Rounds fit in 5 bits (n < 2^31), the sequence in the rest of a valid tag,
// so overlapping barriers never take each other's messages.
int tag_of(uint32_t seq, int round) { return static_cast<int>((seq & 0xffffffu) << 5 | static_cast<uint32_t>(round)); }

// Posts the messages of op->round, or returns false when the barrier is done.
bool post_round(Ibarrier* op) {
  Device& dev = *op->dev;
  int n = dev.size(), me = dev.rank();
  long dist = 1L << op->round;
  if (op->error || dist >= n) return false;
  int to = static_cast<int>((me + dist) % n), from = static_cast<int>((me - dist + n) % n);
  int tag = tag_of(op->seq, op->round);
  const Datatype* byte = Datatype::byte();
  if (int e = dev.irecv(nullptr, 0, byte, from, tag, op->comm, &op->recv)) {
    op->error = e;
    return false;
  }
  if (int e = dev.isend(nullptr, 0, byte, to, tag, op->comm, SendMode::Standard, &op->send)) {
    op->error = e;
    dev.cancel(op->recv);
    dev.wait(&op->recv, nullptr);
    return false;
  }
  return true;
}

int ibarrier_poll(void* extra, Status*) {
  auto* op = static_cast<Ibarrier*>(extra);
  Request* self = op->self.load(std::memory_order_acquire);
  if (!self) return 0;
  Device& dev = *op->dev;
  for (;;) {
    // Both complete: wait returns at once, without making progress (this
    // runs inside the progress engine).
    if (!op->recv->complete() || !op->send->complete()) return 0;
    int er = dev.wait(&op->recv, nullptr);
    int es = dev.wait(&op->send, nullptr);
    if (!op->error) op->error = er ? er : es;
    ++op->round;
    if (!post_round(op)) break;
  }
  op->self.store(nullptr, std::memory_order_relaxed);
  // After this, op may be gone (free_fn runs here if the user freed the request).
  return grequest_complete(self);
}

int ibarrier_query(void* extra, Status* status) {
  auto* op = static_cast<Ibarrier*>(extra);
  status->source = kAnySource;
  status->tag = kAnyTag;
  status->bytes = 0;
  status->cancelled = false;
  return op->error;
}

int ibarrier_free(void* extra) {
  delete static_cast<Ibarrier*>(extra);
  return 0;
}

}  // namespace

int ibarrier(Device& dev, Request** out) {
  if (!out) return dev.errors().raise(ErrorClass::Arg, "ibarrier: the request argument is null");
  auto* op = new (std::nothrow) Ibarrier;
  if (!op)
    return dev.errors().raise(ErrorClass::NoMem, "out of memory allocating the state of an ibarrier (%zu bytes)",
                              sizeof(Ibarrier));
  op->dev = &dev;
  op->comm = dev.world();
  op->comm.context = kIbarrierContext;
  op->comm.peers.clear();  // world ranks are channel ranks
  op->seq = GreqHub::of(dev).next_barrier();
  GreqCallbacks fns{&ibarrier_query, &ibarrier_free, nullptr, &ibarrier_poll, nullptr};
  Request* r = nullptr;
  if (int e = greq_start(dev, nullptr, fns, op, &r)) {
    delete op;
    return e;
  }
  if (post_round(op)) {
    op->self.store(r, std::memory_order_release);
  } else {
    grequest_complete(r);  // one rank, or round 0 could not be posted (op->error says why)
  }
  *out = r;
  return 0;
}

}  // namespace adi3
