#include "mpi/coll_inter.hpp"

#include <vector>

#include "greq/greq.hpp"

namespace adi3::mpi::inter {

namespace {

// Cross-group messages of intercommunicator collectives (the collective
// context of an intercommunicator carries nothing else).
constexpr int kTag = 200;

std::size_t sz(int n) { return static_cast<std::size_t>(n); }

// Scratch for count elements of t, with the address of element 0.
struct Temp {
  std::vector<std::byte> mem;
  void* at = nullptr;
  Temp(int count, const Datatype* t) {
    if (count <= 0) return;
    std::ptrdiff_t span = t->true_extent() + static_cast<std::ptrdiff_t>(count - 1) * t->extent();
    mem.resize(static_cast<std::size_t>(span > 0 ? span : 1));
    at = mem.data() - t->true_lb();
  }
};

const std::byte* offset(const void* buf, std::ptrdiff_t bytes) { return static_cast<const std::byte*>(buf) + bytes; }

int check_remote_root(CollCall& k, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL) return 0;
  if (root < 0 || root >= k.c->remote->size()) {
    return raise(ErrorClass::Root, "invalid root %d: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (0..%d)",
                 root, k.c->remote->size() - 1);
  }
  return 0;
}

}  // namespace

int done_request(CollCall& k, MPI_Request* req) {
  Request* g = nullptr;
  int e = grequest_start(k.dev(), nullptr, nullptr, nullptr, nullptr, &g);
  if (!e) e = grequest_complete(g);
  if (!e) e = new_request(*k.rt, g, k.c->handle, false, req);
  return e;
}

int bcast(CollCall& k, void* buf, int count, const Datatype* t, int root) {
  if (int e = check_remote_root(k, root)) return e;
  if (root == MPI_PROC_NULL) return 0;
  if (root == MPI_ROOT) return k.dev().send(buf, sz(count), t, 0, kTag, k.c->coll);
  // The remote root sends to our rank 0, which broadcasts locally.
  if (k.c->rank() == 0) {
    if (int e = k.dev().recv(buf, sz(count), t, root, kTag, k.c->coll, nullptr)) return e;
  }
  return coll::bcast(k.dev(), buf, sz(count), t, 0, k.c->grouped);
}

int reduce(CollCall& k, const void* sbuf, void* rbuf, int count, const Datatype* t, const coll::Op& op, int root) {
  if (int e = check_remote_root(k, root)) return e;
  if (root == MPI_PROC_NULL) return 0;
  if (root == MPI_ROOT) return k.dev().recv(rbuf, sz(count), t, 0, kTag, k.c->coll, nullptr);
  // Reduce in our group to rank 0, which sends the result to the root.
  Temp tmp(count, t);
  if (int e = coll::reduce(k.dev(), sbuf, tmp.at, sz(count), t, op, 0, k.c->grouped)) return e;
  if (k.c->rank() == 0) return k.dev().send(tmp.at, sz(count), t, root, kTag, k.c->coll);
  return 0;
}

int allreduce(CollCall& k, const void* sbuf, void* rbuf, int count, const Datatype* t, const coll::Op& op) {
  // Each group gets the reduction of the other group's data: local
  // reductions, a swap between the ranks 0, local broadcasts.
  Temp tmp(count, t);
  if (int e = coll::reduce(k.dev(), sbuf, tmp.at, sz(count), t, op, 0, k.c->grouped)) return e;
  if (k.c->rank() == 0) {
    if (int e = k.dev().sendrecv(tmp.at, sz(count), t, 0, kTag, rbuf, sz(count), t, 0, kTag, k.c->coll, nullptr)) {
      return e;
    }
  }
  return coll::bcast(k.dev(), rbuf, sz(count), t, 0, k.c->grouped);
}

