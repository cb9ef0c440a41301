#include "coll/shm_coll.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "coll/copy.hpp"
#include "coll/shm_direct.hpp"
#include "coll/shm_node.hpp"
#include "coll/shm_reduction.hpp"
#include "segment/segment.hpp"

namespace adi3::coll::detail {
namespace {

// Reductions up to one slot: all inputs in the slots, the root(s) fold.
int small_reduction(ShmNode& n, const Reduction& red, const void* in, void* out, std::size_t count, int root) {
  const int me = n.rank(), p = n.size();
  const uint64_t s = n.begin(1, count * red.ext);
  std::byte* mine = nullptr;
  if (int e = n.claim_slot(&mine)) return e;
  std::memcpy(mine, in, count * red.ext);
  n.publish(s);
  if (root >= 0 && me != root) return 0;
  if (int e = n.wait_slots(s)) return e;
  fold(
      red, [&](int j) { return own_term(n, j, in, out, count * red.ext); }, p, out, count);
  return 0;
}

// Longer reductions: per round, copy in once, reduce my slice in place out
// of every area, copy the reduced slices out (root < 0: every rank).
// Slice j is reduced into the area of home(j), on top of the copy of that
// rank's input already there, so no extra copy starts the fold: for a
// commutative op the next rank's (any order is allowed, and each slice is
// reduced once, so every rank still gets the same bits); otherwise the
// last rank's, which the rank-order fold starts from (the last slice, the
// last rank's own, is folded into its area after a copy).
int home_of(int j, int p, bool commute) { return commute ? (j + 1) % p : p - 1; }

int long_reduction(ShmNode& n, const Reduction& red, const void* in, void* out, std::size_t count, int root) {
  const int me = n.rank(), p = n.size();
  const std::size_t ext = red.ext;
  const bool commute = red.op.commutative();
  const std::size_t per_round = kShmChunk / ext;
  const std::size_t rounds = (count + per_round - 1) / per_round;
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(out);
  uint64_t s = n.begin(3 * rounds);
  for (std::size_t at = 0; at < count; at += per_round, s += 3) {
    const std::size_t m = std::min(per_round, count - at);
    const std::size_t lo = cut(m, me, p), hi = cut(m, me + 1, p);
    const std::byte* round_in = src + at * ext;
    std::byte* mine = nullptr;
    if (int e = n.claim_area(&mine)) return e;
    // Everything but my slice, which only I read.
    to_area(mine, round_in, lo * ext);
    to_area(mine + hi * ext, round_in + hi * ext, (m - hi) * ext);
    if (int e = n.post_wait_all(s)) return e;
    if (hi > lo) {
      auto slice = [&](int j) -> const void* { return j == me ? round_in + lo * ext : n.area(j) + lo * ext; };
      const int h = home_of(me, p, commute);
      if (h == me) {
        fold(red, slice, p, mine + lo * ext, hi - lo);
      } else {
        // Rank order when h is the last rank; any order otherwise.
        std::byte* acc = n.area(h) + lo * ext;
        for (int j = p - 1; j >= 0; --j) {
          if (j != h) red.combine(slice(j), acc, hi - lo);
        }
      }
    }
    if (root >= 0 && me != root) {
      n.post(s + 2);  // nothing more to read here: also says s + 1
    } else {
      if (int e = n.post_wait_all(s + 1)) return e;
      for (int j = 0; j < p; ++j) {
        const std::size_t jl = cut(m, j, p), jh = cut(m, j + 1, p);
        std::memcpy(dst + (at + jl) * ext, n.area(home_of(j, p, commute)) + jl * ext, (jh - jl) * ext);
      }
      n.post(s + 2);
    }
    n.areas_free_at(s + 2);
  }
  return 0;
}

// Bcast beyond a slot: the root streams pieces through its area
// (ShmNode::claim_piece: kShmPieces in flight, across calls too); every
// rank posts stage s + k once it wrote or copied piece k.
int long_bcast(ShmNode& n, void* buf, std::size_t count, const Datatype* type, int root) {
  const std::size_t bytes = count * type->size();
  const std::size_t pieces = (bytes + kShmPiece - 1) / kShmPiece;
  const bool contig = type->is_contiguous();
  auto* data = static_cast<std::byte*>(buf) + type->true_lb();
  Segment seg;
  if (!contig) seg = Segment(buf, count, type);
  const uint64_t s = n.begin(pieces);
  const uint64_t g = n.take_pieces(pieces);
  const bool me_root = n.rank() == root;
  for (std::size_t k = 0; k < pieces; ++k) {
    const std::size_t at = k * kShmPiece, len = std::min(kShmPiece, bytes - at);
    std::byte* piece = nullptr;
    if (me_root) {
      if (int e = n.claim_piece(root, g + k, &piece)) return e;
      if (contig) {
        to_area(piece, data + at, len);
      } else {
        seg.pack(at, at + len, piece);
      }
    } else {
      if (int e = n.wait_one(root, s + k)) return e;
      piece = n.area(root) + ((g + k) % kShmPieces) * kShmPiece;
      if (contig) {
        std::memcpy(data + at, piece, len);
      } else {
        seg.unpack(at, at + len, piece);
      }
    }
    n.post(s + k);
    n.piece_read_at(g + k, s + k);
  }
  return 0;
}

// A reduce of 2 ranks, read directly (shm_direct.hpp): the root copies
// the other's input into its receive buffer with cross-memory attach (one
// copy; the long reduction moves every byte through the areas: a streaming
// copy in, a fold and a copy out) and folds its own input onto it. The
// fold is `in op out`: rank order with the root at rank 0, any order
// otherwise, so the caller allows it for commutative ops or root 0.
// Returns false, having moved nothing, when the ranks chose the segment.
// Not split as direct_bcast's copy is (the other rank writing the second
// half into the root's buffer with cross-memory attach while the root reads
// the first): the root's fold then pulls every line of that half from the
// other core. 2 ranks, 3 alternated launches, load 15: 64 / 256 KiB 6.3 /
// 21.7 -> 10.3 / 33.4 us per call.
// Where a direct read lands: straight in the buffer when it is contiguous
// (at), else in direct()'s bounce buffer, unpacked into (buf, count, type).
struct Landing {
  std::byte* at;
  void* buf = nullptr;
  std::size_t count = 0;
  const Datatype* type = nullptr;
  std::byte* contiguous() const { return at; }
  void in(std::size_t, std::size_t, const std::byte* from) { unpack(from, buf, count, type); }
};

bool direct_reduce(Device& dev, ShmNode& n, const Reduction& red, const void* in, void* out, std::size_t count,
                   int root, const Tuning& t, int* err) {
  const bool me_root = n.rank() == root;
  Offer o;
  o.base = static_cast<const std::byte*>(in);
  o.len = o.sent = count * red.ext;
  o.able = !me_root || in != out;  // in place, the read would land on the root's own input
  auto land = [&](int) { return Landing{static_cast<std::byte*>(out)}; };
  auto fold_mine = [&] {
    if (me_root) red.combine(in, out, count);
  };
  return direct(dev, n, o, o.len, land, fold_mine, Rate{&n.reduce_verdict, t.shm_direct_reduce_mbps}, err,
                me_root ? kReadAll : kReadNone);
}

// A bcast read directly (shm_direct.hpp), where every member has a core of
// its own: the root exposes its buffer (a packed copy when its type is not
// contiguous) and every other rank copies it out with cross-memory attach,
// one copy where the segment's pieces take two (a streaming copy into the
// root's area, a copy out of it); the root returns once all have read.
// 2 ranks, buffers reused, 64 / 256 KiB: 12.5 / 36.2 -> 4.9 / 14.3 us per
// call (Open MPI 5.1 / 14.3); a root that rewrites its buffer before each
// call reads slowly, and the verdict keeps the segment (docs/collectives.md).
// With 2 ranks, both contiguous, the receiver exposes its buffer too and
// the root writes the first half into it while the receiver reads the
// second: the root's core, idle otherwise, copies half.
bool direct_bcast(Device& dev, ShmNode& n, void* buf, std::size_t count, const Datatype* type, int root,
                  const Tuning& t, int* err) {
  const int p = n.size();
  const bool me_root = n.rank() == root;
  const std::size_t bytes = count * type->size();
  std::byte* data = type->is_contiguous() ? static_cast<std::byte*>(buf) + type->true_lb() : nullptr;
  Offer o;
  o.len = o.sent = bytes;
  o.base = p == 2 || me_root ? data : nullptr;
  if (me_root) {
    o.writes = data && p == 2;
    if (!data) {
      o.packed.resize(bytes);
      pack(buf, count, type, o.packed.data());
      o.base = o.packed.data();
    }
  }
  const Rate rate{&n.direct_verdict, t.shm_direct_mbps};
  uint64_t s = 0;
  Region* region = nullptr;
  bool fast = true;
  const Agreed a = agree_direct(n, o, rate, 2, &s, &region, &fast, err);
  if (a != Agreed::Direct) {
    if (region) n.onesided().release(region);
    return a == Agreed::Failed;
  }
  // The root writes [0, half) when it said so and the receiver exposed a
  // buffer of the same length (both read both entries: the same choice).
  const DirectEntry r = entry_of(n, root);
  std::size_t half = 0;
  if (p == 2) {
    const DirectEntry other = entry_of(n, 1 - root);
    if (r.writes == 1 && other.key_bytes > 0 && other.sent == r.sent) half = r.sent / 2 / 4096 * 4096;
  }
  if (me_root) {
    if (half) member_io(dev, n, 1 - root, 0, data, half, true, err);
  } else {
    std::vector<std::byte> bounce;  // for a non-contiguous type
    std::byte* at = data;
    if (!at) {
      bounce.resize(bytes);
      at = bounce.data();
    }
    const std::size_t take = std::min<uint64_t>(bytes, r.sent);
    bool first = !fast;
    if (read_member(dev, n, root, half, at + half, take - std::min(half, take), rate, &first, err)) {
      // A shorter send than the receive (erroneous) arrives zero-padded.
      if (take < bytes) std::memset(at + take, 0, bytes - take);
      if (!data) unpack(at, buf, count, type);
      if (r.sent > bytes) {
        *err = dev.errors().raise(ErrorClass::Truncate, "MPI_Bcast: the root sends %zu bytes, the receive holds %zu",
                                  static_cast<std::size_t>(r.sent), bytes);
      }
    }
  }
  // Even after a failed transfer: the others wait for this post. The
  // receiver's buffer, written by the root, is complete once it posted.
  n.post(s + 1);
  const int e = n.wait_all(s + 1);
  if (!*err) *err = e;
  if (region) n.onesided().release(region);
  return true;
}

// A reduce of 2 ranks up to an area, pipelined: the other rank streams its
// input into its area in kPipePieces pieces, posting each, and the root
// folds each piece as it lands, straight into its receive buffer (in runs
// that stay in its first-level cache: copy the piece's run, fold its own
// input onto it). The copy runs on the other core while the root folds the
// piece before, and the root touches every byte once (the direct read,
// then the fold, ran one after the other on the root's core). The fold is
// `in op out`: rank order with the root at rank 0, any order otherwise.
// 2 ranks, chrt -f 1, medians of 5 alternated with main: 16 KiB / 64 KiB /
// 256 KiB / 1 MiB 5.5 / 14.0 / 49.4 / 185 -> 4.5 / 12.4 / 39.1 / 153 us.
inline constexpr std::size_t kPipePieces = 16;      // at most
inline constexpr std::size_t kPipeMinPiece = 8192;  // 1 KiB pieces made 16 KiB 25% slower
inline constexpr std::size_t kPipeRun = 16 * 1024;

int pipelined_reduce(ShmNode& n, const Reduction& red, const void* in, void* out, std::size_t count, int root) {
  const std::size_t bytes = count * red.ext;
  const std::size_t pieces = std::clamp<std::size_t>(bytes / kPipeMinPiece, 1, kPipePieces);
  const std::size_t piece = (count + pieces - 1) / pieces * red.ext;
  const auto* src = static_cast<const std::byte*>(in);
  const uint64_t s = n.begin(pieces);
  if (n.rank() != root) {
    std::byte* mine = nullptr;
    if (int e = n.claim_area(&mine)) return e;
    for (std::size_t k = 0; k < pieces; ++k) {
      const std::size_t lo = std::min(bytes, k * piece), hi = std::min(bytes, lo + piece);
      to_area(mine + lo, src + lo, hi - lo);
      n.post(s + k);
    }
    n.areas_free_at(s + pieces - 1);
    return 0;
  }
  auto* dst = static_cast<std::byte*>(out);
  const std::byte* theirs = n.area(1 - n.rank());
  const std::size_t run = std::max<std::size_t>(kPipeRun / red.ext, 1) * red.ext;
  // In place, a commutative op folds theirs onto mine; root 0's own input
  // must stay on the left, so each run of it moves aside first: into the
  // root's own area, which this call leaves unused (a run is at most an
  // area: the pipeline takes up to an area's bytes), so no call allocates.
  const bool in_place = src == dst, aside = in_place && !red.op.commutative();
  std::byte* left = nullptr;
  if (aside) {
    if (int e = n.claim_area(&left)) return e;
  }
  for (std::size_t k = 0; k < pieces; ++k) {
    const std::size_t lo = std::min(bytes, k * piece), hi = std::min(bytes, lo + piece);
    if (int e = n.wait_one(1 - n.rank(), s + k)) return e;
    for (std::size_t at = lo; at < hi; at += run) {
      const std::size_t len = std::min(run, hi - at);
      if (in_place && !aside) {
        red.combine(theirs + at, dst + at, len / red.ext);
        continue;
      }
      if (aside) std::memcpy(left, src + at, len);
      std::memcpy(dst + at, theirs + at, len);
      red.combine(aside ? left : src + at, dst + at, len / red.ext);
    }
  }
  n.post(s + pieces - 1);
  n.areas_free_at(s + pieces - 1);
  return 0;
}

}  // namespace

bool shm_barrier(Device& dev, const Comm& comm, const Tuning& t, int* err) {
  bool taken = false;
  ShmNode* n = ShmNode::for_call(dev, comm, t.shm, err, &taken);
  if (!n) return taken;
  const uint64_t s = n->begin_barrier();
  *err = n->post_wait_all(s);
  return true;
}

bool shm_bcast(Device& dev, void* buf, std::size_t count, const Datatype* type, int root, const Comm& comm,
               const Tuning& t, int* err) {
  if (t.bcast != BcastAlgo::Auto || !type || !type->is_committed() || root < 0 || root >= comm.size) return false;
  if (count == 0 || in_place(buf)) return false;
  bool taken = false;
  ShmNode* n = ShmNode::for_call(dev, comm, t.shm, err, &taken);
  if (!n) return taken;
  // Beyond a slot only: up to one, a root or receiver on the express path
  // (coll/express.hpp) meets the others in the slots.
  if (const std::size_t bytes = count * type->size(); bytes > n->slot_limit()) {
    if (!direct_fits(*n, t.shm_direct_bcast_min, bytes) || !direct_bcast(dev, *n, buf, count, type, root, t, err)) {
      *err = long_bcast(*n, buf, count, type, root);
    }
    return true;
  }
  const uint64_t s = n->begin(1, count * type->size());
  if (comm.rank == root) {
    std::byte* mine = nullptr;
    if ((*err = n->claim_slot(&mine))) return true;
    pack(buf, count, type, mine);
    n->publish(s);
  } else {
    n->post(s);  // done with every older slot
    if ((*err = n->wait_slot(root, s))) return true;
    unpack(n->slot(root), buf, count, type);
  }
  return true;
}

constexpr std::size_t kShmTwoRankP2pReduce = 32 * 1024;
// A 2-rank reduce read directly up to this size; longer, up to an area,
// pipelined (the root's read and fold of a long vector cost more than the
// other core streaming it while the root folds).
constexpr std::size_t kPipeOver = 256 * 1024;

// Ranks that outnumber the processors read their slices of the inputs
// directly up to this size (the slice read and the fold's result share the
// reader's area).
constexpr std::size_t kSlicedOver = 512 * 1024;

bool shm_reduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                int root, const Comm& comm, const Tuning& t, int* err) {
  Reduction red{type, op};
  if (t.reduce != ReduceAlgo::Auto || root < 0 || root >= comm.size || !red.resolve(count)) return false;
  const void* in = sbuf;
  if (comm.rank == root) {
    if (!rbuf || in_place(rbuf)) return false;
    if (in_place(sbuf)) in = rbuf;
  }
  if (!in || in_place(in)) return false;
  bool taken = false;
  ShmNode* n = ShmNode::for_call(dev, comm, t.shm, err, &taken);
  if (!n) return taken;
  // Two ranks with a core each, above a slot (commutative op or root 0: the
  // fold's order): read directly from ADI3_COLL_SHM_DIRECT_REDUCE_MIN up to
  // kPipeOver and past an area, else (or when the rate verdict says so)
  // pipelined up to an area. Otherwise up to 32 KiB one message to the
  // root, folded there (point-to-point binomial), beat the sliced long
  // reduction (two copies through memory, three stages): 2 ranks, chrt -f
  // 1, medians of 5, five runs: 16 KiB 4.4-6.5 -> 3.3-4.5 us (four wins,
  // one tie). Direct against the pipeline, median per call, 7 alternated
  // launches, buffers reused, 64 / 256 KiB: 10.3 / 35.7 -> 6.8 / 22.0 us
  // (Open MPI 6.9 / 23.3); inputs rewritten before each call read slowly:
  // 10.4 / 35.7 -> 12.1 / 39.8 us (Open MPI 13.4 / 43.6). From 768 KiB to
  // an area the pipeline wins (1 MiB 167 us, 194 read directly).
  const std::size_t bytes = count * red.ext;
  if (n->size() == 2 && n->own_cores() && bytes > n->slot_limit()) {
    const bool ordered = root == 0 || red.op.commutative();
    // Up to the deep slot tier's 17 KiB: one stage through the slots, the
    // root folds (any op, any root). The 8 KiB slot limit where ranks have
    // cores of their own is for calls every rank folds; here the other
    // rank copies its input once and runs ahead. Per-call medians, 9
    // alternated launches, load 22-36, 12 / 16 KiB: 3.39 / 3.40 -> 1.69 /
    // 2.40 us (pipelined before); input rewritten each call 3.82 -> 2.48.
    if (bytes <= kShmSlotData) {
      *err = small_reduction(*n, red, in, rbuf, count, root);
      return true;
    }
    if (ordered && (bytes <= kPipeOver || bytes > kShmChunk) && direct_fits(*n, t.shm_direct_reduce_min, bytes) &&
        direct_reduce(dev, *n, red, in, rbuf, count, root, t, err)) {
      return true;
    }
    if (ordered && bytes <= kShmChunk) {
      *err = pipelined_reduce(*n, red, in, rbuf, count, root);
      return true;
    }
    if (bytes <= kShmTwoRankP2pReduce) return false;
  }
  if (bytes > n->slot_limit() && bytes <= kSlicedOver &&
      direct_fits(*n, 0, bytes, t.shm_direct_reduce_shared_min, t.shm_direct_shared_crowding) &&
      sliced_direct_reduce(dev, *n, red, in, rbuf, count, root, err)) {
    return true;
  }
  *err = count * red.ext <= n->slot_limit() ? small_reduction(*n, red, in, rbuf, count, root)
                                            : long_reduction(*n, red, in, rbuf, count, root);
  return true;
}

