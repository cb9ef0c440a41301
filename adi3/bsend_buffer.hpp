// The user-attached buffer of buffered mode (MPI_Buffer_attach): a first-fit
// allocator over the user's memory, one block per message in flight.
#pragma once
#include <cstddef>

namespace adi3 {

class BsendBuffer {
 public:
  // Bytes of the attached buffer each message costs beyond its data
  // (MPI_BSEND_OVERHEAD).
  static constexpr std::size_t kOverhead = 64;

  bool attached() const { return base_ != nullptr; }
  // False when the buffer is too small to hold even one block header.
  bool attach(void* buf, std::size_t bytes);
  void detach(void** buf, std::size_t* bytes);
  // A block for `bytes` of packed data, or nullptr when nothing fits.
  void* allocate(std::size_t bytes);
  void release(void* block);
  bool in_use() const { return live_ > 0; }
  std::size_t largest_free() const;

 private:
  struct Block {
    std::size_t size;  // bytes after this header
    Block* next;       // address order
    Block* prev;
    bool free;
  };
  static constexpr std::size_t kAlign = 16;
  static constexpr std::size_t kHeader = (sizeof(Block) + kAlign - 1) / kAlign * kAlign;
  static_assert(kHeader <= kOverhead);

  void* user_ = nullptr;
  std::size_t user_bytes_ = 0;
  Block* base_ = nullptr;
  std::size_t live_ = 0;
};

}  // namespace adi3
