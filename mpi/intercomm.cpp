// Intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge.
//
// An intercommunicator's point-to-point Comm has the caller's local rank and
// maps ranks to the remote group, so the core's matching works unchanged (a
// sender's envelope carries its local rank, which is its rank in the
// receiver's remote group). Its internal Comm spans both groups, in "union
// order": the group holding the lower channel rank first.
#include <algorithm>
#include <cstring>
#include <vector>

#include "mpi/agree.hpp"
#include "mpi/api.hpp"
#include "mpi/leaders.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

constexpr int kTagBcast = 3;
// A leader's count to its group below this: the remote leader refused.
constexpr int kRemoteRefused = -256;

// What a member whose own arguments are bad contributes in place of its
// channel rank (MPI_Intercomm_create) or high flag (MPI_Intercomm_merge).
constexpr int kFailed = -1;

// After an exchange of entries of `stride` ints: the error every member
// returns when one of them contributed kFailed (`mine`: this member's own).
int failed_member(const std::vector<int>& all, std::size_t stride, int mine) {
  for (std::size_t i = 0; i < all.size(); i += stride) {
    if (all[i] != kFailed) continue;
    return no_peer_waits(
        mine ? mine
             : raise(ErrorClass::Other, "another process failed its arguments, so the call fails at every member"));
  }
  return 0;
}

std::vector<int> union_order(const GroupData& a, const GroupData& b) {
  int amin = *std::min_element(a.ranks.begin(), a.ranks.end());
  int bmin = *std::min_element(b.ranks.begin(), b.ranks.end());
  const GroupData& first = amin < bmin ? a : b;
  const GroupData& second = amin < bmin ? b : a;
  std::vector<int> u = first.ranks;
  u.insert(u.end(), second.ranks.begin(), second.ranks.end());
  return u;
}

int check_leader(Runtime& rt, CommObj& lc, MPI_Comm peer_comm, int remote_leader, CommObj** pc);

// Leader-mediated exchange between two groups: every member contributes k
// ints; afterwards each member has its own group's contributions (local
// rank order) and the other group's (remote rank order).
struct Bridge {
  Runtime& rt;
  CommObj& local;
  int leader;  // -1: this member's local_leader was bad (learnt from the others)
  MPI_Comm peer_comm;
  int remote_leader;
  int tag;
  bool bad_tag;
  const Comm* peer = nullptr;  // at the leader only
  int refused = 0;             // at the leader: its error in the arguments only it sees

  // The leader's own checks: the other members learn their outcome from it,
  // the remote leader (waiting for this one's count) from a refusal
  // (leaders.hpp), sent straight to it when only the tag is bad.
  void lead() {
    CommObj* pc = nullptr;
    refused = check_leader(rt, local, peer_comm, remote_leader, &pc);
    if (pc && !refused) peer = &pc->pt2pt;
    if (!refused && bad_tag) {
      refused = raise(ErrorClass::Tag, "invalid tag %d", tag);
      refuse_meeting(rt, peer->to_peer(remote_leader), refused);
      refused = no_peer_waits(refused);
    } else if (refused && refuse_unknown_meeting(rt, *local.group, refused)) {
      refused = no_peer_waits(refused);
    }
  }

  // A member whose local_leader was bad follows the one its first member
  // with a valid local_leader named (entry[at] of each local entry).
  void follow(const std::vector<int>& local_all, std::size_t k, std::size_t at) {
    for (std::size_t i = at; i < local_all.size() && leader < 0; i += k) {
      if (local_all[i] >= 0 && local_all[i] < local.size()) leader = local_all[i];
    }
    if (leader == local.rank()) lead();
  }

