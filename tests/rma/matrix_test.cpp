// Every synchronization mode x every operation x contiguous and derived
// datatypes, on 1 to 4 ranks and on windows from create, allocate and
// create_dynamic. Each rank targets the next one; after each epoch every
// rank checks its own window (as the target of the previous rank: the
// operated elements and that nothing else changed) and its result buffer.
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::LockType;
using adi3::coll::Op;
using adi3::coll::OpKind;

enum class Mode { Fence, FenceAsserts, Pscw, LockExclusive, LockSharedFlush, LockAll };
enum class Kind { Put, Get, Acc, GetAcc, GetAccNoOp, Fop, Cas, Rput, Rget, Racc, RgetAcc };

const char* name(Mode m) {
  static const char* const k[] = {"fence", "fence+asserts", "pscw", "lock-exclusive", "lock-shared+flush", "lock_all"};
  return k[static_cast<int>(m)];
}
const char* name(Kind k) {
  static const char* const n[] = {
      "put", "get",  "accumulate", "get_accumulate", "get_accumulate(NO_OP)", "fetch_and_op",
      "cas", "rput", "rget",       "raccumulate",    "rget_accumulate"};
  return n[static_cast<int>(k)];
}
bool is_request(Kind k) { return k >= Kind::Rput; }
bool passive(Mode m) { return m >= Mode::LockExclusive; }

constexpr int kK = 8;      // elements per operation
constexpr int kFirst = 8;  // first target element

struct Case {
  Mode mode;
  Kind kind;
  bool derived;
};

void one(Device& dev, IntWin& w, const std::vector<std::ptrdiff_t>& bases, const Case& c) {
  const int n = dev.size(), me = dev.rank();
  const int t = (me + 1) % n, o = (me - 1 + n) % n;
  SCOPED_TRACE(std::string(name(c.mode)) + " " + name(c.kind) + (c.derived ? " derived" : " contiguous"));
  Window* win = w.win;
  w.reset();
  ASSERT_EQ(dev.barrier(), 0);

  Type ttype(c.derived ? vector_of_ints(kK, 1, 2) : nullptr);
  Type otype(c.derived ? contiguous_ints(kK) : nullptr);
  const adi3::Datatype* tt = c.derived ? static_cast<const adi3::Datatype*>(ttype) : int_t();
  const adi3::Datatype* ot = c.derived ? static_cast<const adi3::Datatype*>(otype) : int_t();
  const int64_t tn = c.derived ? 1 : kK, on = c.derived ? 1 : kK;
  auto pos = [&](int k) { return kFirst + (c.derived ? 2 * k : k); };
  auto value = [&](int origin, int k) { return 1000 * (origin + 1) + k; };
  std::vector<int> src(kK), res(kK, -1);
  for (int k = 0; k < kK; ++k) src[static_cast<std::size_t>(k)] = value(me, k);
  const std::ptrdiff_t disp = w.disp(kFirst, bases, t);
  const int cmp = 100 * t + kFirst;

  // Open the epoch.
  int e = 0;
  std::vector<int> to{t}, from{o};
  switch (c.mode) {
    case Mode::Fence:
      e = win->fence(0);
      break;
    case Mode::FenceAsserts:
      e = win->fence(adi3::kModeNoPrecede);
      break;
    case Mode::Pscw:
      e = win->post(from, 0);
      if (!e) e = win->start(to, 0);
      break;
    case Mode::LockExclusive:
      e = win->lock(LockType::Exclusive, t, 0);
      break;
    case Mode::LockSharedFlush:
      e = win->lock(LockType::Shared, t, 0);
      break;
    case Mode::LockAll:
      e = win->lock_all(0);
      break;
  }
  ASSERT_EQ(e, 0) << why(dev, e);

  const Op sum(OpKind::Sum), noop(OpKind::NoOp);
  adi3::Request* req = nullptr;
  switch (c.kind) {
    case Kind::Put:
      e = win->put(src.data(), on, ot, t, disp, tn, tt);
      break;
    case Kind::Get:
      e = win->get(res.data(), on, ot, t, disp, tn, tt);
      break;
    case Kind::Acc:
      e = win->accumulate(src.data(), on, ot, t, disp, tn, tt, sum);
      break;
    case Kind::GetAcc:
      e = win->get_accumulate(src.data(), on, ot, res.data(), on, ot, t, disp, tn, tt, sum);
      break;
    case Kind::GetAccNoOp:
      e = win->get_accumulate(nullptr, 0, ot, res.data(), on, ot, t, disp, tn, tt, noop);
      break;
    case Kind::Fop:
      e = win->fetch_and_op(src.data(), res.data(), int_t(), t, disp, sum);
      break;
    case Kind::Cas:
      e = win->compare_and_swap(src.data(), &cmp, res.data(), int_t(), t, disp);
      break;
    case Kind::Rput:
      e = win->rput(src.data(), on, ot, t, disp, tn, tt, &req);
      break;
    case Kind::Rget:
      e = win->rget(res.data(), on, ot, t, disp, tn, tt, &req);
      break;
    case Kind::Racc:
      e = win->raccumulate(src.data(), on, ot, t, disp, tn, tt, sum, &req);
      break;
    case Kind::RgetAcc:
      e = win->rget_accumulate(src.data(), on, ot, res.data(), on, ot, t, disp, tn, tt, sum, &req);
      break;
  }
  ASSERT_EQ(e, 0) << why(dev, e);
  if (req) {
    e = dev.wait(&req, nullptr);
    ASSERT_EQ(e, 0) << why(dev, e);
  }

  // Close it.
  switch (c.mode) {
    case Mode::Fence:
      e = win->fence(0);
      break;
    case Mode::FenceAsserts:
      e = win->fence(adi3::kModeNoSucceed | adi3::kModeNoStore);
      break;
    case Mode::Pscw:
      e = win->complete();
      if (!e) e = win->wait();
      break;
    case Mode::LockExclusive:
      e = win->unlock(t);
      break;
    case Mode::LockSharedFlush:
      e = win->flush(t);
      if (!e) e = win->unlock(t);
      break;
    case Mode::LockAll:
      e = win->flush_all();
      if (!e) e = win->flush_local_all();
      if (!e) e = win->unlock_all();
      break;
  }
  ASSERT_EQ(e, 0) << why(dev, e);
  ASSERT_EQ(dev.barrier(), 0);

  // As the target of o.
  std::vector<int> want(w.n);
  for (std::size_t j = 0; j < w.n; ++j) want[j] = static_cast<int>(100 * me + j);
  for (int k = 0; k < kK; ++k) {
    auto j = static_cast<std::size_t>(pos(k));
    switch (c.kind) {
      case Kind::Put:
      case Kind::Rput:
        want[j] = value(o, k);
        break;
      case Kind::Acc:
      case Kind::GetAcc:
      case Kind::Racc:
      case Kind::RgetAcc:
        want[j] += value(o, k);
        break;
      default:
        break;
    }
  }
  if (c.kind == Kind::Fop) want[kFirst] += value(o, 0);
  if (c.kind == Kind::Cas) want[kFirst] = value(o, 0);
  for (std::size_t j = 0; j < w.n; ++j) EXPECT_EQ(w.mem[j], want[j]) << "window element " << j << " of rank " << me;
  // As the origin.
  const bool fetched = c.kind == Kind::Get || c.kind == Kind::GetAcc || c.kind == Kind::GetAccNoOp ||
                       c.kind == Kind::Rget || c.kind == Kind::RgetAcc;
  if (fetched) {
    for (int k = 0; k < kK; ++k) EXPECT_EQ(res[static_cast<std::size_t>(k)], 100 * t + pos(k)) << "result " << k;
  }
  if (c.kind == Kind::Fop || c.kind == Kind::Cas) {
    EXPECT_EQ(res[0], cmp);
    for (int k = 1; k < kK; ++k) EXPECT_EQ(res[static_cast<std::size_t>(k)], -1);
  }
  ASSERT_EQ(dev.barrier(), 0);
}

