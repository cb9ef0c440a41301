// Collectives on intercommunicators (MPI-3.1 5.2.2): data flows from one
// group to the other. Built from point-to-point between the groups (on the
// collective context, mapped to the remote group) and coll/ calls inside
// the local group (`grouped`), written as one coll::Schedule each: req null
// runs it to the end, else req gets a request the progress engine advances.
#pragma once
#include "mpi/coll_binding.hpp"

namespace adi3::mpi::inter {

int bcast(CollCall& k, void* buf, int count, const Datatype* t, int root, MPI_Request* req);
int reduce(CollCall& k, const void* sbuf, void* rbuf, int count, const Datatype* t, const coll::Op& op, int root,
           MPI_Request* req);
int allreduce(CollCall& k, const void* sbuf, void* rbuf, int count, const Datatype* t, const coll::Op& op,
              MPI_Request* req);
// Root side and leaf side of gather(v)/scatter(v): counts/displs (v-forms)
// are the root's arrays over the remote group, or null for the fixed form.
int gather(CollCall& k, const void* sbuf, int scount, const Datatype* st, void* rbuf, int rcount, const int* rcounts,
           const int* displs, const Datatype* rt, int root, MPI_Request* req);
int scatter(CollCall& k, const void* sbuf, int scount, const int* scounts, const int* displs, const Datatype* st,
            void* rbuf, int rcount, const Datatype* rt, int root, MPI_Request* req);
// Every process exchanges with every remote process: block i of the
// receive side comes from remote rank i (allgather: the same send block to
// all). Arrays are per remote rank; byte displacements when `bytes`.
struct Blocks {
  const void* buf;
  const int* counts;  // null: `count` for every peer
  int count;
  const int* displs;  // elements (or bytes); null: i * count * extent
  bool bytes;
  const Datatype* type;  // when types is null
  const Datatype* const* types;
  bool same_for_all;  // allgather's send side
};
int exchange(CollCall& k, const Blocks& send, const Blocks& recv, MPI_Request* req);
int reduce_scatter_block(CollCall& k, const void* sbuf, void* rbuf, int rcount, const Datatype* t, const coll::Op& op,
                         MPI_Request* req);
// counts: the local group's result sizes (their sum is the vector length
// both groups contribute).
int reduce_scatter(CollCall& k, const void* sbuf, void* rbuf, const int* counts, const Datatype* t, const coll::Op& op,
                   MPI_Request* req);

}  // namespace adi3::mpi::inter
