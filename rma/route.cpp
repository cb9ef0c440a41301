// Routing of RMA traffic: native where the channel and window allow it,
// else the emulations. No channel offers a native path to windows yet, so
// every route says why it is emulated.
#include "rma/route.hpp"

#include "adi3/device.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma {
namespace {

Route emulated(const WindowState& w, CommType type) {
  if (!w.dev.native(type))
    return {Path::Emulated, "the channel does not do this type natively (or emulation is forced)"};
  return {Path::Emulated, "no native window path on this channel yet"};
}

}  // namespace

Route route_op(const WindowState& w, Msg, int, const Datatype*) {
  return emulated(
      w, w.access == WindowState::Access::Lock || w.access == WindowState::Access::LockAll ? kPassiveRma : kActiveRma);
}

Route route_active(const WindowState& w) { return emulated(w, kActiveRma); }

Route route_passive(const WindowState& w) { return emulated(w, kPassiveRma); }

bool passive_needs_agent(const WindowState& w) { return route_passive(w).path == Path::Emulated; }

}  // namespace adi3::rma
