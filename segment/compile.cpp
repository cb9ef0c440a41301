// Commit: compiles a datatype's layout into a Program (see program.hpp).
//
// The rules, applied bottom-up:
//  - a basic type is one run;
//  - a block of copies of a single run that tiles (run length == extent) is
//    one longer run; copies of a strided leaf whose pattern continues into
//    the next copy fold into one longer strided leaf (vector of vector);
//  - a small block list whose children are leaves expands into one run
//    list, merging runs that touch (nested contiguous, struct of adjacent
//    fields); equal runs at a constant stride become a strided leaf;
//  - anything else becomes an inner node repeating its child.
#include <algorithm>
#include <unordered_map>

#include "segment/program.hpp"
#include "segment/representation.hpp"
#include "segment/type_access.hpp"

namespace adi3::detail {
namespace {

using Shape = TypeAccess::Shape;

// A run list may grow to this many runs when expanding a block list, and
// to at most 8 runs per block (plus slack), so expansion never explodes.
constexpr std::size_t kMaxExpand = 1 << 15;

struct Run {
  std::ptrdiff_t disp;
  std::size_t len;
  Elem e;
};

std::ptrdiff_t sd(std::size_t v) { return static_cast<std::ptrdiff_t>(v); }

class Compiler {
 public:
  explicit Compiler(const Representation* rep) : rep_(rep) {}

  std::shared_ptr<Program> run(const Datatype& t) {
    auto p = std::make_shared<Program>();
    p_ = p.get();
    p->raw = rep_ == nullptr;
    p->rep = rep_;
    p->extent = t.extent();
    p->root = compile(t);
    p->size = p->root ? p->root->size : 0;
    p->depth = depth(p->root);
    return p;
  }

 private:
  const Representation* rep_;
  Program* p_ = nullptr;
  std::unordered_map<const Datatype*, const Node*> memo_;
  std::unordered_map<const Node*, std::size_t> depth_;

  Node* make(NodeKind k) {
    p_->arena.push_back(std::make_unique<Node>());
    Node* n = p_->arena.back().get();
    n->kind = k;
    return n;
  }

  std::size_t depth(const Node* n) {
    if (!n) return 0;
    if (n->leaf()) return 1;
    auto it = depth_.find(n);
    if (it != depth_.end()) return it->second;
    std::size_t d = 0;
    if (n->kind == NodeKind::kStruct) {
      for (const Node* k : n->kids) d = std::max(d, depth(k));
    } else {
      d = depth(n->child);
    }
    depth_[n] = d + 1;
    return d + 1;
  }

  static bool single(const Node* n) { return n->kind == NodeKind::kVecRuns && n->count == 1; }
  static std::ptrdiff_t run_mem(const Node* n) { return sd(n->len * n->elem.msz); }

  const Node* vec_runs(std::size_t count, std::size_t len, std::ptrdiff_t disp, std::ptrdiff_t stride, Elem e) {
    if (count == 1) stride = 0;
    // Equal runs that touch are one run.
    if (count > 1 && stride == sd(len * e.msz)) {
      len *= count;
      count = 1;
      stride = 0;
    }
    Node* n = make(NodeKind::kVecRuns);
    n->count = count;
    n->len = len;
    n->disp0 = disp;
    n->stride = stride;
    n->elem = e;
    n->size = count * len * e.ssz;
    return n;
  }

  // count copies of the run list c: one leaf, walked without per-copy
  // tree steps (arrays of structs, repeated irregular patterns).
  const Node* rep_runs(std::size_t count, std::ptrdiff_t disp, std::ptrdiff_t stride, const Node* c) {
    if (count == 1) return shift(c, disp);
    Node* n = make(NodeKind::kRepRuns);
    n->count = count;
    n->disp0 = disp;
    n->stride = stride;
    n->child = c;
    n->size = count * c->size;
    return n;
  }

  const Node* vec(std::size_t count, std::size_t bl, std::ptrdiff_t disp, std::ptrdiff_t stride, std::ptrdiff_t cext,
                  const Node* c) {
    if (c->kind == NodeKind::kRuns) {
      if (bl == 1) return rep_runs(count, disp, stride, c);
      if (count == 1) return rep_runs(bl, disp, cext, c);
      return vec(count, 1, disp, stride, 0, rep_runs(bl, 0, cext, c));
    }
    Node* n = make(NodeKind::kVec);
    n->count = count;
    n->len = bl;
    n->disp0 = disp;
    n->stride = count == 1 ? 0 : stride;
    n->cext = cext;
    n->child = c;
    n->size = count * bl * c->size;
    return n;
  }

