#include "mpi/leaders.hpp"

#include <chrono>
#include <mutex>

#include "mpi/agree.hpp"
#include "mpi/api.hpp"

namespace adi3::mpi {

namespace {

constexpr int kUnknownLeader = -1;  // leader_meetings' key for refusals to an unknown remote leader

// Meetings with the remote leader `who` so far (Runtime::leader_meetings).
uint32_t meetings(Runtime& rt, int who) {
  std::lock_guard<std::mutex> g(rt.leader_lock);
  return rt.leader_meetings[who];
}
void met(Runtime& rt, int who, uint32_t meeting) {
  std::lock_guard<std::mutex> g(rt.leader_lock);
  rt.leader_meetings[who] = meeting + 1;
}
// The refusal of meeting m to who, which takes back its count (so none is
// left for a later meeting) and says so before this leader goes on: its
// next count cannot reach who while who still waits in this meeting.
void tell_refused(Runtime& rt, int who, uint32_t m, int refused) {
  Device& dev = rt.dev();
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  const int msg[2] = {static_cast<int>(m), static_cast<int>(error_class_of(refused))};
  if (dev.send(msg, 2, ints, who, kTagRefused, rt.world.internal)) return;
  met(rt, who, m);
  int taken = 0;
  Request* r = nullptr;
  const auto deadline = std::chrono::steady_clock::now() + kAskPatience;
  while (!dev.irecv(&taken, 1, ints, who, kTagRefusalTaken, rt.world.internal, &r) &&
         arrived_by(dev, &r, deadline, nullptr) && taken != static_cast<int>(m)) {
  }
}

}  // namespace

// An error class another process sent (anything out of range: Other).
ErrorClass class_named(int cls) {
  return cls > 0 && cls < static_cast<int>(ErrorClass::LastCode) ? static_cast<ErrorClass>(cls) : ErrorClass::Other;
}

int meet_leader(Runtime& rt, const Comm& peer, int remote_leader, int tag, int mine_n, int* n, int* refusal) {
  Device& dev = rt.dev();
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  const int who = peer.to_peer(remote_leader);
  uint32_t meeting = meetings(rt, who);
  const Comm& world = rt.world.internal;
  int got[2] = {0, 0}, ref[2] = {0, 0}, ask = 0;
  Request *rc = nullptr, *rr = nullptr, *ra = nullptr;
  auto older = [&](int m) { return static_cast<int32_t>(static_cast<uint32_t>(m) - meeting) < 0; };
  int e = dev.irecv(got, 2, ints, remote_leader, tag, peer, &rc);
  if (!e) e = dev.irecv(ref, 2, ints, who, kTagRefused, world, &rr);
  if (!e) e = dev.irecv(&ask, 1, ints, who, kTagWhoWaits, world, &ra);
  const int out[2] = {mine_n, static_cast<int>(meeting)};
  Request* sc = nullptr;
  if (!e) e = dev.isend(out, 2, ints, remote_leader, tag, peer, SendMode::Standard, &sc);
  int refused_class = 0;
  while (!e) {
    e = dev.block_until([&] { return rc->complete() || rr->complete() || ra->complete(); });
    if (e) break;
    if (ra->complete()) {  // the remote leader refused, not knowing it was this one: say so
      if ((e = dev.wait(&ra, nullptr))) break;
      const int answer[2] = {ask, static_cast<int>(meeting)};
      e = dev.send(answer, 2, ints, who, kTagIWait, world);
      if (!e) e = dev.irecv(&ask, 1, ints, who, kTagWhoWaits, world, &ra);
      continue;
    }
    if (rc->complete()) {
      if ((e = dev.wait(&rc, nullptr))) break;
      if (older(got[1])) {
        e = dev.irecv(got, 2, ints, remote_leader, tag, peer, &rc);
        continue;
      }
      meeting = static_cast<uint32_t>(got[1]);
      *n = got[0];
      break;
    }
    if ((e = dev.wait(&rr, nullptr))) break;
    if (older(ref[0])) {
      e = dev.irecv(ref, 2, ints, who, kTagRefused, world, &rr);
      continue;
    }
    meeting = static_cast<uint32_t>(ref[0]);
    refused_class = ref[1];
    break;
  }
  // A refusing leader never takes this count: it is taken back.
  if (refused_class && sc) dev.cancel(sc);
  for (Request** r : {&rc, &rr, &ra, &sc}) {
    if (!*r) continue;
    if (*r != sc) dev.cancel(*r);
    dev.wait(r, nullptr);
  }
  if (e) return e;
  met(rt, who, meeting);
  if (refused_class) {
    const int taken = static_cast<int>(meeting);
    dev.send(&taken, 1, ints, who, kTagRefusalTaken, world);
    *refusal = no_peer_waits(
        raise(class_named(refused_class),
              "MPI_Intercomm_create: the remote leader (rank %d of peer_comm) refused its arguments", remote_leader));
  }
  return 0;
}

void refuse_meeting(Runtime& rt, int who, int refused) { tell_refused(rt, who, meetings(rt, who), refused); }

bool refuse_unknown_meeting(Runtime& rt, const GroupData& local, int refused) {
  Device& dev = rt.dev();
  const Comm& world = rt.world.internal;
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  const uint32_t num = meetings(rt, kUnknownLeader);
  met(rt, kUnknownLeader, num);
  const int ask = static_cast<int>(num);
  for (int p = 0; p < world.size; ++p) {
    if (local.rank_of(world.to_peer(p)) == MPI_UNDEFINED) dev.send(&ask, 1, ints, p, kTagWhoWaits, world);
  }
  int got[2] = {0, 0};
  Request* r = nullptr;
  Status st;
  const auto deadline = std::chrono::steady_clock::now() + kAskPatience;
  while (!dev.irecv(got, 2, ints, kAnySource, kTagIWait, world, &r) && arrived_by(dev, &r, deadline, &st)) {
    if (got[0] == ask && st.bytes == sizeof got && local.rank_of(world.to_peer(st.source)) == MPI_UNDEFINED) {
      tell_refused(rt, world.to_peer(st.source), static_cast<uint32_t>(got[1]), refused);
      return true;
    }  // else an earlier refusal's answer
  }
  return false;
}

}  // namespace adi3::mpi
