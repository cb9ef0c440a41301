// The one place that decides how RMA traffic travels: per window, per
// operation and per target, it asks the channel's capabilities (its
// one-sided part, Device::native, which ADI3_FORCE_EMULATION turns off per
// communication type) and the window's properties, and answers which path
// carries it: the channel's native one-sided operations (rma/native*) or
// the emulation over packets (emul/). Each operation falls back alone when
// the native path cannot take it (a derived target datatype on a region
// reached by cross-memory attach, an operation forced by adi3_emulate_ops,
// emulated operations to the same target still in flight).
#pragma once
#include <cstdint>

#include "adi3/steady_clock.hpp"
#include "rma/protocol.hpp"

namespace adi3::rma {

class WindowState;
struct Target;
struct OpArgs;
struct Checked;
struct Gate;

enum class Path : uint8_t {
  Emulated,  // packets applied by the target's progress engine / agent
  Native,    // the channel's own one-sided operations
};

struct Route {
  Path path = Path::Emulated;
  const char* why = "";  // for logs and tests: why this path
};

// A checked operation in the current epoch, whose items would wait at gate.
Route route_op(const WindowState& w, const OpArgs& a, const Checked& c, const Gate& gate);
// route_op's last rule, asked ahead: on a window from create (memory the
// channel reaches by cross-memory attach, not mapped), 1 when the target
// polls inside the library (a packet beats the system call), 0 when it
// does not; -1 when the rule does not apply to this target. The caller
// passes the verdict on in OpArgs::polls (the channel's look is asked once
// per operation: it counts streams).
int8_t polls_now(const WindowState& w, int target);
// Whether a put or get of bytes to such a target takes cross-memory attach
// even while it polls: one kernel copy of a large block beats the packets
// streamed through the ring (polls_now's verdict is then not asked).
bool bulk_by_cma(Msg kind, uint64_t bytes);
// Under the window's mutex, when a flush or unlock of target had one
// operation before it and its answer arrived: waited_ns, how long the wait
// lasted past its first polls (0: it ended within them). A late answer
// (the target counted itself polling in a blocking call, but a loaded host
// had descheduled it: the packet waited for its next time slice, up to
// milliseconds per operation) sends the operations to it by cross-memory
// attach, which needs nobody, for as long again (doubling while answers
// stay late, at most kCmaForMaxNs); an answer in time ends that.
void answered(Target& t, int64_t waited_ns);
// How long past its first kLatePolls polls a wait for one packet's answer
// may last before the answer counts as late.
constexpr uint32_t kLatePolls = 64;
constexpr int64_t kLateNs = 200'000, kCmaForMaxNs = 50'000'000;
// Active-target synchronization (fence, post/start/complete/wait): native
// when every rank of the window agreed at creation (the counters of the
// control blocks, rma/native_active.cpp), else the emulation's packets
// (they carry the counts of emulated operations and are the barrier).
Route route_active(const WindowState& w);
// Passive-target synchronization (lock, unlock, flush): native when every
// rank of the window agreed at creation (the lock words of the control
// blocks), else the emulation's lock queue.
Route route_passive(const WindowState& w);
// Passive target on a window spanning hosts (not native for passive): the
// target's emulated lock queue is the one lock authority for every origin,
// but once it granted this rank's lock (or under MPI_MODE_NOCHECK) the
// operations to a same-host target move its memory natively; so Win_lock
// and Win_lock_all ask such targets at once and wait for the grant.
bool queue_lock_native(const WindowState& w, int target);
// Whether passive target on this window needs the agent thread (the
// emulation's lock requests and operations are packets someone must serve).
bool passive_needs_agent(const WindowState& w);

}  // namespace adi3::rma
