// Internal: a resumable position inside the packed stream of a program.
//
// The cursor keeps one frame per tree level (which block, which copy in
// the block, how far into the current run), so walking on from where the
// last call stopped costs O(bytes); seeking elsewhere costs O(depth * log
// blocks). Ops receive memory runs: raw ops (copy, iovec) get byte runs and
// strided batches; typed ops get whole elements and partial elements.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "segment/program.hpp"

namespace adi3::detail {

// Addresses are carried as integers: displacements may lead outside the
// buffer (or start from MPI_BOTTOM) before a run is reached.
using Addr = std::uintptr_t;
inline Addr add(Addr a, std::ptrdiff_t d) { return a + static_cast<Addr>(d); }

class Cursor {
 public:
  Cursor() = default;
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  // Walks `top` (an instance at address buf) whose stream is `total` bytes;
  // `depth` bounds the levels below top.
  void reset(const Node* top, Addr buf, std::size_t total, std::size_t depth) {
    top_ = top;
    buf_ = buf;
    total_ = top ? total : 0;
    st_.reserve(depth + 1);
    st_.clear();
    pos_ = 0;
    valid_ = false;
  }
  std::size_t pos() const { return pos_; }
  bool bound() const { return top_ != nullptr; }
  bool at(std::size_t pos) const { return valid_ && pos == pos_; }

  void seek(std::size_t pos) {
    st_.clear();
    valid_ = true;
    pos_ = std::min(pos, total_);
    if (pos_ >= total_) return;
    const Node* n = top_;
    Addr base = buf_;
    std::size_t rem = pos_;
    for (;;) {
      std::size_t i;
      if (n->kind == NodeKind::kVecRuns || n->kind == NodeKind::kVec || n->kind == NodeKind::kRepRuns) {
        std::size_t unit = n->size / n->count;
        i = rem / unit;
        rem -= i * unit;
      } else {
        i = entry(*n, rem);
        rem -= n->starts[i];
      }
      if (n->kind == NodeKind::kRepRuns) {
        std::size_t j = entry(*n->child, rem);
        st_.push_back({n, base, i, j, rem - n->child->starts[j]});
        return;
      }
      if (n->leaf()) {
        st_.push_back({n, base, i, 0, rem});
        return;
      }
      const Node* k = n->kid(i);
      std::size_t j = rem / k->size;
      rem -= j * k->size;
      st_.push_back({n, base, i, j, 0});
      base = add(base, n->block_disp(i) + static_cast<std::ptrdiff_t>(j) * n->kid_extent(i));
      n = k;
    }
  }

  // Feeds up to nbytes of the stream, from pos(), to op; returns the bytes
  // done (fewer when the stream ends or a raw op refuses a run).
  template <class Op>
  std::size_t walk(Op& op, std::size_t nbytes) {
    std::size_t done = 0;
    while (done < nbytes && !st_.empty()) {
      Frame& f = st_.back();
      std::size_t k;
      if constexpr (Op::kRaw) {
        k = leaf_raw(op, f, nbytes - done);
      } else {
        k = leaf_typed(op, f, nbytes - done);
      }
      done += k;
      pos_ += k;
      if (f.i < f.n->count) break;  // budget used up, or the op is full
      advance();
    }
    return done;
  }

 private:
  struct Frame {
    const Node* n;
    Addr base;        // address of this node's instance
    std::size_t i;    // run or block
    std::size_t j;    // copy within the block (inner nodes)
    std::size_t off;  // stream bytes into run i (leaves)
  };

  const Node* top_ = nullptr;
  Addr buf_ = 0;
  std::size_t total_ = 0;
  std::size_t pos_ = 0;
  bool valid_ = false;
  // Frames for the levels of the tree: inline for the usual shallow
  // programs (no allocation per Segment), on the heap beyond that. Never
  // grows while walking, so references to frames stay valid.
  class Stack {
   public:
    void reserve(std::size_t n) {
      if (n > kInline && heap_.size() < n) heap_.resize(n);
      data_ = n > kInline ? heap_.data() : inline_;
    }
    void clear() { n_ = 0; }
    bool empty() const { return n_ == 0; }
    Frame& back() { return data_[n_ - 1]; }
    void push_back(const Frame& f) { data_[n_++] = f; }
    void pop_back() { --n_; }

   private:
    static constexpr std::size_t kInline = 8;
    Frame inline_[kInline];
    std::vector<Frame> heap_;
    Frame* data_ = inline_;
    std::size_t n_ = 0;
  };
  Stack st_;

  // The entry of a run/block list holding stream offset `rem`.
  static std::size_t entry(const Node& n, std::size_t rem) {
    return static_cast<std::size_t>(std::upper_bound(n.starts.begin(), n.starts.end(), rem) - n.starts.begin()) - 1;
  }

  void push_first(const Node* n, Addr base) {
    while (!n->leaf()) {
      st_.push_back({n, base, 0, 0, 0});
      base = add(base, n->block_disp(0));
      n = n->kid(0);
    }
    st_.push_back({n, base, 0, 0, 0});
  }

  // The leaf on top is finished: step the parents to the next leaf.
  void advance() {
    st_.pop_back();
    while (!st_.empty()) {
      Frame& p = st_.back();
      if (++p.j == p.n->block_len(p.i)) {
        p.j = 0;
        ++p.i;
      }
      if (p.i < p.n->count) {
        push_first(p.n->kid(p.i),
                   add(p.base, p.n->block_disp(p.i) + static_cast<std::ptrdiff_t>(p.j) * p.n->kid_extent(p.i)));
        return;
      }
      st_.pop_back();
    }
  }