bool shm_allreduce(Device& dev, const void* sbuf, void* rbuf, std::size_t count, const Datatype* type, const Op& op,
                   const Comm& comm, const Tuning& t, int* err) {
  Reduction red{type, op};
  if (t.allreduce != AllreduceAlgo::Auto || !red.resolve(count)) return false;
  if (!rbuf || in_place(rbuf)) return false;
  const void* in = in_place(sbuf) ? rbuf : sbuf;
  if (!in) return false;
  bool taken = false;
  ShmNode* n = ShmNode::for_call(dev, comm, t.shm, err, &taken);
  if (!n) return taken;
  *err = count * red.ext <= n->slot_limit() ? small_reduction(*n, red, in, rbuf, count, -1)
                                            : long_reduction(*n, red, in, rbuf, count, -1);
  return true;
}

// Reduce-scatter of a vector that fits a slot: through the slots, one
// stage. Longer, in rounds of kShmChunk bytes of the vector: each rank
// copies the round into its area once (all of it in place, where the
// result overwrites the input; else all but its own block, which only it
// reads), then folds its block's share of the round in rank order straight
// into rbuf.
bool shm_reduce_scatter(Device& dev, const void* sbuf, void* rbuf, const int* counts, std::size_t same,
                        const Datatype* type, const Op& op, const Comm& comm, const Tuning& t, int* err) {
  if (t.reduce_scatter != ReduceScatterAlgo::Auto) return false;
  const int me = comm.rank, p = comm.size;
  std::size_t total = 0, b0 = 0, mine = 0;
  for (int i = 0; i < p; ++i) {
    if (counts && counts[i] < 0) return false;
    const std::size_t c = counts ? static_cast<std::size_t>(counts[i]) : same;
    if (i < me) b0 += c;
    if (i == me) mine = c;
    total += c;
  }
  Reduction red{type, op};
  if (!red.resolve(total)) return false;
  const bool inplace = in_place(sbuf);
  const void* in = inplace ? rbuf : sbuf;
  if (!in || in_place(in) || (mine > 0 && (!rbuf || in_place(rbuf)))) return false;
  bool taken = false;
  ShmNode* n = ShmNode::for_call(dev, comm, t.shm, err, &taken);
  if (!n) return taken;
  const std::size_t ext = red.ext, b1 = b0 + mine;
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(rbuf);
  if (total <= n->slot_limit() / ext) {
    // The whole vector fits a slot: one stage (the rounds below take two,
    // so a rank passes through the scheduler twice per call when ranks
    // outnumber cores). Every rank folds its block out of the slots; in
    // place, rbuf is only written after its copy is in my slot.
    const uint64_t s = n->begin(1, total * ext);
    std::byte* slot = nullptr;
    if ((*err = n->claim_slot(&slot))) return true;
    std::memcpy(slot, src, total * ext);
    if ((*err = n->publish_wait_slots(s))) return true;
    if (mine > 0) {
      fold(
          red, [&](int j) -> const void* { return n->slot(j) + b0 * ext; }, p, dst, mine);
    }
    return true;
  }
  const std::size_t per_round = std::max<std::size_t>(1, kShmChunk / ext);
  const std::size_t rounds = (total + per_round - 1) / per_round;
  uint64_t s = n->begin(2 * rounds);
  for (std::size_t at = 0; at < total; at += per_round, s += 2) {
    const std::size_t end = std::min(total, at + per_round);
    // My block's share of this round, [lo, hi) in vector elements.
    const std::size_t lo = std::clamp(b0, at, end), hi = std::clamp(b1, at, end);
    std::byte* area = nullptr;
    if ((*err = n->claim_area(&area))) return true;
    if (inplace) {
      to_area(area, src + at * ext, (end - at) * ext);
    } else {
      to_area(area, src + at * ext, (lo - at) * ext);
      to_area(area + (hi - at) * ext, src + hi * ext, (end - hi) * ext);
    }
    if ((*err = n->post_wait_all(s))) return true;
    if (hi > lo) {
      auto slice = [&](int j) -> const void* {
        return j == me && !inplace ? src + lo * ext : n->area(j) + (lo - at) * ext;
      };
      fold(red, slice, p, dst + (lo - b0) * ext, hi - lo);
    }
    n->post(s + 1);
    n->areas_free_at(s + 1);
  }
  return true;
}

}  // namespace adi3::coll::detail
