#include "emul/agent.hpp"

#include <chrono>
#include <ctime>
#include <new>
#include <pthread.h>

#include "adi3/device.hpp"

namespace adi3 {

namespace {
// With nothing pending that the doorbell does not announce, the agent
// sleeps this long at most (it wakes at once for any packet).
constexpr std::chrono::microseconds kIdleSleep{200000};
constexpr std::chrono::microseconds kHookSleep{10000};
}  // namespace

Agent::Agent(Device& dev) : dev_(dev), calls_(dev.channel().call_count()), thread_([this] { run(); }) {}

Agent::~Agent() {
  stop_.store(true, std::memory_order_release);
  dev_.channel().wake();
  thread_.join();
}

double Agent::cpu_seconds() const {
  clockid_t id;
  timespec ts{};
  if (pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &id) != 0) return 0;
  if (clock_gettime(id, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void Agent::run() {
  const auto nap = std::chrono::microseconds(dev_.config().sleep_us > 0 ? dev_.config().sleep_us : 1000);
  uint64_t seen_user = dev_.port().user_polls();
  while (!stop_.load(std::memory_order_acquire)) {
    try {
      step(nap, seen_user);
    } catch (const std::bad_alloc&) {
      // Progress reports running out of memory to the calls it concerns;
      // an allocation that escapes it anyway must not end the process from
      // this thread (std::terminate): look again after a nap.
      out_of_memory_.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(nap);
    }
  }
}

void Agent::step(std::chrono::microseconds nap, uint64_t& seen_user) {
  // A user thread polled since we last looked, or waits in a blocking call
  // (which progresses until it returns, asleep or not): it is inside the
  // library and progresses the device itself. Stay out of its way (no pass
  // that would contend for the device's locks, and off the doorbell) and
  // look again after a nap. The blocking call counts although it polls
  // rarely: during its long passes (a cross-memory copy of a 1 MiB piece)
  // the count of polls stands still, and an agent that took that for an
  // absent user spun on its core beside the copy (its passes find the poll
  // taken, its doorbell wait returns at once while packets wait): emulated
  // 4 MiB puts ran at half speed with the target's agent on (session 22).
  uint64_t u = dev_.port().user_polls();
  if (u != seen_user || (calls_ && calls_->load(std::memory_order_relaxed) != 0)) {
    seen_user = u;
    std::this_thread::sleep_for(nap);
    return;
  }
  if (dev_.port().agent_pass()) {
    busy_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  sleeps_.fetch_add(1, std::memory_order_relaxed);
  // Hooks may have a next step no packet announces (a queue waiting for
  // room in the channel): look again sooner while one has work announced
  // (100 wake-ups a second at most). An idle window's hook has none.
  const std::atomic<bool>* due = hooks_due_.load(std::memory_order_acquire);
  if (!due) {
    dev_.channel().wait(dev_.port().has_progress_hooks() ? kHookSleep : kIdleSleep);
  } else if (due->load(std::memory_order_acquire)) {
    dev_.channel().wait(kHookSleep);
  } else {
    // The long sleep ends when work is announced: its condition is looked
    // at after the sleep's announcement, under the doorbell, so a poke
    // between our look above and the sleep (which rang no sleeper) is seen
    // there. It stays an idle sleep, not a blocking call's (no barrier per
    // sleep, peers do not count us as waiting).
    auto announced = [due] { return due->load(std::memory_order_seq_cst); };
    WaitCondition until = WaitCondition::of(announced);
    until.idle = true;
    dev_.channel().wait_until(kIdleSleep, until);
  }
}

}  // namespace adi3
