// The one place that decides how RMA traffic travels: per window, per
// operation and per target, it asks the channel's capabilities
// (Device::native, which ADI3_FORCE_EMULATION turns off) and the window's
// properties, and answers which path carries it. Today every answer is an
// emulation (emul/); the native paths of shared memory are added here,
// beside them, so each operation falls back alone when the native path
// cannot take it (a derived target datatype, a window not in shared memory).
#pragma once
#include <cstdint>

#include "rma/protocol.hpp"

namespace adi3 {
class Datatype;
}

namespace adi3::rma {

class WindowState;

enum class Path : uint8_t {
  Emulated,  // packets applied by the target's progress engine / agent
  Native,    // the channel's own one-sided operations (next issue)
};

struct Route {
  Path path = Path::Emulated;
  const char* why = "";  // for logs and tests: why this path
};

// An operation (Put ... Cas) to target (comm rank) with target type t.
Route route_op(const WindowState& w, Msg kind, int target, const Datatype* t);
// Active-target synchronization (fence, post/start/complete/wait).
Route route_active(const WindowState& w);
// Passive-target synchronization (lock, unlock, flush).
Route route_passive(const WindowState& w);
// Whether passive target on this window needs the agent thread (true for
// the emulation: lock requests are packets someone must serve).
bool passive_needs_agent(const WindowState& w);

}  // namespace adi3::rma
