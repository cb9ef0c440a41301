// A buffer of buffered mode: the user's memory (MPI_Buffer_attach and the
// MPI-4.1 communicator and session forms) under a first-fit allocator, one
// block per message in flight, or automatic (MPI_BUFFER_AUTOMATIC: each
// message gets a block of its own from the heap). The Device's lock guards
// every call.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace adi3 {

class BsendBuffer {
 public:
  // Bytes of the attached buffer each message costs beyond its data
  // (MPI_BSEND_OVERHEAD).
  static constexpr std::size_t kOverhead = 64;

  bool attached() const { return state_ != State::Detached; }
  bool automatic() const { return state_ == State::Automatic; }
  // False when the buffer is too small to hold even one block header.
  bool attach(void* buf, std::size_t bytes);
  // Automatic: `tag` is what detach gives back as the address.
  void attach_automatic(void* tag);
  void detach(void** buf, std::size_t* bytes);
  // A block for `bytes` of packed data, or nullptr when nothing fits (or,
  // automatic, the heap is exhausted).
  void* allocate(std::size_t bytes);
  // Gives a block back to the buffer that allocated it.
  static void release(void* block);
  static BsendBuffer* owner_of(void* block);
  // Allocations so far: a block's ticket is this count when it was made.
  uint64_t tickets() const { return next_ticket_; }
  static uint64_t ticket_of(void* block);
  std::size_t live() const { return live_; }
  std::size_t largest_free() const;

 private:
  enum class State : uint8_t { Detached, User, Automatic };
  struct Block {
    std::size_t size;  // bytes after this header
    Block* next;       // address order (user memory only)
    Block* prev;
    BsendBuffer* owner;
    uint64_t ticket;
    bool free;
    bool heap;  // an automatic block: freed, not merged
  };
  static constexpr std::size_t kAlign = 16;
  static constexpr std::size_t kHeader = (sizeof(Block) + kAlign - 1) / kAlign * kAlign;
  static_assert(kHeader <= kOverhead);
  static Block* header(void* block) { return reinterpret_cast<Block*>(static_cast<char*>(block) - kHeader); }
  void give_back(Block* b);

  State state_ = State::Detached;
  void* user_ = nullptr;
  std::size_t user_bytes_ = 0;
  Block* base_ = nullptr;
  std::size_t live_ = 0;
  uint64_t next_ticket_ = 0;
};

// A communicator's buffers in MPI-4.1's lookup order: its own, then the one
// of the session it derives from (either may be absent or detached); the
// process buffer of the Device comes last. Set by the MPI layer.
struct BsendChain {
  std::shared_ptr<BsendBuffer> comm, session;
};

}  // namespace adi3