void matrix(Device& dev, Flavor flavor) {
  IntWin w(dev, 32, flavor);
  ASSERT_NE(w.win, nullptr);
  auto bases = exchange_bases(dev, w);
  for (int m = 0; m <= static_cast<int>(Mode::LockAll); ++m) {
    for (int k = 0; k <= static_cast<int>(Kind::RgetAcc); ++k) {
      for (bool derived : {false, true}) {
        Case c{static_cast<Mode>(m), static_cast<Kind>(k), derived};
        if (is_request(c.kind) && !passive(c.mode)) continue;  // MPI: request ops need a lock epoch
        // Single-element atomics have no derived form.
        if ((c.kind == Kind::Fop || c.kind == Kind::Cas) && derived) continue;
        core_test::step(name(c.kind));
        one(dev, w, bases, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

class RmaMatrix : public core_test::CoreTest {};

#define RMA_MATRIX(flavor, n)                                 \
  TEST_P(RmaMatrix, flavor##Np##n) {                          \
    run(n, [](Device& dev) { matrix(dev, Flavor::flavor); }); \
  }
RMA_MATRIX(Allocate, 1)
RMA_MATRIX(Allocate, 2)
RMA_MATRIX(Allocate, 3)
RMA_MATRIX(Allocate, 4)
// The other flavors differ only in how memory and displacements are found.
RMA_MATRIX(Create, 2)
RMA_MATRIX(Create, 3)
RMA_MATRIX(Dynamic, 1)
RMA_MATRIX(Dynamic, 2)

INSTANTIATE_TEST_SUITE_P(Rma, RmaMatrix, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
