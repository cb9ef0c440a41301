// Handles: the int encoding of mpi.h and the tables that map user-created
// handles to objects. Lookups take no lock (chunks never move); adding and
// removing take a short one when other threads may call in
// (MPI_THREAD_MULTIPLE), so any thread may create objects; single-threaded
// they take none (an MPI_Isend/MPI_Wait pair adds and removes a request).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace adi3::mpi {

enum class Kind : int {
  Comm = 1,
  Group = 2,
  Datatype = 3,
  File = 4,
  Errhandler = 5,
  Op = 6,
  Info = 7,
  Win = 8,
  Keyval = 9,
  Request = 11,
  Message = 12,
};

// Bits 30-31 of a handle. Pool: an MPI_Request, which names the device's
// request pool slot itself (mpi/api.hpp, request_handle): no table between.
enum class HandleClass : int { Null = 0, Builtin = 1, User = 2, Pool = 3 };

constexpr int make_handle(HandleClass c, Kind k, int index) {
  return static_cast<int>((static_cast<unsigned>(c) << 30) | (static_cast<unsigned>(k) << 26) |
                          static_cast<unsigned>(index));
}
constexpr HandleClass handle_class(int h) { return static_cast<HandleClass>(static_cast<unsigned>(h) >> 30); }
constexpr Kind handle_kind(int h) { return static_cast<Kind>((static_cast<unsigned>(h) >> 26) & 0xf); }
constexpr int handle_index(int h) { return h & 0x3ffffff; }
constexpr bool is_kind(int h, Kind k, HandleClass c) { return handle_kind(h) == k && handle_class(h) == c; }

// Slots of T (default-constructible, cheap to move), indexed by the low
// bits of a user handle. Freed slots are reused, last freed first.
template <class T>
class HandleTable {
 public:
  HandleTable() = default;
  ~HandleTable() {
    for (auto& c : chunks_) delete c.load(std::memory_order_relaxed);
  }
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // Whether add and remove may run in several threads at once. Set before
  // any other thread can reach the table (MPI_Init_thread).
  void set_threaded(bool on) { threaded_ = on; }

  // Stores v; returns its index, or -1 when the table is full. Out of
  // memory for a new chunk throws std::bad_alloc, the table unchanged.
  int add(T v) {
    Guard g(lock_, threaded_);
    int i = free_head_;
    if (i >= 0) {
      free_head_ = slot(i).next_free;
    } else {
      if (used_ == kChunkSize * kChunks) return -1;
      auto& c = chunks_[static_cast<std::size_t>(used_ / kChunkSize)];
      if (!c.load(std::memory_order_relaxed)) c.store(new Chunk(), std::memory_order_release);
      i = used_++;
    }
    Slot& s = slot(i);
    s.value = std::move(v);
    s.live.store(true, std::memory_order_release);
    ++live_;
    return i;
  }

  // Memory add takes when it needs a new chunk.
  static std::size_t chunk_bytes() { return sizeof(Chunk); }

  // The object at index, or nullptr if index is not a live slot.
  T* get(int index) {
    if (index < 0 || index >= kChunkSize * kChunks) return nullptr;
    Chunk* c = chunks_[static_cast<std::size_t>(index / kChunkSize)].load(std::memory_order_acquire);
    if (!c) return nullptr;
    Slot& s = (*c)[static_cast<std::size_t>(index % kChunkSize)];
    return s.live.load(std::memory_order_acquire) ? &s.value : nullptr;
  }

  // Frees a live slot and returns what it held.
  T remove(int index) {
    Guard g(lock_, threaded_);
    Slot& s = slot(index);
    s.live.store(false, std::memory_order_release);
    T v = std::move(s.value);
    s.value = T{};
    s.next_free = free_head_;
    free_head_ = index;
    --live_;
    return v;
  }

  int live() const { return live_; }

  // Calls f(index, value) for every live slot (not concurrently with add).
  template <class F>
  void for_each(F&& f) {
    for (int i = 0; i < used_; ++i) {
      if (T* v = get(i)) f(i, *v);
    }
  }

 private:
  class Guard {
   public:
    Guard(std::mutex& m, bool on) : m_(on ? &m : nullptr) {
      if (m_) m_->lock();
    }
    ~Guard() {
      if (m_) m_->unlock();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    std::mutex* m_;
  };

  static constexpr int kChunkSize = 1024;
  static constexpr int kChunks = 16384;
  struct Slot {
    std::atomic<bool> live{false};
    int next_free = -1;
    T value{};
  };
  using Chunk = std::array<Slot, kChunkSize>;
  Slot& slot(int i) {
    return (*chunks_[static_cast<std::size_t>(i / kChunkSize)].load(
        std::memory_order_relaxed))[static_cast<std::size_t>(i % kChunkSize)];
  }

  std::mutex lock_;
  bool threaded_ = true;
  std::array<std::atomic<Chunk*>, kChunks> chunks_{};
  int used_ = 0;
  int free_head_ = -1;
  int live_ = 0;
};

}  // namespace adi3::mpi
