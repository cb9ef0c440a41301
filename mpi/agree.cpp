#include "mpi/agree.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <utility>
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

// A member's answer to a bad group mark: the mark's number, the member's
// tag and group size, then the group (channel ranks, group order).
constexpr std::size_t kGroupHead = 3;

// Answers a bad group mark (kTagNoGroup, its number in *mark) from parent
// rank src when src is a member of this call's group.
int answer_no_group(Device& dev, const Comm& parent, const Comm& over, int tag, int src, int mark) {
  const int who = parent.to_peer(src);
  if (std::find(over.peers.begin(), over.peers.end(), who) == over.peers.end()) return 0;
  std::vector<int> answer{mark, tag, over.size};
  answer.insert(answer.end(), over.peers.begin(), over.peers.end());
  return dev.send(answer.data(), answer.size(), Datatype::builtin(Builtin::kInt), src, kTagGroupAnswer, parent);
}
}  // namespace

int agree_watching(Runtime& rt, const Comm& over, int tag, const Comm& marks, const Comm& parent, uint32_t* index,
                   int failed) {
  Device& dev = rt.dev();
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  int got[2] = {0, 0}, nog = 0;
  Request *mark = nullptr, *none = nullptr;
  if (int e = dev.irecv(got, 2, ints, kAnySource, kTagMark, marks, &mark)) return e;
  if (int e = dev.irecv(&nog, 1, ints, kAnySource, kTagNoGroup, parent, &none)) {
    dev.cancel(mark);
    dev.wait(&mark, nullptr);
    return e;
  }
  Agreement a(rt, over, tag, failed);
  int err = 0;
  while (!a.advance()) {
    if (!mark->complete() && !none->complete()) {
      err = dev.block_until([&] { return mark->complete() || none->complete() || a.landed(); });
      if (err) break;
      continue;
    }
    Status st;
    if (none->complete()) {
      dev.wait(&none, &st);
      err = answer_no_group(dev, parent, over, tag, st.source, nog);
      if (!err) err = dev.irecv(&nog, 1, ints, kAnySource, kTagNoGroup, parent, &none);
      if (err) break;
      continue;
    }
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
  if (none) {
    Status st;
    dev.cancel(none);
    dev.wait(&none, &st);
    if (!st.cancelled) answer_no_group(dev, parent, over, tag, st.source, nog);
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

bool arrived_by(Device& dev, Request** r, std::chrono::steady_clock::time_point deadline, Status* st) {
  for (int polls = 0;; ++polls) {
    bool done = false;
    if (dev.test(r, &done, st) == 0 && done) return true;
    if (!*r || std::chrono::steady_clock::now() > deadline) break;
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (*r) {
    dev.cancel(*r);
    dev.wait(r, nullptr);
  }
  return false;
}

int fail_no_group(Runtime& rt, const Comm& parent, uint32_t grouped_context, int failed) {
  Device& dev = rt.dev();
  const Datatype* ints = Datatype::builtin(Builtin::kInt);
  const int mark = static_cast<int>(rt.bad_group_calls.fetch_add(1, std::memory_order_relaxed) + 1);
  for (int p = 0; p < parent.size; ++p) {
    if (p != parent.rank) dev.send(&mark, 1, ints, p, kTagNoGroup, parent);
  }
  if (parent.size == 1) return failed;
  // Members of a later call holding this rank may answer too (they wait for
  // it there): the call is the (tag, group) all of whose other members
  // answered, which a later call's cannot be while one of its members waits
  // in this one. None within kNoGroupPatience: nobody waits for this rank.
  std::map<std::pair<int, std::vector<int>>, int> answers;  // (tag, group) -> members that answered
  std::vector<int> got(kGroupHead + static_cast<std::size_t>(dev.size()));
  Request* r = nullptr;
  Status st;
  const auto deadline = std::chrono::steady_clock::now() + kNoGroupPatience;
  while (!dev.irecv(got.data(), got.size(), ints, kAnySource, kTagGroupAnswer, parent, &r) &&
         arrived_by(dev, &r, deadline, &st)) {
    // Bytes from another process: a whole group of distinct ranks holding
    // this one and the answering one, and a valid tag (else skipped).
    const std::size_t n = st.bytes / sizeof(int);
    std::vector<int> ranks(got.begin() + static_cast<std::ptrdiff_t>(std::min(n, kGroupHead)),
                           got.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<int> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    const auto has = [&](int who) { return std::binary_search(sorted.begin(), sorted.end(), who); };
    if (n > kGroupHead && got[0] == mark && got[2] == static_cast<int>(ranks.size()) && got[1] >= 0 &&
        got[1] <= kTagUb && sorted.front() >= 0 && sorted.back() < dev.size() &&
        std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() && has(dev.rank()) &&
        has(parent.to_peer(st.source)) && ++answers[{got[1], ranks}] == got[2] - 1) {
      Comm over;
      over.context = grouped_context;
      over.rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), dev.rank()) - ranks.begin());
      over.size = got[2];
      over.peers = std::move(ranks);
      uint32_t unused = 0;
      agree_context(rt, over, got[1], &unused, failed);
      return no_peer_waits(failed);
    }
  }
  return failed;
}

}  // namespace adi3::mpi
