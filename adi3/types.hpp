// Basic vocabulary of the ADI: wildcards, status, send modes, communicators.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace adi3 {

inline constexpr int kAnySource = -2;
inline constexpr int kProcNull = -1;
inline constexpr int kAnyTag = -1;
inline constexpr int kTagUb = (1 << 30) - 1;  // largest tag a user may use
inline constexpr int kUndefined = -32766;     // MPI_UNDEFINED

enum class SendMode : uint8_t { Standard, Synchronous, Ready, Buffered };

// The outcome of a receive (or any completed request).
struct Status {
  int source = kAnySource;
  int tag = kAnyTag;
  int error = 0;
  bool cancelled = false;
  std::size_t bytes = 0;  // bytes received
};

struct BsendChain;  // adi3/bsend_buffer.hpp

// What the core needs of a communicator: its context id, the caller's rank
// and how comm ranks map to channel ranks. The MPI layer owns the rest.
struct Comm {
  uint32_t context = 0;
  int rank = 0;
  int size = 0;
  std::vector<int> peers;  // comm rank -> channel rank; empty means identity
  // Buffered mode's buffers before the process one (MPI-4.1); null: none.
  std::shared_ptr<const BsendChain> buffers;

  int to_peer(int comm_rank) const { return peers.empty() ? comm_rank : peers[static_cast<std::size_t>(comm_rank)]; }
};

}  // namespace adi3
