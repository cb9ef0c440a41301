// The two leaders' meeting of MPI_Intercomm_create (intercomm.cpp): their
// counts over peer_comm, and a refusal when one leader refused its
// arguments, so the remote group does not wait for it.
//
// Leaders number their meetings per remote leader (Runtime::
// leader_meetings); every count and refusal carries the number, so a message
// of a meeting that ended without it is told from the current one's. A
// refusal goes to the remote leader on the world's internal context
// (kTagRefused); the waiting leader takes back its count (a cancelled send)
// and acknowledges (kTagRefusalTaken) before the refuser goes on, so the
// refuser's next count cannot reach a receive of the refused meeting. A
// leader that cannot tell its remote leader (a bad peer_comm or
// remote_leader) asks every process outside its group (kTagWhoWaits,
// numbered by its such refusals: leader_meetings[-1]); a leader waiting for
// it answers with its meeting number (kTagIWait) and the first answer of
// this refusal's number gets the refusal. None within kAskPatience: nobody
// waits for this leader. Left open: concurrent calls from threads with the
// same pair of leaders (one number per pair).
#pragma once
#include <chrono>

#include "mpi/runtime.hpp"

namespace adi3::mpi {

inline constexpr int kTagRefused = 7, kTagWhoWaits = 10, kTagIWait = 11, kTagRefusalTaken = 12;
inline constexpr std::chrono::seconds kAskPatience{2};

// The leaders' counts: mine_n out to remote_leader of peer (tag), the
// remote's in *n, or the remote leader's refusal (*refusal: its error here).
int meet_leader(Runtime& rt, const Comm& peer, int remote_leader, int tag, int mine_n, int* n, int* refusal);
// This leader refused (error `refused`): tells the remote leader `who`
// (channel rank), which is waiting for its count.
void refuse_meeting(Runtime& rt, int who, int refused);
// The same when the remote leader is unknown: the first leader outside
// `local` that waits for this one gets it. True if one did.
bool refuse_unknown_meeting(Runtime& rt, const GroupData& local, int refused);

// An error class another process sent (anything out of range: Other).
ErrorClass class_named(int cls);

}  // namespace adi3::mpi
