// Segment: a (buf, count, type) view driven through a Cursor.
#include "segment/segment.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "segment/copy_ops.hpp"
#include "segment/whole.hpp"

namespace adi3 {

using detail::Node;
using detail::NodeKind;

Segment::Segment(void* buf, std::size_t count, const Datatype* type) {
  init(buf, count, type, Representation::native());
}

Segment::Segment(void* buf, std::size_t count, const Datatype* type, const Representation& rep) {
  init(buf, count, type, rep);
}

void Segment::init(void* buf, std::size_t count, const Datatype* type, const Representation& rep) {
  buf_ = reinterpret_cast<detail::Addr>(buf);
  count_ = count;
  type_ = type;
  rep_ = &rep;
  if (!type_) return;
  type_->retain();
  if (&rep == &Representation::native()) {
    prog_ = &type_->native_program();
  } else {
    own_prog_ = type_->program_for(rep);
    prog_ = own_prog_.get();
  }
  const Node* root = prog_->root;
  if (!root || count == 0) return;
  size_ = count * prog_->size;
  contig_ = prog_->raw && type_->is_contiguous();
  if (count == 1) return;
  // count copies of the root, folded into one leaf when they line up.
  std::ptrdiff_t ext = prog_->extent;
  own_top_ = true;
  top_.size = size_;
  if (root->kind == NodeKind::kVecRuns &&
      (root->count == 1 || static_cast<std::ptrdiff_t>(root->count) * root->stride == ext)) {
    top_.kind = NodeKind::kVecRuns;
    top_.elem = root->elem;
    top_.len = root->len;
    top_.disp0 = root->disp0;
    if (root->count == 1 && static_cast<std::ptrdiff_t>(root->len * root->elem.msz) == ext) {
      top_.count = 1;
      top_.len = root->len * count;
    } else if (root->count == 1) {
      top_.count = count;
      top_.stride = ext;
    } else {
      top_.count = count * root->count;
      top_.stride = root->stride;
    }
    return;
  }
  top_.stride = ext;
  if (root->kind == NodeKind::kRuns) {
    top_.kind = NodeKind::kRepRuns;
    top_.count = count;
    top_.child = root;
  } else if (root->kind == NodeKind::kRepRuns && static_cast<std::ptrdiff_t>(root->count) * root->stride == ext) {
    top_.kind = NodeKind::kRepRuns;
    top_.count = count * root->count;
    top_.disp0 = root->disp0;
    top_.stride = root->stride;
    top_.child = root->child;
  } else {
    top_.kind = NodeKind::kVec;
    top_.count = count;
    top_.len = 1;
    top_.child = root;
  }
}

void Segment::clear() {
  if (type_) type_->release();
  type_ = nullptr;
  prog_ = nullptr;
  own_prog_.reset();
  buf_ = 0;
  count_ = size_ = 0;
  contig_ = own_top_ = false;
  top_ = Node{};
  cur_.reset(nullptr, 0, 0, 0);
}

Segment::~Segment() {
  if (type_) type_->release();
}

Segment::Segment(Segment&& o) noexcept { *this = std::move(o); }

Segment& Segment::operator=(Segment&& o) noexcept {
  if (this == &o) return *this;
  clear();
  buf_ = o.buf_;
  count_ = o.count_;
  type_ = std::exchange(o.type_, nullptr);
  rep_ = o.rep_;
  prog_ = o.prog_;
  own_prog_ = std::move(o.own_prog_);
  size_ = o.size_;
  contig_ = o.contig_;
  own_top_ = o.own_top_;
  top_ = std::move(o.top_);
  // The cursor's frames point at o.top_; start afresh (the next call seeks).
  cur_.reset(nullptr, 0, 0, 0);
  o.clear();
  return *this;
}

std::size_t Segment::size() const { return size_; }

// Positions the cursor at `first`; false when there is nothing to walk.
bool Segment::place(std::size_t first) {
  if (first >= size_) return false;
  if (!cur_.at(first)) {
    if (!cur_.bound()) cur_.reset(top(), buf_, size_, prog_->depth + 1);
    cur_.seek(first);
  }
  return true;
}

std::size_t Segment::pack(std::size_t first, std::size_t last, void* dst) {
  last = std::min(last, size_);
  if (first >= last) return 0;
  if (contig_) {
    std::memcpy(dst, detail::ptr(detail::add(buf_, type_->true_lb())) + first, last - first);
    return last - first;
  }
  if (prog_->raw) {
    detail::PackOp op{static_cast<char*>(dst)};
    if (first == 0 && last == size_) {  // all of it: no cursor needed
      detail::walk_whole(*prog_, buf_, count_, op);
      return last;
    }
    place(first);
    return cur_.walk(op, last - first);
  }
  place(first);
  detail::EncodeOp op{rep_, static_cast<char*>(dst)};
  return cur_.walk(op, last - first);
}

std::size_t Segment::unpack(std::size_t first, std::size_t last, const void* src) {
  last = std::min(last, size_);
  if (first >= last) return 0;
  if (contig_) {
    std::memcpy(detail::ptr(detail::add(buf_, type_->true_lb())) + first, src, last - first);
    return last - first;
  }
  if (prog_->raw) {
    detail::UnpackOp op{static_cast<const char*>(src)};
    if (first == 0 && last == size_) {
      detail::walk_whole(*prog_, buf_, count_, op);
      return last;
    }
    place(first);
    return cur_.walk(op, last - first);
  }
  place(first);
  detail::DecodeOp op{rep_, static_cast<const char*>(src)};
  return cur_.walk(op, last - first);
}

std::size_t Segment::to_iov(std::size_t first, std::size_t last, struct iovec* iov, std::size_t max_iov,
                            std::size_t* iov_count) {
  *iov_count = 0;
  last = std::min(last, size_);
  if (first >= last || max_iov == 0 || !prog_->raw) return 0;
  if (contig_) {
    iov[0].iov_base = detail::ptr(detail::add(buf_, type_->true_lb())) + first;
    iov[0].iov_len = last - first;
    *iov_count = 1;
    return last - first;
  }
  place(first);
  detail::IovOp op{iov, max_iov};
  std::size_t n = cur_.walk(op, last - first);
  *iov_count = op.n;
  return n;
}

}  // namespace adi3
