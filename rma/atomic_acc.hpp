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
#pragma once
#include <cstddef>
#include <cstdint>

#include "coll/op.hpp"
#include "segment/datatype.hpp"

namespace adi3::rma {

struct Control;

struct AccTarget {
  Control* ctl = nullptr;  // the target's control block (stripe locks)
  char* data = nullptr;    // the start of the target's window memory (stripe offsets count from it)
  bool exclusive = false;  // the caller holds the exclusive lock: plain kernels suffice
};

// inout = in op inout for stream bytes [first, first + n) of count elements
// of t at addr (inside the window at tgt.data); in is n packed bytes of
// element type e (aligned to 16). With old_out, the values before the op
// are packed there first, element by element, under the same atomicity.
void combine_atomic(const AccTarget& tgt, char* addr, uint64_t count, const Datatype* t, std::size_t first,
                    std::size_t n, const void* in, coll::OpKind op, Builtin e, void* old_out);

}  // namespace adi3::rma