  int exchange(const std::vector<int>& mine, std::vector<int>* local_all, std::vector<int>* remote_all,
               std::size_t leader_at = 0) {
    Device& dev = rt.dev();
    const auto k = mine.size();
    local_all->resize(k * static_cast<std::size_t>(local.size()));
    if (int e = allgather_bytes(dev, local.internal, mine.data(), k * sizeof(int), local_all->data(), kTagGather)) {
      return e;
    }
    if (leader < 0 && leader_at) follow(*local_all, k, leader_at);
    // Nobody named a valid leader: the group fails alone (the entries say so).
    if (leader < 0) return 0;
    const Datatype* ints = Datatype::builtin(Builtin::kInt);
    int n = 0;
    if (local.rank() == leader && !refused) {
      if (int e = meet_leader(rt, *peer, remote_leader, tag, static_cast<int>(local_all->size()), &n, &refused)) {
        return e;
      }
      if (refused) n = kRemoteRefused;
    }
    if (local.rank() == leader && refused) {
      // The members wait for the leader: a negative count tells them the
      // class (and, below kRemoteRefused, that the remote leader refused).
      n = (n == kRemoteRefused ? kRemoteRefused : 0) - static_cast<int>(error_class_of(refused));
      for (int r = 0; r < local.size(); ++r) {
        if (r != leader) dev.send(&n, 1, ints, r, kTagBcast, local.internal);
      }
      return refused;
    }
    if (local.rank() == leader) {
      // The remote leader's count: whole entries of at most every process.
      if (n < 0 || n % static_cast<int>(k) != 0 || n / static_cast<int>(k) > dev.size()) {
        return raise(ErrorClass::Other, "MPI_Intercomm_create: the remote leader sent a bad group size %d", n);
      }
      remote_all->resize(static_cast<std::size_t>(n));
      if (int e = dev.sendrecv(local_all->data(), local_all->size(), ints, remote_leader, tag, remote_all->data(),
                               remote_all->size(), ints, remote_leader, tag, *peer, nullptr)) {
        return e;
      }
      for (int r = 0; r < local.size(); ++r) {
        if (r == leader) continue;
        if (int e = dev.send(&n, 1, ints, r, kTagBcast, local.internal)) return e;
        if (int e = dev.send(remote_all->data(), remote_all->size(), ints, r, kTagBcast, local.internal)) return e;
      }
      return 0;
    }
    if (int e = dev.recv(&n, 1, ints, leader, kTagBcast, local.internal, nullptr)) return e;
    if (n < 0) {
      const bool remote = n <= kRemoteRefused;
      const ErrorClass cls = class_named(remote ? kRemoteRefused - n : -n);
      if (remote) {
        return raise(cls,
                     "MPI_Intercomm_create: the remote leader named by the local leader (rank %d) refused its "
                     "arguments",
                     leader);
      }
      return raise(cls, "MPI_Intercomm_create: the local leader (rank %d) refused its arguments", leader);
    }
    remote_all->resize(static_cast<std::size_t>(n));
    return dev.recv(remote_all->data(), remote_all->size(), ints, leader, kTagBcast, local.internal, nullptr);
  }
};

// MPI-3.1 6.6.2: the local and remote groups must be disjoint; the leader
// sees an overlap with the remote leader before any message leaves.
int check_leader(Runtime& rt, CommObj& lc, MPI_Comm peer_comm, int remote_leader, CommObj** pc) {
  if (int e = get_comm(rt, peer_comm, pc)) return e;
  if (remote_leader < 0 || remote_leader >= (*pc)->pt2pt.size) {
    return raise(ErrorClass::Rank, "invalid remote_leader %d (peer_comm has %d ranks)", remote_leader,
                 (*pc)->pt2pt.size);
  }
  int who = (*pc)->pt2pt.to_peer(remote_leader);
  if (who == rt.dev().rank()) {
    return raise(ErrorClass::Rank, "remote_leader %d is the local leader itself: the groups must be disjoint",
                 remote_leader);
  }
  int at = lc.group->rank_of(who);
  if (at != MPI_UNDEFINED) {
    return raise(ErrorClass::Comm, "remote_leader %d is rank %d of local_comm: the groups must be disjoint",
                 remote_leader, at);
  }
  return 0;
}

