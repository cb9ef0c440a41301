// Collectives composed of phases over different communicators (the MPI
// binding's intercommunicator collectives: the local group's Comm for the
// work inside a group, the remote-group Comm between the groups). Each
// add_* appends one intracommunicator collective over the schedule's
// current Comm (Schedule::use). The caller keeps the datatypes alive
// (Schedule::keep) and runs or launches the schedule.
//
// add_reduce reads its input while it is added (as the builders do), so it
// can only be a first phase; add_bcast and add_scatterv touch their data
// only when their rounds run, so they may follow phases that produce it.
#pragma once
#include <cstddef>

#include "coll/op.hpp"
#include "coll/schedule.hpp"

namespace adi3::coll {

int add_reduce(Schedule& s, const void* sendbuf, void* recvbuf, std::size_t count, const Datatype* type, const Op& op,
               int root);
// Binomial tree from root.
void add_bcast(Schedule& s, void* buf, std::size_t count, const Datatype* type, int root);
// Linear, the root's own block copied in a local step.
void add_scatterv(Schedule& s, const void* sendbuf, const int* sendcounts, const int* displs, const Datatype* type,
                  void* recvbuf, std::size_t recvcount, int root);

}  // namespace adi3::coll