  // bl copies of c, spaced ext (c's extent): a leaf when possible.
  const Node* block(std::size_t bl, const Node* c, std::ptrdiff_t ext) {
    if (bl == 1) return c;
    if (c->kind == NodeKind::kVecRuns) {
      if (single(c) && run_mem(c) == ext) return vec_runs(1, bl * c->len, c->disp0, 0, c->elem);
      if (single(c)) return vec_runs(bl, c->len, c->disp0, ext, c->elem);
      if (sd(c->count) * c->stride == ext) return vec_runs(bl * c->count, c->len, c->disp0, c->stride, c->elem);
    }
    return nullptr;
  }

  // count copies of b at stride, folding into b when the pattern continues.
  const Node* repeat(std::size_t count, const Node* b, std::ptrdiff_t stride) {
    if (count == 1) return b;
    if (b->kind == NodeKind::kVecRuns) {
      if (single(b)) return vec_runs(count, b->len, b->disp0, stride, b->elem);
      if (sd(b->count) * b->stride == stride) return vec_runs(count * b->count, b->len, b->disp0, b->stride, b->elem);
    }
    if (b->kind == NodeKind::kVec && b->len == 1 && sd(b->count) * b->stride == stride) {
      return vec(count * b->count, 1, b->disp0, b->stride, b->cext, b->child);
    }
    if (b->kind == NodeKind::kRepRuns && sd(b->count) * b->stride == stride) {
      return rep_runs(count * b->count, b->disp0, b->stride, b->child);
    }
    return vec(count, 1, 0, stride, 0, b);
  }

  // A copy of n displaced by d bytes.
  const Node* shift(const Node* n, std::ptrdiff_t d) {
    if (d == 0) return n;
    Node* m = make(n->kind);
    *m = *n;
    m->disp0 += d;
    for (auto& x : m->disps) x += d;
    return m;
  }

  // Merges touching runs and picks the leaf form.
  const Node* from_runs(const std::vector<Run>& in) {
    std::vector<Run> runs;
    runs.reserve(in.size());
    for (const Run& r : in) {
      if (r.len == 0) continue;
      if (!runs.empty()) {
        Run& b = runs.back();
        if (b.e == r.e && b.disp + sd(b.len * b.e.msz) == r.disp) {
          b.len += r.len;
          continue;
        }
      }
      runs.push_back(r);
    }
    if (runs.empty()) return nullptr;
    if (runs.size() == 1) return vec_runs(1, runs[0].len, runs[0].disp, 0, runs[0].e);
    bool regular = true;
    std::ptrdiff_t stride = runs[1].disp - runs[0].disp;
    for (std::size_t i = 1; i < runs.size() && regular; ++i) {
      regular = runs[i].len == runs[0].len && runs[i].e == runs[0].e && runs[i].disp - runs[i - 1].disp == stride;
    }
    if (regular) return vec_runs(runs.size(), runs[0].len, runs[0].disp, stride, runs[0].e);
    Node* n = make(NodeKind::kRuns);
    n->count = runs.size();
    n->disps.reserve(runs.size());
    n->lens.reserve(runs.size());
    n->elems.reserve(runs.size());
    n->starts.reserve(runs.size() + 1);
    std::size_t pos = 0;
    for (const Run& r : runs) {
      n->disps.push_back(r.disp);
      n->lens.push_back(r.len);
      n->elems.push_back(r.e);
      n->starts.push_back(pos);
      pos += r.len * r.e.ssz;
    }
    n->starts.push_back(pos);
    n->size = pos;
    return n;
  }

  static std::size_t nruns(const Node* c) {
    return c->kind == NodeKind::kRepRuns ? c->count * c->child->count : c->count;
  }

  // Appends the runs of one leaf instance at displacement d.
  static void append_runs(const Node* c, std::ptrdiff_t d, std::vector<Run>* out) {
    if (c->kind == NodeKind::kVecRuns) {
      for (std::size_t i = 0; i < c->count; ++i) out->push_back({d + c->disp0 + sd(i) * c->stride, c->len, c->elem});
    } else if (c->kind == NodeKind::kRuns) {
      for (std::size_t i = 0; i < c->count; ++i) out->push_back({d + c->disps[i], c->lens[i], c->elems[i]});
    } else {
      for (std::size_t i = 0; i < c->count; ++i) append_runs(c->child, d + c->disp0 + sd(i) * c->stride, out);
    }
  }