// The remote group as the remote leader sent it: valid, distinct processes
// outside the local group.
int check_disjoint(Runtime& rt, const GroupData& local, const GroupData& remote) {
  std::vector<char> seen(static_cast<std::size_t>(rt.dev().size()), 0);
  for (int p : local.ranks) seen[static_cast<std::size_t>(p)] = 1;
  for (int p : remote.ranks) {
    if (p < 0 || p >= rt.dev().size()) {
      return raise(ErrorClass::Other, "MPI_Intercomm_create: the remote leader named process %d", p);
    }
    if (seen[static_cast<std::size_t>(p)]) {
      return raise(ErrorClass::Comm, "process %d is in both the local and the remote group: they must be disjoint", p);
    }
    seen[static_cast<std::size_t>(p)] = 1;
  }
  return 0;
}

}  // namespace

int adi3::mpi::need_intra(const CommObj& c, const char* what) {
  if (!c.inter) return 0;
  return raise(ErrorClass::Comm, "%s on an intercommunicator is not supported", what);
}

int adi3::mpi::make_intercomm(Runtime& rt, GroupPtr local, GroupPtr remote, uint32_t ctx, const CommObj& parent,
                              MPI_Comm* out) {
  auto* c = new CommObj;
  int me = rt.dev().rank();
  Comm base;
  base.context = context_of(ctx);
  base.rank = local->rank_of(me);
  base.size = remote->size();
  base.peers = remote->ranks;
  c->pt2pt = base;
  c->coll = base;
  c->coll.context += 1;
  init_buffers(*c, session_buffer(parent));
  std::vector<int> u = union_order(*local, *remote);
  c->internal.context = base.context + 2;
  c->internal.size = static_cast<int>(u.size());
  c->internal.rank = static_cast<int>(std::find(u.begin(), u.end(), me) - u.begin());
  c->internal.peers = u;
  // `grouped` is the local group alone (the local phases of collectives).
  c->grouped.context = base.context + 3;
  c->grouped.rank = base.rank;
  c->grouped.size = local->size();
  c->grouped.peers = local->ranks;
  c->group = std::move(local);
  c->remote = std::move(remote);
  c->inter = true;
  c->ctx_index = ctx;
  int i = rt.comms.add(c);
  if (i < 0) {
    rt.contexts.release(static_cast<int>(ctx));
    delete c;
    return raise(ErrorClass::Intern, "too many communicators");
  }
  c->handle = make_handle(HandleClass::User, Kind::Comm, i);
  set_errhandler(rt, *c, parent.errh, parent.errh_builtin);
  *out = c->handle;
  return 0;
}