int gather(CollCall& k, const void* sbuf, int scount, const Datatype* st, void* rbuf, int rcount, const int* rcounts,
           const int* displs, const Datatype* rt, int root) {
  if (int e = check_remote_root(k, root)) return e;
  if (root == MPI_PROC_NULL) return 0;
  if (root != MPI_ROOT) return k.dev().send(sbuf, sz(scount), st, root, kTag, k.c->coll);
  int n = k.c->remote->size();
  std::vector<Request*> reqs;
  for (int i = 0; i < n; ++i) {
    int c = rcounts ? rcounts[i] : rcount;
    std::ptrdiff_t at = static_cast<std::ptrdiff_t>(displs ? displs[i] : i * rcount) * rt->extent();
    Request* r = nullptr;
    if (int e = k.dev().irecv(const_cast<std::byte*>(offset(rbuf, at)), sz(c), rt, i, kTag, k.c->coll, &r)) return e;
    reqs.push_back(r);
  }
  return k.dev().waitall(n, reqs.data(), nullptr);
}

int scatter(CollCall& k, const void* sbuf, int scount, const int* scounts, const int* displs, const Datatype* st,
            void* rbuf, int rcount, const Datatype* rt, int root) {
  if (int e = check_remote_root(k, root)) return e;
  if (root == MPI_PROC_NULL) return 0;
  if (root != MPI_ROOT) return k.dev().recv(rbuf, sz(rcount), rt, root, kTag, k.c->coll, nullptr);
  int n = k.c->remote->size();
  std::vector<Request*> reqs;
  for (int i = 0; i < n; ++i) {
    int c = scounts ? scounts[i] : scount;
    std::ptrdiff_t at = static_cast<std::ptrdiff_t>(displs ? displs[i] : i * scount) * st->extent();
    Request* r = nullptr;
    if (int e = k.dev().isend(offset(sbuf, at), sz(c), st, i, kTag, k.c->coll, SendMode::Standard, &r)) return e;
    reqs.push_back(r);
  }
  return k.dev().waitall(n, reqs.data(), nullptr);
}

int exchange(CollCall& k, const Blocks& send, const Blocks& recv) {
  int n = k.c->remote->size();
  std::vector<Request*> reqs;
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
    Request* r = nullptr;
    if (int e = k.dev().irecv(const_cast<void*>(at), sz(c), t, i, kTag, k.c->coll, &r)) return e;
    reqs.push_back(r);
  }
  for (int i = 0; i < n; ++i) {
    const void* at;
    int c;
    const Datatype* t;
    block(send, i, &at, &c, &t);
    Request* r = nullptr;
    if (int e = k.dev().isend(at, sz(c), t, i, kTag, k.c->coll, SendMode::Standard, &r)) return e;
    reqs.push_back(r);
  }
  return k.dev().waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr);
}

int reduce_scatter_block(CollCall& k, const void* sbuf, void* rbuf, int rcount, const Datatype* t, const coll::Op& op) {
  // Our data (rcount per remote process) is reduced to our rank 0, swapped
  // with the remote rank 0's, and the result scattered in our group.
  int mine = rcount * k.c->remote->size(), theirs = rcount * k.c->size();
  Temp reduced(mine, t), got(theirs, t);
  if (int e = coll::reduce(k.dev(), sbuf, reduced.at, sz(mine), t, op, 0, k.c->grouped)) return e;
  if (k.c->rank() == 0) {
    if (int e =
            k.dev().sendrecv(reduced.at, sz(mine), t, 0, kTag, got.at, sz(theirs), t, 0, kTag, k.c->coll, nullptr)) {
      return e;
    }
  }
  return coll::scatter(k.dev(), got.at, sz(rcount), t, rbuf, sz(rcount), t, 0, k.c->grouped);
}

int reduce_scatter(CollCall& k, const void* sbuf, void* rbuf, const int* counts, const Datatype* t,
                   const coll::Op& op) {
  // As reduce_scatter_block, with the local group's counts for the scatter.
  int n = k.c->size(), total = 0;
  std::vector<int> displs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += counts[i];
  }
  Temp reduced(total, t), got(total, t);
  if (int e = coll::reduce(k.dev(), sbuf, reduced.at, sz(total), t, op, 0, k.c->grouped)) return e;
  if (k.c->rank() == 0) {
    if (int e =
            k.dev().sendrecv(reduced.at, sz(total), t, 0, kTag, got.at, sz(total), t, 0, kTag, k.c->coll, nullptr)) {
      return e;
    }
  }
  return coll::scatterv(k.dev(), got.at, counts, displs.data(), t, rbuf, sz(counts[k.c->rank()]), t, 0, k.c->grouped);
}

}  // namespace adi3::mpi::inter