  const Node* basic(Builtin b) {
    const BuiltinInfo& info = builtin_info(b);
    if (!rep_ || rep_->is_identity(b)) return vec_runs(1, info.size, 0, 0, Elem{});
    Elem e{b, info.size, static_cast<std::uint32_t>(rep_->stream_size(b))};
    return vec_runs(1, 1, 0, 0, e);
  }

  const Node* vector(const Datatype& t) {
    const Datatype& ct = *TypeAccess::children(t)[0];
    const Node* c = compile(ct);
    auto count = static_cast<std::size_t>(TypeAccess::count(t));
    auto bl = static_cast<std::size_t>(TypeAccess::blocklen(t));
    if (!c || count == 0 || bl == 0) return nullptr;
    std::ptrdiff_t ext = ct.extent(), stride = TypeAccess::stride(t);
    if (const Node* b = block(bl, c, ext)) return repeat(count, b, stride);
    if (count == 1 || stride == sd(bl) * ext) return vec(count * bl, 1, 0, ext, 0, c);
    return vec(count, bl, 0, stride, ext, c);
  }

  struct Block {
    std::ptrdiff_t disp;
    std::size_t bl;
    const Node* c;
    std::ptrdiff_t ext;
  };

  const Node* blocks(const Datatype& t) {
    bool is_struct = TypeAccess::shape(t) == Shape::kStruct;
    const auto& disps = TypeAccess::disps(t);
    const auto& kids = TypeAccess::children(t);
    std::vector<Block> bs;
    bs.reserve(disps.size());
    for (std::size_t i = 0; i < disps.size(); ++i) {
      const Datatype& ct = *kids[is_struct ? i : 0];
      auto bl = static_cast<std::size_t>(TypeAccess::blocklen(t, i));
      const Node* c = bl ? compile(ct) : nullptr;
      if (c) bs.push_back({disps[i], bl, c, ct.extent()});
    }
    if (bs.empty()) return nullptr;
    if (bs.size() == 1) {
      const Block& b = bs[0];
      const Node* one = block(b.bl, b.c, b.ext);
      return shift(one ? one : vec(1, b.bl, 0, 0, b.ext, b.c), b.disp);
    }
    // Expand into one run list when every child is a leaf and it stays small.
    std::size_t total = 0;
    bool leaves = true;
    for (const Block& b : bs) {
      if (!b.c->leaf()) {
        leaves = false;
        break;
      }
      total += (single(b.c) && run_mem(b.c) == b.ext) ? 1 : b.bl * nruns(b.c);
    }
    if (leaves && total <= kMaxExpand && total <= 8 * bs.size() + 64) {
      std::vector<Run> runs;
      runs.reserve(total);
      for (const Block& b : bs) {
        if (single(b.c) && run_mem(b.c) == b.ext) {
          runs.push_back({b.disp + b.c->disp0, b.bl * b.c->len, b.c->elem});
        } else {
          for (std::size_t j = 0; j < b.bl; ++j) append_runs(b.c, b.disp + sd(j) * b.ext, &runs);
        }
      }
      return from_runs(runs);
    }
    bool same = true;
    for (const Block& b : bs) same = same && b.c == bs[0].c;
    Node* n = make(same ? NodeKind::kIdx : NodeKind::kStruct);
    n->count = bs.size();
    n->starts.reserve(bs.size() + 1);
    std::size_t pos = 0;
    for (const Block& b : bs) {
      n->disps.push_back(b.disp);
      n->lens.push_back(b.bl);
      if (!same) {
        n->kids.push_back(b.c);
        n->cexts.push_back(b.ext);
      }
      n->starts.push_back(pos);
      pos += b.bl * b.c->size;
    }
    n->starts.push_back(pos);
    if (same) {
      n->child = bs[0].c;
      n->cext = bs[0].ext;
    }
    n->size = pos;
    return n;
  }

  const Node* compile(const Datatype& t) {
    if (t.size() == 0) return nullptr;
    auto it = memo_.find(&t);
    if (it != memo_.end()) return it->second;
    const Node* n = nullptr;
    switch (TypeAccess::shape(t)) {
      case Shape::kBasic:
        n = basic(TypeAccess::builtin(t));
        break;
      case Shape::kVector:
        n = vector(t);
        break;
      case Shape::kIndexed:
      case Shape::kStruct:
        n = blocks(t);
        break;
      case Shape::kResized:
        n = compile(*TypeAccess::children(t)[0]);
        break;
    }
    memo_[&t] = n;
    return n;
  }
};

}  // namespace

std::shared_ptr<const Program> compile(const Datatype& t, const Representation* rep) {
  if (rep && rep == &Representation::native()) rep = nullptr;
  return Compiler(rep).run(t);
}

}  // namespace adi3::detail