ADI3_MPI_API(int, Intercomm_create,
             (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
              MPI_Comm* newintercomm),
             (local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm)) {
  ADI3_MPI_ENTER();
  CommObj* lc = nullptr;
  if (int e = get_comm(*rt, local_comm, &lc)) return world_error(e, __func__);
  if (int e = need_intra(*lc, "MPI_Intercomm_create's local_comm")) return comm_error(lc, e, __func__);
  // A member's own bad arguments: it still takes part (as kFailed), so both
  // groups fail instead of waiting for it; a leader whose tag is bad cannot
  // reach the remote leader and refuses for its group. A bad local_leader:
  // the member follows the leader the others named (the one member of a
  // group of one leads).
  const bool bad_tag = tag < 0 || tag > kTagUb;
  const bool bad_leader = local_leader < 0 || local_leader >= lc->size();
  int bad = !newintercomm ? raise(ErrorClass::Arg, "newintercomm is null")
            : bad_leader
                ? raise(ErrorClass::Rank, "invalid local_leader %d (local_comm has %d ranks)", local_leader, lc->size())
            : bad_tag ? raise(ErrorClass::Tag, "invalid tag %d", tag)
                      : 0;
  const int named = !bad_leader ? local_leader : lc->size() == 1 ? 0 : -1;
  Bridge b{*rt, *lc, named, peer_comm, remote_leader, tag, bad_tag};
  if (lc->rank() == named) b.lead();
  constexpr int W = ContextIds::kWords;
  constexpr std::size_t kStride = 2 + W;  // channel rank (or kFailed), named leader, free context mask
  for (;;) {
    // Round 1: everyone's channel rank, named leader and free context mask.
    std::vector<int> mine(kStride), lall, rall;
    mine[0] = bad ? kFailed : rt->dev().rank();
    mine[1] = bad_leader ? -1 : local_leader;
    rt->contexts.snapshot(reinterpret_cast<uint32_t*>(mine.data() + 2));
    if (int e = b.exchange(mine, &lall, &rall, 1)) return comm_error(lc, bad ? bad : e, __func__);
    for (const std::vector<int>* all : {&lall, &rall}) {
      if (int e = failed_member(*all, kStride, bad)) return comm_error(lc, e, __func__);
    }
    uint32_t agreed[W];
    std::memset(agreed, 0xff, sizeof agreed);
    auto remote = std::make_shared<GroupData>();
    for (const std::vector<int>* all : {&lall, &rall}) {
      for (std::size_t r = 0; r * kStride < all->size(); ++r) {
        const int* entry = all->data() + r * kStride;
        if (all == &rall) remote->ranks.push_back(entry[0]);
        for (int w = 0; w < W; ++w) agreed[w] &= static_cast<uint32_t>(entry[2 + w]);
      }
    }
    // Every member of both groups sees the same two lists, so all fail alike.
    if (int e = check_disjoint(*rt, *lc->group, *remote)) return comm_error(lc, e, __func__);
    int pick = rt->contexts.claim_lowest(agreed);
    bool ok = pick >= 0;
    if (rt->thread_level == MPI_THREAD_MULTIPLE) {
      // Round 2: did everyone take the same index?
      std::vector<int> p1{pick}, lp, rp;
      if (int e = b.exchange(p1, &lp, &rp)) return comm_error(lc, e, __func__);
      for (int p : lp) ok = ok && p == pick;
      for (int p : rp) ok = ok && p == pick;
    }
    if (ok) {
      return comm_error(lc, make_intercomm(*rt, lc->group, remote, static_cast<uint32_t>(pick), *lc, newintercomm),
                        __func__);
    }
    if (pick >= 0) rt->contexts.release(pick);
    bool none = true;
    for (uint32_t w : agreed) none = none && w == 0;
    if (none) return comm_error(lc, raise(ErrorClass::Other, "no context id is free in both groups"), __func__);
  }
}

ADI3_MPI_API(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm),
             (intercomm, high, newintracomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, intercomm, &c)) return world_error(e, __func__);
  if (!c->inter) return comm_error(c, raise(ErrorClass::Comm, "not an intercommunicator"), __func__);
  // Everyone's high flag, in union order; a member whose arguments are bad
  // still sends one (kFailed), so the call fails at every member of both
  // groups instead of leaving them waiting for it.
  const int bad = newintracomm ? 0 : raise(ErrorClass::Arg, "newintracomm is null");
  int mine = bad ? kFailed : high ? 1 : 0;
  std::vector<int> highs(static_cast<std::size_t>(c->internal.size));
  if (int e = allgather_bytes(rt->dev(), c->internal, &mine, sizeof mine, highs.data(), kTagGather)) {
    return comm_error(c, bad ? bad : e, __func__);
  }
  if (int e = failed_member(highs, 1, bad)) return comm_error(c, e, __func__);
  auto remote_high = [&] {
    int first = c->remote->ranks[0];
    auto at = std::find(c->internal.peers.begin(), c->internal.peers.end(), first) - c->internal.peers.begin();
    return highs[static_cast<std::size_t>(at)];
  }();
  // The "low" group comes first; with equal flags, union order decides.
  bool local_first = mine != remote_high ? !mine
                                         : std::find(c->group->ranks.begin(), c->group->ranks.end(),
                                                     c->internal.peers[0]) != c->group->ranks.end();
  uint32_t ctx;
  if (int e = agree_context(*rt, c->internal, 2, &ctx)) return comm_error(c, e, __func__);
  auto g = std::make_shared<GroupData>();
  const GroupData& a = local_first ? *c->group : *c->remote;
  const GroupData& b2 = local_first ? *c->remote : *c->group;
  g->ranks = a.ranks;
  g->ranks.insert(g->ranks.end(), b2.ranks.begin(), b2.ranks.end());
  // An intracommunicator over g (comm_split's constructor path).
  auto* n = new CommObj;
  init_comm(*n, g, ctx, rt->dev().rank());
  init_buffers(*n, session_buffer(*c));
  int i = rt->comms.add(n);
  if (i < 0) {
    rt->contexts.release(static_cast<int>(ctx));
    delete n;
    return comm_error(c, raise(ErrorClass::Intern, "too many communicators"), __func__);
  }
  n->handle = make_handle(HandleClass::User, Kind::Comm, i);
  set_errhandler(*rt, *n, c->errh, c->errh_builtin);
  *newintracomm = n->handle;
  return MPI_SUCCESS;
}

