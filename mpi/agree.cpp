#include "mpi/agree.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "mpi/api.hpp"

namespace adi3::mpi {

int fail_agreement(Runtime& rt, const Comm& over, int failed) {
  uint32_t unused = 0;
  agree_context(rt, over, kTagContext, &unused, failed);
  return failed;
}

int allgather_bytes(Device& dev, const Comm& over, const void* mine, std::size_t bytes, void* all, int tag) {
  auto* out = static_cast<char*>(all);
  int p = over.size, me = over.rank;
  std::memcpy(out + static_cast<std::size_t>(me) * bytes, mine, bytes);
  int right = (me + 1) % p, left = (me + p - 1) % p;
  const Datatype* byte = Datatype::byte();
  for (int s = 0; s < p - 1; ++s) {
    int send_block = (me - s + p) % p, recv_block = (me - s - 1 + 2 * p) % p;
    if (int e =
            dev.sendrecv(out + static_cast<std::size_t>(send_block) * bytes, bytes, byte, right, tag,
                         out + static_cast<std::size_t>(recv_block) * bytes, bytes, byte, left, tag, over, nullptr)) {
      return e;
    }
  }
  return 0;
}

namespace {

constexpr int W = ContextIds::kWords;
constexpr int kClasses = 8;             // index % kClasses
constexpr int kRestrictedAttempts = 8;  // then every index
// The flag word after an offer's mask words.
constexpr uint32_t kReservedElsewhere = 1;  // other agreements hold indices here
constexpr uint32_t kFailed = 2;             // this rank failed before the agreement

// A draw every rank makes alike from the agreement's key and attempt.
int draw(std::uint64_t key, int attempt) {
  std::uint64_t x = key * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(attempt) * 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 29;
  return static_cast<int>(x % kClasses);
}

}  // namespace

Agreement::Agreement(Runtime& rt, const Comm& over, int tag, int failed)
    : rt_(rt),
      over_(over),
      tag_(tag),
      key_((static_cast<std::uint64_t>(over.context) << 32) | static_cast<std::uint32_t>(tag)),
      failed_(failed),
      mine_(W + 1),
      masks_(static_cast<std::size_t>(over.size) * (W + 1)) {
  start_round();
}

Agreement::~Agreement() {
  if (holding_) rt_.contexts.unreserve(mine_.data());
}

void Agreement::start_round() {
  uint32_t wanted[W];
  // Bits c, c + 8, c + 16, c + 24 of every word: the indices of class c.
  uint32_t keep = attempt_ < kRestrictedAttempts ? 0x01010101u << draw(key_, attempt_) : ~0u;
  for (int w = 0; w < W; ++w) wanted[w] = keep;
  if (failed_) {
    std::fill(mine_.begin(), mine_.end(), 0u);
    mine_[W] = kFailed;
  } else {
    bool others = rt_.contexts.reserve(wanted, mine_.data());
    holding_ = true;
    mine_[W] = others ? kReservedElsewhere : 0;
  }
  // Everyone's offer to everyone: one round.
  cur_ = std::make_unique<coll::Schedule>(rt_.dev(), over_, tag_);
  const std::size_t bytes = sizeof(uint32_t) * (W + 1);
  auto* out = reinterpret_cast<std::byte*>(masks_.data());
  std::memcpy(out + static_cast<std::size_t>(over_.rank) * bytes, mine_.data(), bytes);
  for (int i = 0; i < over_.size; ++i) {
    if (i == over_.rank) continue;
    cur_->recv_bytes(out + static_cast<std::size_t>(i) * bytes, bytes, i);
    cur_->send_bytes(mine_.data(), bytes, i);
  }
}

void Agreement::next() {
  cur_.reset();
  const auto n = static_cast<std::size_t>(over_.size);
  for (std::size_t r = 0; r < n; ++r) {
    if (!(masks_[r * (W + 1) + W] & kFailed)) continue;
    if (holding_) rt_.contexts.unreserve(mine_.data());
    holding_ = false;
    finished_ = true;
    err_ = no_peer_waits(failed_ ? failed_
                                 : raise(ErrorClass::Other,
                                         "the call failed at member %d (its arguments or an attribute copy callback), "
                                         "so at every member",
                                         static_cast<int>(r)));
    return;
  }
  uint32_t agreed[W];
  bool none = true, reserved_elsewhere = false;
  for (int w = 0; w < W; ++w) {
    agreed[w] = ~0u;
    for (std::size_t r = 0; r < n; ++r) agreed[w] &= masks_[r * (W + 1) + static_cast<std::size_t>(w)];
    none = none && agreed[w] == 0;
  }
  for (std::size_t r = 0; r < n; ++r) {
    reserved_elsewhere = reserved_elsewhere || (masks_[r * (W + 1) + W] & kReservedElsewhere) != 0;
  }
  if (!none) {
    // The lowest common index: reserved for us at every rank, so free.
    int pick = rt_.contexts.claim_lowest(agreed);
    rt_.contexts.unreserve(mine_.data());
    holding_ = false;
    finished_ = true;
    if (pick < 0) {
      err_ = raise(ErrorClass::Intern, "context agreement: the agreed index was taken");
      return;
    }
    index_ = static_cast<uint32_t>(pick);
    return;
  }
  rt_.contexts.unreserve(mine_.data());
  holding_ = false;
  if (attempt_ >= kRestrictedAttempts && !reserved_elsewhere) {
    finished_ = true;
    err_ = raise(ErrorClass::Other, "no context id is free at every member: too many communicators (%d in use here)",
                 rt_.contexts.in_use());
    return;
  }
  // That class is taken somewhere (or held by another pending agreement):
  // another draw, and after a few every index.
  ++attempt_;
  start_round();
}

bool Agreement::advance() {
  while (!finished_) {
    if (!cur_->advance()) return false;
    if (int e = cur_->error()) {
      err_ = e;
      finished_ = true;
      cur_.reset();
      break;
    }
    next();
  }
  return true;
}

int Agreement::run() {
  while (!finished_) {
    if (int e = cur_->run()) {
      err_ = e;
      finished_ = true;
      cur_.reset();
      break;
    }
    next();
  }
  return err_;
}

int agree_context(Runtime& rt, const Comm& over, int tag, uint32_t* index, int failed) {
  Agreement a(rt, over, tag, failed);
  if (int e = a.run()) return e;
  *index = a.index();
  return 0;
}

namespace {
// A create_group mark's first int: a member failed / a member's answer
// (its tag follows).
constexpr int kMarkFailed = 1, kMarkAnswer = 2;
}  // namespace

int agree_watching(Runtime& rt, const Comm& over, int tag, const Comm& marks, uint32_t* index, int failed) {
  Device& dev = rt.dev();
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  int got[2] = {0, 0};
  Request* mark = nullptr;
  if (int e = dev.irecv(got, 2, ints, kAnySource, kTagMark, marks, &mark)) return e;
  Agreement a(rt, over, tag, failed);
  int err = 0;
  while (!a.advance()) {
    if (!mark->complete()) {
      err = dev.block_until([&] { return mark->complete() || a.landed(); });
      if (err) break;
      continue;
    }
    Status st;
    dev.wait(&mark, &st);
    const int answer[2] = {kMarkAnswer, tag};
    err = dev.send(answer, 2, ints, st.source, kTagMark, marks);
    if (!err) err = dev.irecv(got, 2, ints, kAnySource, kTagMark, marks, &mark);
    if (err) break;
  }
  if (mark) {
    Status st;
    dev.cancel(mark);
    dev.wait(&mark, &st);
    if (!st.cancelled) {  // (a member outside this call's group: still answered)
      const int answer[2] = {kMarkAnswer, tag};
      dev.send(answer, 2, ints, st.source, kTagMark, marks);
    }
  }
  if (err) return err;
  if (int e = a.error()) return e;
  *index = a.index();
  return 0;
}

int fail_create_group(Runtime& rt, const Comm& over, const Comm& marks, int failed) {
  Device& dev = rt.dev();
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  const int mine[2] = {kMarkFailed, 0};
  for (int m = 0; m < marks.size; ++m) {
    if (m != marks.rank) dev.send(mine, 2, ints, m, kTagMark, marks);
  }
  // One message from every other member: its answer, or its own mark.
  int tag = -1;
  for (int m = 0; m < marks.size; ++m) {
    int got[2] = {0, 0};
    if (m == marks.rank || dev.recv(got, 2, ints, m, kTagMark, marks, nullptr)) continue;
    if (got[0] == kMarkAnswer && got[1] >= 0 && got[1] <= kTagUb) tag = got[1];
  }
  uint32_t unused = 0;
  if (tag >= 0) agree_context(rt, over, tag, &unused, failed);
  return no_peer_waits(failed);
}

}  // namespace adi3::mpi
