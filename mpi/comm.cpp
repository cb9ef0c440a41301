// Communicator creation and destruction: dup, split, split_type, create,
// create_group, free. Each new communicator gets a context index agreed by
// all its members over the parent's internal context.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <tuple>

#include "adi3/process.hpp"
#include "coll/coll.hpp"
#include "mpi/agree.hpp"
#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "rma/memory.hpp"

using namespace adi3;
using namespace adi3::mpi;

// Makes the CommObj and its handle; inherits parent's error handler.
int adi3::mpi::make_comm(Runtime& rt, GroupPtr group, uint32_t ctx, const CommObj& parent, MPI_Comm* out) {
  std::unique_ptr<CommObj> owned;
  int i = -1;
  try {  // out of memory part way: nothing is kept, the context goes back
    owned = std::make_unique<CommObj>();
    init_comm(*owned, std::move(group), ctx, rt.dev().rank());
    // A session's communicators beget communicators of that session.
    if (!session_buffer(*owned)) init_buffers(*owned, session_buffer(parent));
    i = rt.comms.add(owned.get());
  } catch (...) {
    rt.contexts.release(static_cast<int>(ctx));
    throw;
  }
  if (i < 0) {
    rt.contexts.release(static_cast<int>(ctx));
    return raise(ErrorClass::Intern, "too many communicators");
  }
  CommObj* c = owned.release();
  c->handle = make_handle(HandleClass::User, Kind::Comm, i);
  set_errhandler(rt, *c, parent.errh, parent.errh_builtin);
  *out = c->handle;
  return 0;
}

void adi3::mpi::destroy_comm(Runtime& rt, CommObj* c) {
  // The collectives' shared segments of its contexts.
  coll::forget_context(rt.dev(), c->coll.context);
  coll::forget_context(rt.dev(), c->internal.context);
  rt.comms.remove(handle_index(c->handle));
  rt.contexts.release(static_cast<int>(c->ctx_index));
  if (c->errh) release_errhandler(rt, c->errh);
  delete c;
}

namespace {

// The color a member that failed before the split offers (no legal color).
constexpr int kFailedColor = INT_MIN;

// Split by (color, key): members of my color ordered by key, then rank.
int split(Runtime& rt, CommObj& c, int color, int key, MPI_Comm* out, int failed = 0) {
  if (color < 0 && color != MPI_UNDEFINED) {
    int bad = raise(ErrorClass::Arg, "invalid color %d: must be non-negative or MPI_UNDEFINED", color);
    // Still take part, as MPI_UNDEFINED: the other members get their
    // communicators instead of waiting for this one forever.
    if (int e = split(rt, c, MPI_UNDEFINED, key, out)) return e;
    return no_peer_waits(bad);
  }
  if (c.inter) return inter_split(rt, c, color, key, out, failed);
  int mine[2] = {failed ? kFailedColor : color, key};
  std::vector<int> all(static_cast<std::size_t>(c.size()) * 2);
  if (int e = allgather_bytes(rt.dev(), c.internal, mine, sizeof mine, all.data(), kTagGather)) return e;
  // Everyone saw the same offers: all fail alike, before any context is taken.
  for (int r = 0; r < c.size(); ++r) {
    if (all[static_cast<std::size_t>(2 * r)] != kFailedColor) continue;
    if (failed) return no_peer_waits(failed);
    return no_peer_waits(
        raise(ErrorClass::Other, "rank %d of the communicator failed its arguments, so the call fails everywhere", r));
  }
  uint32_t ctx;
  if (int e = agree_context(rt, c.internal, kTagContext, &ctx)) return e;
  if (color == MPI_UNDEFINED) {
    rt.contexts.release(static_cast<int>(ctx));
    *out = MPI_COMM_NULL;
    return 0;
  }
  std::vector<std::tuple<int, int>> picked;  // (key, old rank)
  for (int r = 0; r < c.size(); ++r) {
    if (all[static_cast<std::size_t>(2 * r)] == color) picked.emplace_back(all[static_cast<std::size_t>(2 * r + 1)], r);
  }
  std::stable_sort(picked.begin(), picked.end());
  auto g = std::make_shared<GroupData>();
  for (auto& [k, r] : picked) g->ranks.push_back(c.group->ranks[static_cast<std::size_t>(r)]);
  return make_comm(rt, std::move(g), ctx, c, out);
}

// Color for MPI_COMM_TYPE_SHARED: the lowest rank on the same host whose
// memory this rank can map (rma::shares_memory: not where the channel has no
// shared-memory one-sided part, e.g. tcp alone, or emulation is forced; each
// rank is then a communicator of its own, which can still make a shared
// window). The host is the launcher's (its node map, which also decides shm
// or network between two ranks), so a shared communicator is one whose ranks
// can share memory even where hosts share a hostname (network namespaces);
// the hostname only without a launcher's map.
int host_color(Runtime& rt, CommObj& c, int* color) {
  auto peer = [&](int r) { return c.group->ranks[static_cast<std::size_t>(r)]; };
  if (Bootstrap* boot = process_bootstrap(rt.dev())) {
    const std::vector<int>& node_of = boot->node_map().node_of;
    auto node = [&](int r) { return node_of.at(static_cast<std::size_t>(peer(r))); };
    const int mine = node(c.rank());
    for (int r = 0; r < c.size(); ++r) {
      if (node(r) == mine && shares_memory(rt.dev(), peer(r))) {
        *color = r;
        return 0;
      }
    }
  }
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  if (gethostname(name, sizeof name - 1) != 0) std::strcpy(name, "localhost");
  std::vector<char> all(static_cast<std::size_t>(c.size()) * sizeof name);
  if (int e = allgather_bytes(rt.dev(), c.internal, name, sizeof name, all.data(), kTagGather)) return e;
  for (int r = 0; r < c.size(); ++r) {
    if (std::memcmp(all.data() + static_cast<std::size_t>(r) * sizeof name, name, sizeof name) == 0 &&
        shares_memory(rt.dev(), peer(r))) {
      *color = r;
      return 0;
    }
  }
  *color = c.rank();
  return 0;
}

// Every member of g must be in c.
int check_subgroup(const CommObj& c, const GroupData& g) {
  for (int r : g.ranks) {
    if (c.group->rank_of(r) == MPI_UNDEFINED) {
      return raise(ErrorClass::Group, "the group has process %d, which is not in the communicator", r);
    }
  }
  return 0;
}

using Entries = std::vector<std::pair<std::string, std::string>>;

}  // namespace