namespace {

// Channel ranks of `side`'s members whose entry in `all` (stride 3, union
// order) has `color`, ordered by (entry[1], rank in side).
std::vector<int> members_with(const CommObj& c, const GroupData& side, const std::vector<int>& all, int color) {
  std::vector<std::pair<std::pair<int, int>, int>> picked;  // ((key, side rank), channel rank)
  for (std::size_t u = 0; u < c.internal.peers.size(); ++u) {
    int ch = c.internal.peers[u];
    int r = side.rank_of(ch);
    if (r == MPI_UNDEFINED || all[3 * u] != color) continue;
    picked.push_back({{all[3 * u + 1], r}, ch});
  }
  std::sort(picked.begin(), picked.end());
  std::vector<int> out;
  for (auto& p : picked) out.push_back(p.second);
  return out;
}

// Each process's (color, key) over both groups, and a context index; a
// member that failed (`failed`) sends kFailed and all fail before agreeing.
int gather_and_agree(Runtime& rt, CommObj& c, int color, int key, std::vector<int>* all, uint32_t* ctx, int failed) {
  int mine[3] = {failed ? kFailed : color, key, 0};
  all->resize(3 * c.internal.peers.size());
  if (int e = allgather_bytes(rt.dev(), c.internal, mine, sizeof mine, all->data(), kTagGather)) {
    return failed ? failed : e;
  }
  if (int e = failed_member(*all, 3, failed)) return e;
  return agree_context(rt, c.internal, 2, ctx);
}

int finish(Runtime& rt, CommObj& c, std::vector<int> local, std::vector<int> remote, uint32_t ctx, MPI_Comm* out) {
  if (local.empty() || remote.empty()) {
    rt.contexts.release(static_cast<int>(ctx));
    *out = MPI_COMM_NULL;
    return 0;
  }
  auto l = std::make_shared<GroupData>();
  l->ranks = std::move(local);
  auto r = std::make_shared<GroupData>();
  r->ranks = std::move(remote);
  return make_intercomm(rt, l, r, ctx, c, out);
}

}  // namespace

int adi3::mpi::inter_split(Runtime& rt, CommObj& c, int color, int key, MPI_Comm* out, int failed) {
  std::vector<int> all;
  uint32_t ctx;
  if (int e = gather_and_agree(rt, c, color, key, &all, &ctx, failed)) return e;
  if (color == MPI_UNDEFINED) {
    rt.contexts.release(static_cast<int>(ctx));
    *out = MPI_COMM_NULL;
    return 0;
  }
  return finish(rt, c, members_with(c, *c.group, all, color), members_with(c, *c.remote, all, color), ctx, out);
}

int adi3::mpi::inter_create(Runtime& rt, CommObj& c, const GroupData& g, MPI_Comm* out, int failed) {
  // Each process tells its place in its side's group (the order of the new
  // groups), or that it is not in it.
  int place = g.rank_of(rt.dev().rank());
  std::vector<int> all;
  uint32_t ctx;
  if (int e = gather_and_agree(rt, c, place == MPI_UNDEFINED ? 0 : 1, place, &all, &ctx, failed)) return e;
  if (place == MPI_UNDEFINED) {
    rt.contexts.release(static_cast<int>(ctx));
    *out = MPI_COMM_NULL;
    return 0;
  }
  return finish(rt, c, g.ranks, members_with(c, *c.remote, all, 1), ctx, out);
}
