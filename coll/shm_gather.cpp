// Allgather and alltoall through the communicator's shared segment
// (shm_coll.hpp, shm_node.hpp): each rank copies what it sends into the
// segment once and every reader copies it out once, all ranks at the same
// time, with one flag per stage instead of p - 1 rounds of messages.
// Long blocks skip the segment: each rank exposes its send buffer and the
// readers copy out of it with cross-memory attach (one copy, not two).
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "coll/copy.hpp"
#include "coll/shm_coll.hpp"
#include "coll/shm_direct.hpp"
#include "coll/shm_node.hpp"
#include "segment/segment.hpp"

namespace adi3::coll::detail {
namespace {

// Byte ranges [lo, hi) of the packed stream of a typed buffer, copied to or
// from the segment: memcpy when the type is contiguous, else a Segment
// made on first use (its stream resumes cheaply when ranges follow on).
class Typed {
 public:
  Typed(const void* buf, std::size_t count, const Datatype* type)
      : buf_(const_cast<void*>(buf)),
        count_(count),
        type_(type),
        bytes_(count * type->size()),
        contig_(type->is_contiguous()) {}
  std::size_t bytes() const { return bytes_; }
  // Where the packed stream starts in memory, when the type is contiguous.
  std::byte* contiguous() const { return contig_ ? static_cast<std::byte*>(buf_) + type_->true_lb() : nullptr; }

  // node: `to` is in its slot or (area) its large area, read by the
  // others (ShmNode::store picks the stores); null: private memory.
  void out(std::size_t lo, std::size_t hi, std::byte* to, ShmNode* node = nullptr, bool area = false) {
    hi = std::min(hi, bytes_);
    if (lo >= hi) return;
    if (contig_) {
      const auto* from = static_cast<const std::byte*>(buf_) + type_->true_lb() + lo;
      if (node) {
        node->store(to, from, hi - lo, area);
      } else {
        std::memcpy(to, from, hi - lo);
      }
    } else {
      segment().pack(lo, hi, to);
    }
  }
  void in(std::size_t lo, std::size_t hi, const std::byte* from) {
    hi = std::min(hi, bytes_);
    if (lo >= hi) return;
    if (contig_) {
      std::memcpy(static_cast<std::byte*>(buf_) + type_->true_lb() + lo, from, hi - lo);
    } else {
      segment().unpack(lo, hi, from);
    }
  }

