// Per-device state of the layers above the core (greq/: its progress hook;
// rma/: its window table and packet kind; coll/: its shared-memory
// segments), each made on first use and destroyed with the device.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace adi3 {

class LayerStates {
 public:
  // Destroyed in reverse: Coll, Rma, then Greq (it unlinks its requests).
  enum class Layer : uint8_t { Greq, Rma, Coll, Count };

  // The state of which, made by make() (a std::shared_ptr) on first use.
  template <class Make>
  void* get(Layer which, Make&& make) {
    const auto i = static_cast<std::size_t>(which);
    // Once made, one load (collectives look theirs up on every call).
    if (void* made = made_[i].load(std::memory_order_acquire)) return made;
    std::call_once(once_[i], [&] {
      state_[i] = make();
      made_[i].store(state_[i].get(), std::memory_order_release);
    });
    return state_[i].get();
  }

 private:
  static constexpr std::size_t kCount = static_cast<std::size_t>(Layer::Count);
  std::once_flag once_[kCount];
  std::shared_ptr<void> state_[kCount];
  std::atomic<void*> made_[kCount] = {};
};

}  // namespace adi3
