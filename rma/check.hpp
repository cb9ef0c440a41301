// What the origin checks before an operation leaves: ranks, counts, types,
// the op, and the byte range against the target's window (size and
// displacement unit from the creation exchange). Each failure is an error
// code whose message names the operation, the target and the bad value.
#pragma once
#include <cstddef>
#include <cstdint>

#include "coll/op.hpp"
#include "rma/protocol.hpp"

namespace adi3 {
class Datatype;
struct Request;
}  // namespace adi3

namespace adi3::rma {

class WindowState;

struct OpArgs {
  Msg kind = Msg::Put;
  const char* name = "Put";
  const void* origin = nullptr;
  int64_t ocount = 0;
  const Datatype* otype = nullptr;
  void* result = nullptr;
  int64_t rcount = 0;
  const Datatype* rtype = nullptr;
  int target = 0;
  std::ptrdiff_t disp = 0;
  int64_t tcount = 0;
  const Datatype* ttype = nullptr;
  const coll::Op* op = nullptr;
  const void* compare = nullptr;
  Request** req = nullptr;
  // route_op's verdict on a target that polls (polls_now), when the caller
  // already asked: 1 polls, 0 does not, -1 not asked.
  int8_t polls = -1;
};

// The checked facts an accepted operation travels with.
struct Checked {
  uint64_t disp_bytes = 0;        // byte displacement at the target (dynamic: address)
  std::size_t bytes = 0;          // bytes of target data
  Builtin elem = Builtin::kByte;  // element type (accumulates), or the predefined target type
  uint64_t count = 0;             // elements of the target type as sent
  bool derived = false;           // target type travels as a description
};

// Returns 0 or an error code.
int check_op(WindowState& w, const OpArgs& a, Checked* out);

}  // namespace adi3::rma