int adi3::mpi::comm_split(Runtime& rt, CommObj& c, int color, int key, MPI_Comm* out, int failed) {
  return split(rt, c, color, key, out, failed);
}

CommObj* adi3::mpi::comm_of(Runtime& rt, MPI_Comm h) {
  CommObj** c = rt.comms.get(handle_index(h));
  return c ? *c : nullptr;
}

ADI3_MPI_API(int, Comm_size, (MPI_Comm comm, int* size), (comm, size)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!size) return comm_error(c, raise(ErrorClass::Arg, "size is null"), __func__);
  *size = c->size();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_rank, (MPI_Comm comm, int* rank), (comm, rank)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!rank) return comm_error(c, raise(ErrorClass::Arg, "rank is null"), __func__);
  *rank = c->rank();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result), (comm1, comm2, result)) {
  ADI3_MPI_ENTER();
  CommObj *a = nullptr, *b = nullptr;
  if (int e = get_comm(*rt, comm1, &a)) return world_error(e, __func__);
  if (int e = get_comm(*rt, comm2, &b)) return world_error(e, __func__);
  if (!result) return comm_error(a, raise(ErrorClass::Arg, "result is null"), __func__);
  auto remote_of = [](const CommObj* c) { return c->remote ? c->remote->ranks : std::vector<int>{}; };
  if (a == b) {
    *result = MPI_IDENT;
  } else if (a->inter != b->inter) {
    *result = MPI_UNEQUAL;
  } else if (a->group->ranks == b->group->ranks && remote_of(a) == remote_of(b)) {
    *result = MPI_CONGRUENT;
  } else {
    auto x = a->group->ranks, y = b->group->ranks, rx = remote_of(a), ry = remote_of(b);
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    std::sort(rx.begin(), rx.end());
    std::sort(ry.begin(), ry.end());
    *result = x == y && rx == ry ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm), (comm, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!newcomm)
    return comm_error(c, fail_agreement(*rt, c->internal, raise(ErrorClass::Arg, "newcomm is null")), __func__);
  *newcomm = MPI_COMM_NULL;  // what a failed dup leaves (as MPICH)
  return comm_error(c, comm_dup(*rt, *c, c->info, newcomm), __func__);
}

ADI3_MPI_API(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm), (comm, info, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!newcomm)
    return comm_error(c, fail_agreement(*rt, c->internal, raise(ErrorClass::Arg, "newcomm is null")), __func__);
  *newcomm = MPI_COMM_NULL;
  Entries entries;
  if (int e = info_entries(*rt, info, &entries)) return comm_error(c, fail_agreement(*rt, c->internal, e), __func__);
  return comm_error(c, comm_dup(*rt, *c, entries, newcomm), __func__);
}

