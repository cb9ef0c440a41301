// Schedule: a collective written down as rounds of sends, receives and
// local steps (copies, reductions). A round starts when every operation of
// the previous one has completed; inside a round the local steps run first,
// in order, then the sends and receives are posted. Blocking collectives
// run a schedule to the end; nonblocking ones hand it to the progress
// engine (see nbc.hpp). Every algorithm in coll/ is a schedule builder.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "adi3/types.hpp"
#include "segment/datatype.hpp"

namespace adi3 {
class Device;
struct Request;
}  // namespace adi3

namespace adi3::coll {

class Schedule {
 public:
  Schedule(Device& dev, const Comm& comm, int tag);
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Device& device() const { return dev_; }
  const Comm& comm() const { return comms_[cur_]; }
  int rank() const { return comm().rank; }
  int size() const { return comm().size; }

  // ---- building ----
  // tag < 0: the schedule's tag. Another tag lets one schedule keep apart
  // several messages between the same two ranks (neighbourhood collectives
  // pair them by direction, not by posting order).
  void send(const void* buf, std::size_t count, const Datatype* type, int peer, int tag = -1);
  void recv(void* buf, std::size_t count, const Datatype* type, int peer, int tag = -1);
  void send_bytes(const void* buf, std::size_t bytes, int peer) { send(buf, bytes, Datatype::byte(), peer); }
  void recv_bytes(void* buf, std::size_t bytes, int peer) { recv(buf, bytes, Datatype::byte(), peer); }
  void local(std::function<void()> fn);
  // Later steps (and rank()/size()) use comm: intercommunicator collectives
  // mix the remote-group Comm with the local group's. Ends the round, so a
  // builder that follows starts on completed work.
  void use(const Comm& comm);
  // Ends the current round (no-op if it is empty).
  void fence();
  // Schedule-owned scratch memory (16-byte aligned), freed with it.
  std::byte* scratch(std::size_t bytes);
  // ERR_NO_MEM naming what a build that threw std::bad_alloc was allocating.
  int out_of_memory() const;
  // Keeps a user type alive as long as the schedule (nonblocking calls
  // may outlive the caller's handle).
  void keep(const Datatype* type);
  // Moves a value into the schedule so local steps can point at it.
  template <class T>
  T& own(T value) {
    auto p = std::make_shared<T>(std::move(value));
    owned_.push_back(p);
    return *p;
  }
  bool empty() const { return steps_.empty(); }

  // ---- running ----
  // Starts rounds as earlier ones complete; true once every step is done.
  // Never blocks.
  bool advance();
  // The first error any step reported (0 if none).
  int error() const { return error_; }
  // Runs to the end under the device's progress engine.
  int run();
  // Every request of the current round has completed (advance() moves on).
  bool landed() const;
  // Makes a finished schedule runnable again from its first round
  // (persistent collectives). Only between runs: nothing may be in flight.
  // Builders therefore touch user data only in steps (local() for copies
  // and packing), never while building, so each run reads that run's data.
  void restart();

 private:
  enum class Kind : std::uint8_t { Send, Recv, Local, Fence };
  struct Step {
    Kind kind;
    int peer;
    void* buf;
    std::size_t count;
    const Datatype* type;
    std::size_t fn;   // Local: index into fns_
    int tag;          // Send/Recv
    std::uint8_t ci;  // Send/Recv: index into comms_
  };
  void start_round();
  bool reap();  // true when the round's requests are all complete

  Device& dev_;
  std::deque<Comm> comms_;  // stable addresses; steps name them by index
  std::uint8_t cur_ = 0;
  int tag_;
  std::size_t wanted_ = 0;  // the scratch block being allocated
  std::vector<Step> steps_;
  std::vector<std::function<void()>> fns_;
  struct Scratch {
    void* p;
    bool pooled;  // from scratch_alloc, else operator new[]
  };
  std::vector<Scratch> scratch_;
  std::vector<const Datatype*> kept_;
  std::vector<std::shared_ptr<void>> owned_;
  std::vector<Request*> inflight_;
  std::size_t next_ = 0;
  int error_ = 0;
};

}  // namespace adi3::coll