  // Copies of a run list: whole copies in one op call when the op can,
  // else run by run (partial copies, iovec limits).
  template <class Op>
  static std::size_t rep_raw(Op& op, Frame& f, std::size_t want) {
    const Node& n = *f.n;
    const Node& r = *n.child;
    std::size_t done = 0;
    while (f.i < n.count && done < want) {
      Addr inst = add(f.base, n.disp0 + static_cast<std::ptrdiff_t>(f.i) * n.stride);
      if constexpr (Op::kBulk) {
        if (f.j == 0 && f.off == 0) {
          std::size_t m = std::min(n.count - f.i, (want - done) / r.size);
          if (m) {
            op.rep(inst, n.stride, m, r);
            f.i += m;
            done += m * r.size;
            continue;
          }
        }
      }
      while (f.j < r.count && done < want) {
        std::size_t len = r.lens[f.j];
        std::size_t k = std::min(len - f.off, want - done);
        if (!op.run(add(inst, r.disps[f.j]) + f.off, k)) return done;
        done += k;
        f.off += k;
        if (f.off < len) return done;
        f.off = 0;
        ++f.j;
      }
      if (f.j == r.count) {
        f.j = 0;
        ++f.i;
      }
    }
    return done;
  }

  template <class Op>
  static std::size_t leaf_raw(Op& op, Frame& f, std::size_t want) {
    const Node& n = *f.n;
    std::size_t done = 0;
    if (n.kind == NodeKind::kRepRuns) return rep_raw(op, f, want);
    if (n.kind == NodeKind::kVecRuns) {
      const std::size_t len = n.len;
      Addr p = add(f.base, n.disp0 + static_cast<std::ptrdiff_t>(f.i) * n.stride);
      if (f.off) {  // finish a run started earlier
        std::size_t k = std::min(len - f.off, want);
        if (!op.run(p + f.off, k)) return 0;
        done = k;
        f.off += k;
        if (f.off < len) return done;
        f.off = 0;
        ++f.i;
        p = add(p, n.stride);
      }
      std::size_t m = std::min(n.count - f.i, (want - done) / len);
      if (m) {
        std::size_t got = op.vec(p, len, n.stride, m);
        f.i += got;
        done += got * len;
        if (got < m) return done;
        p = add(p, static_cast<std::ptrdiff_t>(got) * n.stride);
      }
      if (f.i < n.count && done < want) {  // start a run, finish it later
        std::size_t k = want - done;
        if (op.run(p, k)) {
          f.off = k;
          done += k;
        }
      }
      return done;
    }
    while (f.i < n.count && done < want) {
      std::size_t len = n.lens[f.i];
      std::size_t k = std::min(len - f.off, want - done);
      if (!op.run(add(f.base, n.disps[f.i]) + f.off, k)) break;
      done += k;
      f.off += k;
      if (f.off < len) break;
      f.off = 0;
      ++f.i;
    }
    return done;
  }

  // One run of `nel` elements of format e at p, from stream offset off.
  template <class Op>
  static std::size_t span_typed(Op& op, const Elem& e, Addr p, std::size_t nel, std::size_t off, std::size_t want) {
    std::size_t done = 0, idx = off / e.ssz, b = off % e.ssz;
    if (b) {
      std::size_t k = std::min<std::size_t>(e.ssz - b, want);
      op.part(e, p + idx * e.msz, b, k);
      done = k;
      if (b + k < e.ssz) return done;
      ++idx;
    }
    std::size_t m = std::min(nel - idx, (want - done) / e.ssz);
    if (m) {
      op.elems(e, p + idx * e.msz, m);
      done += m * e.ssz;
      idx += m;
    }
    if (idx < nel && done < want) {
      op.part(e, p + idx * e.msz, 0, want - done);
      done = want;
    }
    return done;
  }

  template <class Op>
  static std::size_t leaf_typed(Op& op, Frame& f, std::size_t want) {
    const Node& n = *f.n;
    std::size_t done = 0;
    if (n.kind == NodeKind::kRepRuns) {
      const Node& r = *n.child;
      while (f.i < n.count && done < want) {
        Addr inst = add(f.base, n.disp0 + static_cast<std::ptrdiff_t>(f.i) * n.stride);
        while (f.j < r.count && done < want) {
          const Elem& e = r.elems[f.j];
          std::size_t k = span_typed(op, e, add(inst, r.disps[f.j]), r.lens[f.j], f.off, want - done);
          done += k;
          f.off += k;
          if (f.off < r.lens[f.j] * e.ssz) return done;
          f.off = 0;
          ++f.j;
        }
        if (f.j == r.count) {
          f.j = 0;
          ++f.i;
        }
      }
      return done;
    }
    bool vr = n.kind == NodeKind::kVecRuns;
    while (f.i < n.count && done < want) {
      const Elem& e = vr ? n.elem : n.elems[f.i];
      std::size_t nel = vr ? n.len : n.lens[f.i];
      Addr p = add(f.base, vr ? n.disp0 + static_cast<std::ptrdiff_t>(f.i) * n.stride : n.disps[f.i]);
      std::size_t k = span_typed(op, e, p, nel, f.off, want - done);
      done += k;
      f.off += k;
      if (f.off < nel * e.ssz) break;
      f.off = 0;
      ++f.i;
    }
    return done;
  }
};

}  // namespace adi3::detail
