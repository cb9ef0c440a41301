#include "mpi/coll_inter.hpp"

#include <memory>
#include <vector>

#include "coll/compose.hpp"
#include "coll/nbc.hpp"

namespace adi3::mpi::inter {

namespace {

// Tag of the blocking forms, below the nonblocking ones (which take theirs
// from the communicator's sequence), so the two never meet.
constexpr int kTag = 40;

std::size_t sz(int n) { return static_cast<std::size_t>(n); }

const std::byte* offset(const void* buf, std::ptrdiff_t bytes) { return static_cast<const std::byte*>(buf) + bytes; }

int check_remote_root(CollCall& k, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL) return 0;
  if (root < 0 || root >= k.c->remote->size()) {
    return raise(ErrorClass::Root, "invalid root %d: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (0..%d)",
                 root, k.c->remote->size() - 1);
  }
  return 0;
}

// MPI_IN_PLACE has no meaning on an intercommunicator (MPI 3.1 5.2.3): a
// buffer that matters here and is MPI_IN_PLACE is an error naming it, not
// a read of address -1.
int no_in_place(const void* buf, const char* which) {
  if (buf != MPI_IN_PLACE) return 0;
  return raise(ErrorClass::Buffer, "%s is MPI_IN_PLACE, which is not allowed on an intercommunicator", which);
}

// One intercommunicator collective as one schedule: phases on the
// remote-group Comm (`coll`) and the local group's (`grouped`), run to the
// end (blocking) or advanced by the progress engine (nonblocking and
// persistent), so ranks
// of both groups may start it in any interleaving with other work. Every
// process takes exactly one sequence number per call, whatever its part.
class Plan {
 public:
  Plan(CollCall& k, MPI_Request* req)
      : k_(k), req_(req), s_(std::make_unique<coll::Schedule>(k.dev(), k.c->coll, req ? k.seq().next_tag() : kTag)) {}
  coll::Schedule& s() { return *s_; }
  // Scratch for count elements of t (the address of element 0).
  void* temp(int count, const Datatype* t) {
    if (count <= 0) return nullptr;
    std::ptrdiff_t span = t->true_extent() + static_cast<std::ptrdiff_t>(count - 1) * t->extent();
    return s_->scratch(static_cast<std::size_t>(span > 0 ? span : 1)) - t->true_lb();
  }
  void keep(const Datatype* t) { s_->keep(t); }
  void remote() { s_->use(k_.c->coll); }
  void local() { s_->use(k_.c->grouped); }
  int finish(int e = 0) {
    if (e) return e;
    if (!req_) return s_->run();
    Request* r = nullptr;
    // A persistent one (MPI_X_init) is the same schedule, restarted by each
    // MPI_Start.
    int err = k_.persistent ? coll::launch_persistent(k_.dev(), std::move(s_), &r)
                            : coll::launch(k_.dev(), std::move(s_), &r);
    if (err) return err;
    return new_request(*k_.rt, r, k_.c->handle, k_.persistent, req_);
  }

 private:
  CollCall& k_;
  MPI_Request* req_;
  std::unique_ptr<coll::Schedule> s_;
};

}  // namespace

int bcast(CollCall& k, void* buf, int count, const Datatype* t, int root, MPI_Request* req) {
  if (int e = check_remote_root(k, root)) return e;
  Plan p(k, req);
  if (root == MPI_PROC_NULL) return p.finish();
  p.keep(t);
  if (root == MPI_ROOT) {
    p.s().send(buf, sz(count), t, 0);
    return p.finish();
  }
  // The remote root sends to our rank 0, which broadcasts locally.
  if (k.c->rank() == 0) p.s().recv(buf, sz(count), t, root);
  p.local();
  coll::add_bcast(p.s(), buf, sz(count), t, 0);
  return p.finish();
}

int reduce(CollCall& k, const void* sbuf, void* rbuf, int count, const Datatype* t, const coll::Op& op, int root,
           MPI_Request* req) {
  if (int e = check_remote_root(k, root)) return e;
  if (int e = root == MPI_PROC_NULL ? 0
              : root == MPI_ROOT    ? no_in_place(rbuf, "recvbuf")
                                    : no_in_place(sbuf, "sendbuf"))
    return e;
  Plan p(k, req);
  if (root == MPI_PROC_NULL) return p.finish();
  p.keep(t);
  if (root == MPI_ROOT) {
    p.s().recv(rbuf, sz(count), t, 0);
    return p.finish();
  }
  // Reduce in our group to rank 0, which sends the result to the root.
  void* tmp = p.temp(count, t);
  p.local();
  if (int e = coll::add_reduce(p.s(), sbuf, tmp, sz(count), t, op, 0)) return e;
  p.remote();
  if (k.c->rank() == 0) p.s().send(tmp, sz(count), t, root);
  return p.finish();
}

int allreduce(CollCall& k, const void* sbuf, void* rbuf, int count, const Datatype* t, const coll::Op& op,
              MPI_Request* req) {
  // Each group gets the reduction of the other group's data: local
  // reductions, a swap between the ranks 0, local broadcasts.
  if (int e = no_in_place(sbuf, "sendbuf")) return e;
  if (int e = no_in_place(rbuf, "recvbuf")) return e;
  Plan p(k, req);
  p.keep(t);
  void* tmp = p.temp(count, t);
  p.local();
  if (int e = coll::add_reduce(p.s(), sbuf, tmp, sz(count), t, op, 0)) return e;
  p.remote();
  if (k.c->rank() == 0) {
    p.s().recv(rbuf, sz(count), t, 0);
    p.s().send(tmp, sz(count), t, 0);
  }
  p.local();
  coll::add_bcast(p.s(), rbuf, sz(count), t, 0);
  return p.finish();
}

