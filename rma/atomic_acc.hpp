// Accumulates that stay atomic per element whoever applies them: an origin
// writing straight into a window in shared memory, the target applying a
// packet of the emulation, or the target accumulating into itself. All of
// them call combine_atomic on a native window, so the choice per element
// is the same everywhere: a 4- or 8-byte element on its natural alignment
// takes hardware atomics (fetch-add, exchange, or a compare-and-swap loop
// around the op's kernel); any other element (1- and 2-byte types, long
// double, complex double, padded pairs) takes the accumulate lock of its
// stripe in the window's control block. Both are atomic with respect to each
// other because an element's path depends only on its type and address.
//
// A window whose memory a NIC updates (verbs: RDMA atomics, not coherent
// with the CPU's) adds one rule in front: every 8-byte element on its
// natural alignment goes through the NIC (AccTarget::nic), whoever applies
// it, the target's own emulation included, and no 8-byte aligned element
// ever takes the CPU's atomics; the other elements stay as above.
#pragma once
#include <cstddef>
#include <cstdint>

#include "coll/op.hpp"
#include "segment/datatype.hpp"

namespace adi3::rma {

struct Control;

// 8-byte atomics through a NIC, at `at` (an address or an offset, as the
// implementation defines: the target's own memory through a loopback queue
// pair, or a peer's region); each call completes before it returns. false:
// the device failed (errno).
class NicAtomics {
 public:
  virtual ~NicAtomics() = default;
  virtual bool fetch_add(uint64_t at, uint64_t add, uint64_t* old) = 0;
  virtual bool compare_swap(uint64_t at, uint64_t compare, uint64_t swap, uint64_t* old) = 0;
};

struct AccTarget {
  Control* ctl = nullptr;     // the target's control block (stripe locks)
  char* data = nullptr;       // the start of the target's window memory (stripe offsets count from it)
  bool exclusive = false;     // the caller holds the exclusive lock: plain kernels suffice
  NicAtomics* nic = nullptr;  // set: 8-byte aligned elements go through the NIC only
  // Some rank reaches this window's memory by cross-memory attach (it reads,
  // combines and writes back under the stripes): every element takes its
  // stripe, hardware atomics alone would not exclude that.
  bool locks_only = false;
};

// One 8-byte element through the NIC: old = [at]; [at] = in op old
// (fetch-add for integer sums and NoOp, else a compare-and-swap loop
// around the op's kernel, starting from a fetch-add of 0: the CPU never
// reads the element). false: the device failed.
bool nic_element(NicAtomics& nic, uint64_t at, const void* in, coll::OpKind op, Builtin e, void* old);

// inout = in op inout for stream bytes [first, first + n) of count elements
// of t at addr (inside the window at tgt.data); in is n packed bytes of
// element type e (aligned to 16). With old_out, the values before the op
// are packed there first, element by element, under the same atomicity.
// false: the NIC failed on an element (errno); the others were applied.
bool combine_atomic(const AccTarget& tgt, char* addr, uint64_t count, const Datatype* t, std::size_t first,
                    std::size_t n, const void* in, coll::OpKind op, Builtin e, void* old_out);

}  // namespace adi3::rma
