// MPI_Comm_dup(_with_info) and MPI_Comm_idup(_with_info). Both agree on a
// context index over the parent's internal context (mpi/agree.hpp); the
// nonblocking form runs that agreement as a request the progress engine
// advances, so ranks may start idups of several communicators in any order
// and overlap them with any other communication.
#include <memory>

#include "coll/nbc.hpp"
#include "mpi/agree.hpp"
#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "mpi/coll_binding.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// What a dup takes from its parent when it starts: the parent may be freed
// before an idup completes. Attribute copy callbacks run at the start; a
// failed one leaves the plan empty (and `over` set) for the agreement.
struct DupPlan {
  CommObj proto;  // group, remote group, topology, error handler
  AttrList attrs;
  Entries info;
  Comm over;  // the parent's internal context
};

void dup_drop(Runtime& rt, DupPlan& p, MPI_Comm h) {
  delete_all_attrs(rt, p.attrs, h);
  if (p.proto.errh) release_errhandler(rt, p.proto.errh);
  p.proto.errh = nullptr;
}

int dup_begin(Runtime& rt, CommObj& c, const Entries& info, DupPlan* p) {
  p->proto.group = c.group;
  p->proto.remote = c.remote;
  p->proto.inter = c.inter;
  p->proto.cart = c.cart;
  p->proto.graph = c.graph;
  p->proto.dist = c.dist;
  set_errhandler(rt, p->proto, c.errh, c.errh_builtin);
  p->info = info;
  p->over = c.internal;
  if (int e = copy_attrs(rt, c.attrs, c.handle, &p->attrs)) {
    dup_drop(rt, *p, MPI_COMM_NULL);
    return e;
  }
  return 0;
}

int dup_finish(Runtime& rt, DupPlan& p, uint32_t ctx, MPI_Comm* out) {
  MPI_Comm h;
  const CommObj& c = p.proto;
  int e = c.inter ? make_intercomm(rt, c.group, c.remote, ctx, c, &h) : make_comm(rt, c.group, ctx, c, &h);
  if (e) {
    dup_drop(rt, p, MPI_COMM_NULL);
    return e;
  }
  CommObj* n = comm_of(rt, h);
  n->info = std::move(p.info);
  n->cart = c.cart;  // a duplicate keeps the topology
  n->graph = c.graph;
  n->dist = c.dist;
  n->attrs = std::move(p.attrs);
  p.attrs.clear();
  if (p.proto.errh) release_errhandler(rt, p.proto.errh);
  p.proto.errh = nullptr;
  *out = h;
  return 0;
}

// ---- the idup request ----

struct Idup {
  Runtime* rt;
  DupPlan plan;
  std::unique_ptr<Agreement> agree;
  MPI_Comm* out;
};

void finish(Request& r, Idup* x) {
  int e = x->agree->error();
  if (!e) {
    e = dup_finish(*x->rt, x->plan, x->agree->index(), x->out);
  } else {
    dup_drop(*x->rt, x->plan, MPI_COMM_NULL);
  }
  r.status = Status{};
  r.status.error = e;
  delete x;
  r.ext = nullptr;
  r.dev->complete(&r);  // drops the agreement's reference
}

int poll(Request& r, Status&) {
  auto* x = static_cast<Idup*>(r.ext);
  if (x && x->agree->advance()) finish(r, x);
  return 0;
}

const RequestClass kIdupClass{nullptr, nullptr, nullptr, &poll, nullptr};

// `bad`: the caller's own arguments failed; it still takes part.
int idup(Runtime& rt, CommObj& c, const Entries& info, MPI_Comm* newcomm, MPI_Request* request, int bad) {
  Device& dev = rt.dev();
  // The request first: out of them (ADI3_MAX_REQUESTS), no attribute is
  // copied and no tag taken.
  Request* r = nullptr;
  if (int e = dev.new_request(RequestKind::Collective, "MPI_Comm_idup", &r)) return e;
  auto x = std::make_unique<Idup>();
  x->rt = &rt;
  x->out = newcomm;
  // A failed copy callback (or bad arguments) fails the call at once, yet its agreement still
  // runs (no handle: it frees itself), so the other members fail too
  // instead of waiting for this one.
  x->plan.over = c.internal;
  int failed = bad ? bad : dup_begin(rt, c, info, &x->plan);
  // Every member takes the same number from the parent's sequence, so the
  // n-th idup (or nonblocking collective) of a communicator has one tag.
  x->agree = std::make_unique<Agreement>(rt, x->plan.over, sequence(c).next_tag(), failed);
  if (!failed) r->refs.fetch_add(1, std::memory_order_relaxed);  // the user's handle + the agreement
  r->cls = &kIdupClass;
  Idup* raw = x.release();
  r->ext = raw;
  if (raw->agree->advance())
    finish(*r, raw);
  else
    dev.add_pollable(r);
  if (failed) return no_peer_waits(failed);  // (the agreement goes on without this rank's handle)
  return new_request(rt, r, c.handle, false, request);
}

}  // namespace

int adi3::mpi::comm_dup(Runtime& rt, CommObj& c, const Entries& info, MPI_Comm* out) {
  DupPlan p;
  // A failed copy callback still takes part in the agreement, so that the
  // other members fail too instead of waiting for this one.
  int failed = dup_begin(rt, c, info, &p);
  uint32_t ctx;
  if (int e = agree_context(rt, p.over, kTagContext, &ctx, failed)) {
    dup_drop(rt, p, MPI_COMM_NULL);
    return e;
  }
  return dup_finish(rt, p, ctx, out);
}

ADI3_MPI_API(int, Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request), (comm, newcomm, request)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  const int bad = newcomm && request ? 0 : raise(ErrorClass::Arg, "newcomm or request is null");
  if (newcomm) *newcomm = MPI_COMM_NULL;  // until the request completes, and after a failure
  if (request) *request = MPI_REQUEST_NULL;
  return comm_error(c, idup(*rt, *c, c->info, newcomm, request, bad), __func__);
}

ADI3_MPI_API(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request),
             (comm, info, newcomm, request)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (newcomm) *newcomm = MPI_COMM_NULL;
  if (request) *request = MPI_REQUEST_NULL;
  Entries entries;
  const int bad =
      !newcomm || !request ? raise(ErrorClass::Arg, "newcomm or request is null") : info_entries(*rt, info, &entries);
  return comm_error(c, idup(*rt, *c, entries, newcomm, request, bad), __func__);
}