int gather(CollCall& k, const void* sbuf, int scount, const Datatype* st, void* rbuf, int rcount, const int* rcounts,
           const int* displs, const Datatype* rt, int root, MPI_Request* req) {
  if (int e = check_remote_root(k, root)) return e;
  if (int e = root == MPI_PROC_NULL ? 0
              : root == MPI_ROOT    ? no_in_place(rbuf, "recvbuf")
                                    : no_in_place(sbuf, "sendbuf"))
    return e;
  Plan p(k, req);
  if (root == MPI_PROC_NULL) return p.finish();
  if (root != MPI_ROOT) {
    p.keep(st);
    p.s().send(sbuf, sz(scount), st, root);
    return p.finish();
  }
  p.keep(rt);
  for (int i = 0; i < k.c->remote->size(); ++i) {
    int c = rcounts ? rcounts[i] : rcount;
    std::ptrdiff_t at = static_cast<std::ptrdiff_t>(displs ? displs[i] : i * rcount) * rt->extent();
    p.s().recv(const_cast<std::byte*>(offset(rbuf, at)), sz(c), rt, i);
  }
  return p.finish();
}

int scatter(CollCall& k, const void* sbuf, int scount, const int* scounts, const int* displs, const Datatype* st,
            void* rbuf, int rcount, const Datatype* rt, int root, MPI_Request* req) {
  if (int e = check_remote_root(k, root)) return e;
  if (int e = root == MPI_PROC_NULL ? 0
              : root == MPI_ROOT    ? no_in_place(sbuf, "sendbuf")
                                    : no_in_place(rbuf, "recvbuf"))
    return e;
  Plan p(k, req);
  if (root == MPI_PROC_NULL) return p.finish();
  if (root != MPI_ROOT) {
    p.keep(rt);
    p.s().recv(rbuf, sz(rcount), rt, root);
    return p.finish();
  }
  p.keep(st);
  for (int i = 0; i < k.c->remote->size(); ++i) {
    int c = scounts ? scounts[i] : scount;
    std::ptrdiff_t at = static_cast<std::ptrdiff_t>(displs ? displs[i] : i * scount) * st->extent();
    p.s().send(offset(sbuf, at), sz(c), st, i);
  }
  return p.finish();
}

int exchange(CollCall& k, const Blocks& send, const Blocks& recv, MPI_Request* req) {
  if (int e = no_in_place(send.buf, "sendbuf")) return e;
  if (int e = no_in_place(recv.buf, "recvbuf")) return e;
  int n = k.c->remote->size();
  Plan p(k, req);
  auto block = [](const Blocks& b, int i, const void** at, int* count, const Datatype** type) {
    *type = b.types ? b.types[i] : b.type;
    *count = b.counts ? b.counts[i] : b.count;
    std::ptrdiff_t off = 0;
    if (!b.same_for_all) {
      off = b.displs ? static_cast<std::ptrdiff_t>(b.displs[i]) : static_cast<std::ptrdiff_t>(i) * b.count;
      if (!b.bytes) off *= (*type)->extent();
    }
    *at = offset(b.buf, off);
  };
  for (int i = 0; i < n; ++i) {
    const void* at;
    int c;
    const Datatype* t;
    block(recv, i, &at, &c, &t);
    p.keep(t);
    p.s().recv(const_cast<void*>(at), sz(c), t, i);
  }
  for (int i = 0; i < n; ++i) {
    const void* at;
    int c;
    const Datatype* t;
    block(send, i, &at, &c, &t);
    p.keep(t);
    p.s().send(at, sz(c), t, i);
  }
  return p.finish();
}

namespace {

// Reduce_scatter(_block): each group's vector (counts summed over the local
// group, MPI-4.1 6.11) is reduced to its rank 0 and swapped with the remote
// rank 0's, which our rank 0 then scatters over the local group.
int reduce_swap_scatter(CollCall& k, const void* sbuf, void* rbuf, std::vector<int> counts, const Datatype* t,
                        const coll::Op& op, MPI_Request* req) {
  if (int e = no_in_place(sbuf, "sendbuf")) return e;
  if (int e = no_in_place(rbuf, "recvbuf")) return e;
  int n = k.c->size(), total = 0;
  std::vector<int> displs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += counts[static_cast<std::size_t>(i)];
  }
  Plan p(k, req);
  p.keep(t);
  void* reduced = p.temp(total, t);
  void* got = p.temp(total, t);
  p.local();
  if (int e = coll::add_reduce(p.s(), sbuf, reduced, sz(total), t, op, 0)) return e;
  p.remote();
  if (k.c->rank() == 0) {
    p.s().recv(got, sz(total), t, 0);
    p.s().send(reduced, sz(total), t, 0);
  }
  p.local();
  const auto& c = p.s().own(std::move(counts));
  const auto& d = p.s().own(std::move(displs));
  coll::add_scatterv(p.s(), got, c.data(), d.data(), t, rbuf, sz(c[static_cast<std::size_t>(k.c->rank())]), 0);
  return p.finish();
}

}  // namespace

int reduce_scatter_block(CollCall& k, const void* sbuf, void* rbuf, int rcount, const Datatype* t, const coll::Op& op,
                         MPI_Request* req) {
  return reduce_swap_scatter(k, sbuf, rbuf, std::vector<int>(sz(k.c->size()), rcount), t, op, req);
}

int reduce_scatter(CollCall& k, const void* sbuf, void* rbuf, const int* counts, const Datatype* t, const coll::Op& op,
                   MPI_Request* req) {
  return reduce_swap_scatter(k, sbuf, rbuf, std::vector<int>(counts, counts + k.c->size()), t, op, req);
}

}  // namespace adi3::mpi::inter