ADI3_MPI_API(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm), (comm, color, key, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  MPI_Comm unused;
  // A null newcomm still takes part (the call then fails at every member).
  const int bad = newcomm ? 0 : raise(ErrorClass::Arg, "newcomm is null");
  return comm_error(c, split(*rt, *c, color, key, newcomm ? newcomm : &unused, bad), __func__);
}

ADI3_MPI_API(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm),
             (comm, split_type, key, info, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, "MPI_Comm_split_type")) return comm_error(c, e, __func__);
  Entries entries;
  MPI_Comm unused;
  // A null newcomm or bad info still takes part (the call then fails at every member).
  int failed = newcomm ? info_entries(*rt, info, &entries) : raise(ErrorClass::Arg, "newcomm is null");
  if (failed) return comm_error(c, split(*rt, *c, MPI_UNDEFINED, key, &unused, failed), __func__);
  int bad = 0;
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
      split_type != MPI_COMM_TYPE_HW_UNGUIDED && split_type != MPI_UNDEFINED) {
    bad = raise(ErrorClass::Arg,
                "unknown split_type %d (MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, "
                "MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED)",
                split_type);
    split_type = MPI_UNDEFINED;  // still take part, so the others are not left waiting
  }
  // The one hardware level known here is the host (shared memory):
  // HW_GUIDED takes "mpi_hw_resource_type" = "mpi_shared_memory" (any other
  // value or none gives MPI_COMM_NULL); HW_UNGUIDED gives the host's ranks
  // when they are a strict subset of comm, else MPI_COMM_NULL.
  static constexpr const char* kHwKey = "mpi_hw_resource_type";
  static constexpr const char* kShared = "mpi_shared_memory";
  int color = MPI_UNDEFINED;
  if (int e = host_color(*rt, *c, &color)) return comm_error(c, e, __func__);
  if (split_type == MPI_UNDEFINED) color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
    auto it = std::find_if(entries.begin(), entries.end(), [](const auto& kv) { return kv.first == kHwKey; });
    if (it == entries.end() || it->second != kShared) color = MPI_UNDEFINED;
  }
  if (int e = split(*rt, *c, color, key, newcomm)) return comm_error(c, e, __func__);
  if (bad) return comm_error(c, no_peer_waits(bad), __func__);  // (it took part)
  if (*newcomm == MPI_COMM_NULL || split_type == MPI_COMM_TYPE_SHARED) return MPI_SUCCESS;
  int n = 0;
  PMPI_Comm_size(*newcomm, &n);
  if (split_type == MPI_COMM_TYPE_HW_UNGUIDED && n == c->size()) return PMPI_Comm_free(newcomm);
  CommObj* made = nullptr;
  if (get_comm(*rt, *newcomm, &made) == 0) made->info = {{kHwKey, kShared}};
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm), (comm, group, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  GroupPtr g;
  int bad = get_group(*rt, group, &g);
  if (!bad) bad = check_subgroup(*c, *g);
  if (!bad && !newcomm) bad = raise(ErrorClass::Arg, "newcomm is null");
  if (c->inter) return comm_error(c, inter_create(*rt, *c, g ? *g : GroupData{}, newcomm, bad), __func__);
  // A bad group still takes part in the agreement, which then fails at
  // every member instead of leaving the others waiting for this one.
  uint32_t ctx;
  if (int e = agree_context(*rt, c->internal, kTagContext, &ctx, bad)) return comm_error(c, e, __func__);
  if (g->rank_of(rt->dev().rank()) == MPI_UNDEFINED) {
    rt->contexts.release(static_cast<int>(ctx));
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return comm_error(c, make_comm(*rt, g, ctx, *c, newcomm), __func__);
}

int adi3::mpi::create_group(Runtime& rt, CommObj& c, MPI_Group group, int tag, MPI_Comm* newcomm, int bad) {
  GroupPtr g;
  if (int e = need_intra(c, "MPI_Comm_create_group")) return e;
  // The members may wait for this rank, which cannot tell who they are.
  if (int e = get_group(rt, group, &g)) return fail_no_group(rt, c.internal, c.grouped.context, e);
  if (int e = check_subgroup(c, *g)) return e;
  const bool member = g->rank_of(rt.dev().rank()) != MPI_UNDEFINED;
  if (!bad && !newcomm) bad = raise(ErrorClass::Arg, "newcomm is null");
  const bool bad_tag = tag < 0 || tag > kTagUb;
  if (bad_tag && !bad) bad = raise(ErrorClass::Tag, "invalid tag %d: tags run from 0 to %d", tag, kTagUb);
  if (!member) {
    if (newcomm) *newcomm = MPI_COMM_NULL;
    return bad ? no_peer_waits(bad) : 0;
  }
  // Only the group's members take part: agree over them alone, on the
  // parent's create_group context, kept apart by the user's tag. A member
  // whose arguments are bad still takes part (the call then fails at every
  // member); one whose tag is bad through the marks of agree.hpp.
  Comm over;
  over.context = c.grouped.context;
  over.rank = g->rank_of(rt.dev().rank());
  over.size = g->size();
  over.peers = g->ranks;
  Comm marks = over;
  marks.context = c.internal.context;
  if (bad_tag) return fail_create_group(rt, over, marks, bad);
  uint32_t ctx;
  if (int e = agree_watching(rt, over, tag, marks, c.internal, &ctx, bad)) return e;
  return make_comm(rt, g, ctx, c, newcomm);
}

ADI3_MPI_API(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm),
             (comm, group, tag, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  return comm_error(c, create_group(*rt, *c, group, tag, newcomm), __func__);
}

ADI3_MPI_API(int, Comm_free, (MPI_Comm * comm), (comm)) {
  ADI3_MPI_ENTER();
  if (!comm) return world_error(raise(ErrorClass::Arg, "comm is null"), __func__);
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, *comm, &c)) return world_error(e, __func__);
  if (c == &rt->world || c == &rt->self) {
    return comm_error(c, raise(ErrorClass::Comm, "predefined communicators cannot be freed"), __func__);
  }
  if (int e = delete_all_attrs(*rt, c->attrs, c->handle)) return comm_error(c, e, __func__);
  // Its buffered messages leave first: the program may reuse an attached
  // buffer once this returns (it cannot detach it any more).
  if (c->pt2pt.buffers) {
    if (int e = rt->dev().buffer_flush(*c->pt2pt.buffers->comm)) return comm_error(c, e, __func__);
  }
  destroy_comm(*rt, c);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_test_inter, (MPI_Comm comm, int* flag), (comm, flag)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!flag) return comm_error(c, raise(ErrorClass::Arg, "flag is null"), __func__);
  *flag = c->inter;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_remote_size, (MPI_Comm comm, int* size), (comm, size)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!c->inter) return comm_error(c, raise(ErrorClass::Comm, "not an intercommunicator"), __func__);
  if (!size) return comm_error(c, raise(ErrorClass::Arg, "size is null"), __func__);
  *size = c->remote->size();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group), (comm, group)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!c->inter) return comm_error(c, raise(ErrorClass::Comm, "not an intercommunicator"), __func__);
  if (!group) return comm_error(c, raise(ErrorClass::Arg, "group is null"), __func__);
  return comm_error(c, add_group(*rt, c->remote->ranks, group), __func__);
}