 private:
  Segment& segment() {
    if (!seg_) seg_.emplace(buf_, count_, type_);
    return *seg_;
  }
  void* buf_;
  std::size_t count_;
  const Datatype* type_;
  std::size_t bytes_;
  bool contig_;
  std::optional<Segment> seg_;  // not made for contiguous types (a Segment costs more than a small copy)
};

// An allgather round: a quarter of the area. Each rank reads p - 1 rounds
// of the others per round; whole areas (1 MiB) ran 4-10% slower at 4 and 8
// ranks than quarter ones (the rounds read stay in the reader's L2), while
// alltoall and the reductions gain from whole areas (fewer stages).
constexpr std::size_t kShmGatherRound = kShmChunk / 4;

// The node an allgather or alltoall runs on, when its arguments are for
// this path (the checks both share: the chosen algorithm is the default,
// the buffers and types are usable, a block has bytes); else nullptr, with
// *taken telling whether a failed setup ended the call (*err).
ShmNode* gather_node(Device& dev, bool auto_algo, const void* sbuf, const Datatype* stype, const void* rbuf,
                     std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err,
                     bool* taken) {
  *taken = false;
  if (!auto_algo || !rbuf || in_place(rbuf) || !rtype || !rtype->is_committed()) return nullptr;
  if (rcount == 0 || rtype->size() == 0) return nullptr;
  if (!in_place(sbuf) && (!sbuf || !stype || !stype->is_committed())) return nullptr;
  return ShmNode::for_call(dev, comm, t.shm, err, taken);
}

// A send of more bytes than the matching receive takes: what a message
// would report.
int truncated(Device& dev, const char* call, std::size_t sent, std::size_t room) {
  return dev.errors().raise(ErrorClass::Truncate, "%s: a rank sends %zu bytes per block, the receive holds %zu", call,
                            sent, room);
}

}  // namespace

bool shm_allgather(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                   std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err) {
  bool taken = false;
  ShmNode* n =
      gather_node(dev, t.allgather == AllgatherAlgo::Auto, sbuf, stype, rbuf, rcount, rtype, comm, t, err, &taken);
  if (!n) return taken;
  const bool inplace = in_place(sbuf);
  const int me = n->rank(), p = n->size();
  const std::ptrdiff_t stride = static_cast<std::ptrdiff_t>(rcount) * rtype->extent();
  auto* base = static_cast<std::byte*>(rbuf);
  auto block = [&](int j) { return Typed(base + j * stride, rcount, rtype); };
  Typed mine_in = inplace ? block(me) : Typed(sbuf, scount, stype);
  const std::size_t bytes = rcount * rtype->size();  // every rank's block: the same on all ranks
  auto local = [&] {
    if (!inplace) copy(sbuf, scount, stype, base + me * stride, rcount, rtype);
  };
  if (direct_fits(*n, t.shm_direct_min, bytes)) {
    Offer o;
    o.sent = mine_in.bytes();
    o.len = o.sent;
    o.base = mine_in.contiguous();
    if (!o.base) {
      o.packed.resize(o.sent);
      mine_in.out(0, o.sent, o.packed.data());
      o.base = o.packed.data();
    }
    if (direct(dev, *n, o, bytes, block, local, Rate{&n->direct_verdict, t.shm_direct_mbps}, err)) {
      if (!*err && o.sent > bytes) *err = truncated(dev, "MPI_Allgather", o.sent, bytes);
      return true;
    }
  }
  local();
  // Up to a slot: one stage. Longer: rounds of kShmGatherRound bytes, two
  // stages each (written; read, so the areas may be rewritten).
  const bool small = bytes <= n->slot_limit();
  const std::size_t round = small ? bytes : kShmGatherRound;
  const std::size_t rounds = (bytes + round - 1) / round;
  uint64_t s = small ? n->begin(1, bytes) : n->begin(2 * rounds);
  for (std::size_t at = 0; at < bytes; at += round, s += 2) {
    const std::size_t end = std::min(bytes, at + round);
    std::byte* to = nullptr;
    if ((*err = small ? n->claim_slot(&to) : n->claim_area(&to))) return true;
    // A shorter send than the receive (erroneous) arrives zero-padded.
    if (mine_in.bytes() < end) std::memset(to, 0, end - at);
    mine_in.out(at, end, to, n, !small);
    if (small) {
      if ((*err = n->publish_wait_slots(s))) return true;
    } else {
      if ((*err = n->post_wait_all(s))) return true;
    }
    for (int j = 0; j < p; ++j) {
      if (j == me) continue;
      Typed b = block(j);
      b.in(at, end, small ? n->slot(j) : n->area(j));
    }
    if (!small) {
      n->post(s + 1);
      n->areas_free_at(s + 1);
    }
  }
  if (mine_in.bytes() > bytes) *err = truncated(dev, "MPI_Allgather", mine_in.bytes(), bytes);
  return true;
}

bool shm_alltoall(Device& dev, const void* sbuf, std::size_t scount, const Datatype* stype, void* rbuf,
                  std::size_t rcount, const Datatype* rtype, const Comm& comm, const Tuning& t, int* err) {
  bool taken = false;
  ShmNode* n =
      gather_node(dev, t.alltoall == AlltoallAlgo::Auto, sbuf, stype, rbuf, rcount, rtype, comm, t, err, &taken);
  if (!n) return taken;
  const bool inplace = in_place(sbuf);
  const int me = n->rank(), p = n->size();
  const auto np = static_cast<std::size_t>(p);
  const std::ptrdiff_t rstride = static_cast<std::ptrdiff_t>(rcount) * rtype->extent();
  auto* rbase = static_cast<std::byte*>(rbuf);
  // In place: the blocks are sent from the receive buffer, each piece
  // copied out before any piece lands on it (a round copies out all of
  // its range before it reads the others').
  const void* sb = inplace ? rbuf : sbuf;
  const std::size_t sc = inplace ? rcount : scount;
  const Datatype* st = inplace ? rtype : stype;
  const std::ptrdiff_t sstride = static_cast<std::ptrdiff_t>(sc) * st->extent();
  auto send_block = [&](int j) { return Typed(static_cast<const std::byte*>(sb) + j * sstride, sc, st); };
  auto recv_block = [&](int j) { return Typed(rbase + j * rstride, rcount, rtype); };
  const std::size_t bytes = rcount * rtype->size();  // every block, on every rank
  const std::size_t sent = sc * st->size();
  auto local = [&] {
    if (!inplace) copy(static_cast<const std::byte*>(sb) + me * sstride, sc, st, rbase + me * rstride, rcount, rtype);
  };
  // Direct reads need the send buffer intact while others read it: not in place.
  if (!inplace && direct_fits(*n, t.shm_direct_min, bytes, t.shm_direct_shared_min, t.shm_direct_shared_crowding)) {
    Offer o;
    o.sent = sent;
    if (st->is_contiguous() && sstride >= static_cast<std::ptrdiff_t>(sent)) {
      o.base = static_cast<const std::byte*>(sb) + st->true_lb();
      o.stride = static_cast<std::size_t>(sstride);
      o.len = (np - 1) * o.stride + sent;
    } else {
      o.stride = sent;
      o.len = np * sent;
      o.packed.resize(o.len);
      for (int j = 0; j < p; ++j) {
        if (j != me) send_block(j).out(0, sent, o.packed.data() + static_cast<std::size_t>(j) * sent);
      }
      o.base = o.packed.data();
    }
    // Where ranks outnumber the cores, a read's time is mostly the
    // scheduler's (4 and 8 ranks on 2 cores: 4-10 GB/s either way, and
    // direct reads won with buffers reused, or rewritten from 64 KiB).
    const std::size_t least = n->own_cores() ? t.shm_direct_mbps : 0;
    if (direct(dev, *n, o, bytes, recv_block, local, Rate{&n->direct_verdict, least}, err)) {
      if (!*err && sent > bytes) *err = truncated(dev, "MPI_Alltoall", sent, bytes);
      return true;
    }
  }
  local();
  // A round moves `piece` bytes of every block: all of them when the p - 1
  // blocks for the others fit a slot, else a share of the area each. A
  // sender's own block has no place: the one for rank j is at place(j).
  // 2 ranks, 4 KiB blocks: one slot stage, not an area round's two stages
  // and streaming stores.
  const bool small = bytes * (np - 1) <= n->slot_limit();
  const std::size_t piece = small ? bytes : kShmChunk / np;
  auto place = [](int j, int sender) { return static_cast<std::size_t>(j < sender ? j : j - 1); };
  const std::size_t rounds = (bytes + piece - 1) / piece;
  uint64_t s = small ? n->begin(1, bytes * (np - 1)) : n->begin(2 * rounds);
  for (std::size_t at = 0; at < bytes; at += piece, s += 2) {
    const std::size_t end = std::min(bytes, at + piece);
    std::byte* to = nullptr;
    if ((*err = small ? n->claim_slot(&to) : n->claim_area(&to))) return true;
    for (int j = 0; j < p; ++j) {
      if (j == me) continue;
      std::byte* at_j = to + place(j, me) * piece;
      if (sent < end) std::memset(at_j, 0, end - at);
      send_block(j).out(at, end, at_j, n, !small);
    }
    if (small) {
      if ((*err = n->publish_wait_slots(s))) return true;
    } else {
      if ((*err = n->post_wait_all(s))) return true;
    }
    for (int j = 0; j < p; ++j) {
      if (j == me) continue;
      const std::byte* from = (small ? n->slot(j) : n->area(j)) + place(me, j) * piece;
      recv_block(j).in(at, end, from);
    }
    if (!small) {
      n->post(s + 1);
      n->areas_free_at(s + 1);
    }
  }
  if (sent > bytes) *err = truncated(dev, "MPI_Alltoall", sent, bytes);
  return true;
}

}  // namespace adi3::coll::detail
