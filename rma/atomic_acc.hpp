// Accumulates that stay atomic per element whoever applies them: an origin
// writing straight into a window in shared memory, an origin reading,
// combining and writing back by cross-memory attach, the target applying a
// packet of the emulation (its own thread or its agent), or the target
// accumulating into itself. Every one of them, on every CPU window, takes
// the accumulate locks (stripes) of the bytes it combines in the target's
// control block (rma/native_sync.hpp: 64-byte blocks of the window, block
// number modulo kStripes), and nobody combines without them, so the scheme
// is one rule:
//   - a run of elements (a whole contiguous accumulate, a run of a derived
//     type, a chunk of a cross-memory-attach accumulate) takes the stripes
//     of its bytes ONCE, in increasing index order (all of them past 32
//     KiB), and applies the op's vectorised kernel (coll::apply) to the
//     whole run; a 4 MiB MPI_SUM of doubles is one kernel call;
//   - one element (fetch_and_op, compare_and_swap, an 8-byte accumulate on
//     the fast path, rma/native_fast.hpp) takes the stripe of its first
//     byte, which any run containing it holds too, and combines with
//     plain loads and stores: one compare-and-swap on the stripe word, as
//     cheap as the hardware atomic it replaces;
//   - an origin holding the exclusive lock of the target skips the stripes
//     (nobody else may touch the memory).
// A locker of several stripes takes them in increasing order and a locker
// of one holds no other, so lockers never deadlock. No element is ever
// updated by a bare hardware atomic: that would not exclude a run applied
// with plain stores.
//
// A window whose memory a NIC updates (verbs: RDMA atomics, not coherent
// with the CPU's) takes another rule instead: every element is updated
// through the NIC, whoever applies it, the target's own emulation included
// (AccTarget::nic, a loopback queue pair there). An 8-byte element on its
// natural alignment takes the NIC's fetch-add or a compare-and-swap loop;
// any other element (1, 2, 4, 16 bytes, unaligned, padded pairs) is read,
// combined and written back under a NIC lock word of the target's control
// block (nic_combine: the element's stripe, kNicGranule bytes of window per
// stripe). Only the element's own bytes are written back, so puts and local
// stores to its neighbours are never undone (a compare-and-swap on the
// containing 8-byte word would write them back).
#pragma once
#include <cstddef>
#include <cstdint>

#include "coll/op.hpp"
#include "segment/datatype.hpp"

namespace adi3::rma {

struct Control;

// Access to one window's memory through a NIC (the target's own memory
// through a loopback queue pair, or a peer's region): `at` is an address
// in the target's window memory (the target's address space); each call
// completes before it returns. false: the device failed (errno).
class NicAtomics {
 public:
  virtual ~NicAtomics() = default;
  // 8-byte atomics at an 8-byte aligned `at`.
  virtual bool fetch_add(uint64_t at, uint64_t add, uint64_t* old) = 0;
  virtual bool compare_swap(uint64_t at, uint64_t compare, uint64_t swap, uint64_t* old) = 0;
  // RDMA read and write of n bytes at `at`.
  virtual bool read(uint64_t at, void* dst, std::size_t n) = 0;
  virtual bool write(uint64_t at, const void* src, std::size_t n) = 0;
  // Writes the packed bytes at src to n runs (address, length), in one
  // chain where the channel can.
  struct Run {
    uint64_t at;
    std::size_t len;
  };
  virtual bool write_runs(const Run* runs, std::size_t n, const void* src) = 0;
  // Compare-and-swap on lock word s (< kNicStripes) of the target's control block.
  virtual bool lock_word(std::size_t s, uint64_t compare, uint64_t swap, uint64_t* old) = 0;
  // Whether the holder a lock word names (its value: holder's rank + 1)
  // still lives; a wait for that word ends when it does not.
  virtual bool holder_alive(uint64_t /*word*/) { return true; }
  uint64_t base = 0;  // the target's window base address: stripes count from it
  uint64_t me = 1;    // what this rank writes into a stripe lock word it takes (its rank + 1)
  // Set when a stripe lock wait ended because its holder died (errno
  // EOWNERDEAD): the word's value, and the stripe.
  uint64_t dead_holder = 0;
  std::size_t dead_stripe = 0;
};

// NIC stripe locks: 8-byte words over the control block's stripe array
// (which a NIC window's CPU never uses); an element's lock is that of the
// granule its first byte falls in.
inline constexpr std::size_t kNicGranule = 512;
inline constexpr std::size_t kNicStripes = 256;

struct AccTarget {
  Control* ctl = nullptr;  // the target's control block (stripe locks)
  char* data = nullptr;    // the start of the target's window memory (stripe offsets count from it)
  // The caller excludes every other accumulate on the memory already (it
  // holds the target's exclusive lock, or the stripes of the whole range):
  // plain kernels, no stripes.
  bool exclusive = false;
  NicAtomics* nic = nullptr;  // set: every element goes through the NIC (nic_combine)
};

// One 8-byte element through the NIC: old = [at]; [at] = in op old
// (fetch-add for integer sums and NoOp, else a compare-and-swap loop
// around the op's kernel, starting from a fetch-add of 0: the CPU never
// reads the element). false: the device failed.
bool nic_element(NicAtomics& nic, uint64_t at, const void* in, coll::OpKind op, Builtin e, void* old);

// combine_atomic's work on a NIC window: addr is the target address of the
// data (count elements of t, stream bytes [first, first + n), whole
// elements), never dereferenced here. Every element as the header says.
bool nic_combine(NicAtomics& nic, uint64_t addr, uint64_t count, const Datatype* t, std::size_t first, std::size_t n,
                 const void* in, coll::OpKind op, Builtin e, void* old_out);

// Compare-and-swap of one element of es bytes at target address at (the
// same paths as nic_combine): old = [at]; if old == compare, [at] = swap.
bool nic_cas(NicAtomics& nic, uint64_t at, std::size_t es, const void* swap, const void* compare, void* old);

// inout = in op inout for stream bytes [first, first + n) of count elements
// of t at addr (inside the window at tgt.data); in is n packed bytes of
// element type e (aligned to 16). With old_out, the values before the op
// are packed there first, under the same exclusion.
// false: the NIC failed on an element (errno); the others were applied.
bool combine_atomic(const AccTarget& tgt, char* addr, uint64_t count, const Datatype* t, std::size_t first,
                    std::size_t n, const void* in, coll::OpKind op, Builtin e, void* old_out);

}  // namespace adi3::rma