ADI3_MPI_API(int, Comm_set_name, (MPI_Comm comm, const char* comm_name), (comm, comm_name)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!comm_name) return comm_error(c, raise(ErrorClass::Arg, "comm_name is null"), __func__);
  c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_get_name, (MPI_Comm comm, char* comm_name, int* resultlen), (comm, comm_name, resultlen)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!comm_name || !resultlen)
    return comm_error(c, raise(ErrorClass::Arg, "comm_name or resultlen is null"), __func__);
  std::memcpy(comm_name, c->name.c_str(), c->name.size() + 1);
  *resultlen = static_cast<int>(c->name.size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_set_info, (MPI_Comm comm, MPI_Info info), (comm, info)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  InfoObj* i = nullptr;
  if (int e = get_info(*rt, info, &i)) return comm_error(c, e, __func__);
  c->info = i->entries;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used), (comm, info_used)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!info_used) return comm_error(c, raise(ErrorClass::Arg, "info_used is null"), __func__);
  return comm_error(c, add_info(*rt, c->info, info_used), __func__);
}

ADI3_MPI_API(int, Comm_get_parent, (MPI_Comm * parent), (parent)) {
  ADI3_MPI_ENTER();
  if (!parent) return world_error(raise(ErrorClass::Arg, "parent is null"), __func__);
  *parent = MPI_COMM_NULL;  // not started by MPI_Comm_spawn
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Topo_test, (MPI_Comm comm, int* status), (comm, status)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!status) return comm_error(c, raise(ErrorClass::Arg, "status is null"), __func__);
  *status = c->cart ? MPI_CART : c->graph ? MPI_GRAPH : c->dist ? MPI_DIST_GRAPH : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
