// Misuse: every error the window API reports, checked by class, and that
// nothing outside the window (nor inside it) changed. Includes a hostile
// packet crafted by hand, which the target must refuse.
#include <cstring>

#include "adi3/device.hpp"
#include "rma/hub.hpp"
#include "rma/protocol.hpp"
#include "rma/window_state.hpp"
#include "tests/rma/rma_harness.hpp"

namespace {

using namespace rma_test;
using adi3::ErrorClass;
using adi3::LockType;
using adi3::coll::Op;
using adi3::coll::OpKind;

class RmaErrors : public core_test::CoreTest {};

::testing::AssertionResult is_class(Device& dev, int code, ErrorClass want) {
  if (code && adi3::error_class_of(code) == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got "
                                       << (code ? adi3::error_class_name(adi3::error_class_of(code)) : "success")
                                       << " (" << why(dev, code) << "), want " << adi3::error_class_name(want);
}

// A window of 16 ints with guard memory on both sides of it.
struct Guarded {
  std::vector<int> mem = std::vector<int>(48, 0);
  int* win_mem() { return mem.data() + 16; }
  void fill(int rank) {
    for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = rank * 1000 + static_cast<int>(i);
  }
  ::testing::AssertionResult unchanged(int rank) const {
    for (std::size_t i = 0; i < mem.size(); ++i) {
      if (mem[i] != rank * 1000 + static_cast<int>(i)) {
        return ::testing::AssertionFailure() << "element " << static_cast<long>(i) - 16 << " changed to " << mem[i];
      }
    }
    return ::testing::AssertionSuccess();
  }
};

// A window over g's 16 ints (filled with this rank's pattern), created by
// every rank, which have all entered it; nullptr if it could not be made.
Window* guarded_window(Device& dev, Guarded& g) {
  g.fill(dev.rank());
  Window* w = nullptr;
  const int e = Window::create(dev, g.win_mem(), 16 * sizeof(int), sizeof(int), {}, win_comm(dev), &w);
  EXPECT_EQ(e, 0) << why(dev, e);
  EXPECT_EQ(dev.barrier(), 0);
  return e ? nullptr : w;
}

TEST_P(RmaErrors, OriginChecksNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), t = 1 - me;
    Guarded g;
    g.fill(me);
    Window* w = nullptr;
    ASSERT_EQ(Window::create(dev, g.win_mem(), 16 * sizeof(int), sizeof(int), {}, win_comm(dev), &w), 0);
    int buf[32] = {};
    const auto* i32 = int_t();
    const auto* dbl = dt(adi3::Builtin::kDouble);
    // No epoch.
    EXPECT_TRUE(is_class(dev, w->put(buf, 1, i32, t, 0, 1, i32), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->flush(t), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->unlock(t), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->complete(), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->wait(), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->unlock_all(), ErrorClass::RmaSync));
    adi3::Request* r = nullptr;
    ASSERT_EQ(w->fence(0), 0);
    // Request-based operations need a lock epoch.
    EXPECT_TRUE(is_class(dev, w->rput(buf, 1, i32, t, 0, 1, i32, &r), ErrorClass::RmaSync));
    EXPECT_EQ(r, nullptr);
    // Range: past the end, negative, straddling, and a strided type too long.
    EXPECT_TRUE(is_class(dev, w->put(buf, 1, i32, t, 16, 1, i32), ErrorClass::RmaRange));
    EXPECT_TRUE(is_class(dev, w->put(buf, 1, i32, t, -1, 1, i32), ErrorClass::RmaRange));
    EXPECT_TRUE(is_class(dev, w->get(buf, 4, i32, t, 14, 4, i32), ErrorClass::RmaRange));
    Type strided(vector_of_ints(9, 1, 2));  // spans 17 ints
    EXPECT_TRUE(is_class(dev, w->put(buf, 9, i32, t, 0, 1, strided), ErrorClass::RmaRange));
    int code = w->put(buf, 1, i32, t, 20, 1, i32);
    EXPECT_NE(why(dev, code).find("rank " + std::to_string(t)), std::string::npos) << why(dev, code);
    EXPECT_NE(why(dev, code).find("64 bytes"), std::string::npos) << why(dev, code);
    // Types and counts.
    EXPECT_TRUE(is_class(dev, w->put(buf, 2, i32, t, 0, 1, i32), ErrorClass::Type));
    EXPECT_TRUE(is_class(dev, w->put(buf, 1, nullptr, t, 0, 1, i32), ErrorClass::Type));
    EXPECT_TRUE(is_class(dev, w->put(buf, -1, i32, t, 0, 1, i32), ErrorClass::Count));
    EXPECT_TRUE(is_class(dev, w->put(buf, 1, i32, 7, 0, 1, i32), ErrorClass::Rank));
    adi3::Datatype* uncommitted = nullptr;
    ASSERT_EQ(adi3::type_contiguous(2, i32, &uncommitted), ErrorClass::Success);
    EXPECT_TRUE(is_class(dev, w->put(buf, 1, uncommitted, t, 0, 1, uncommitted), ErrorClass::Type));
    (void)adi3::type_free(&uncommitted);
    // Accumulates: user ops, NO_OP in accumulate, mismatched elements,
    // an op the type does not take, compare_and_swap on a float.
    Op user = Op::user([](const void*, void*, int, const adi3::Datatype*) {}, true);
    EXPECT_TRUE(is_class(dev, w->accumulate(buf, 1, i32, t, 0, 1, i32, user), ErrorClass::Op));
    EXPECT_TRUE(is_class(dev, w->accumulate(buf, 1, i32, t, 0, 1, i32, Op(OpKind::NoOp)), ErrorClass::Op));
    EXPECT_TRUE(is_class(dev, w->accumulate(buf, 1, dt(adi3::Builtin::kFloat), t, 0, 1, i32, Op(OpKind::Sum)),
                         ErrorClass::Type));
    EXPECT_TRUE(is_class(dev, w->accumulate(buf, 1, dbl, t, 0, 1, dbl, Op(OpKind::Band)), ErrorClass::Op));
    double d = 1, dc = 1, dr = 0;
    EXPECT_TRUE(is_class(dev, w->compare_and_swap(&d, &dc, &dr, dbl, t, 0), ErrorClass::Type));
    Type two(contiguous_ints(2));
    EXPECT_TRUE(is_class(dev, w->fetch_and_op(buf, buf + 4, two, t, 0, Op(OpKind::Sum)), ErrorClass::Type));
    // NOPRECEDE with operations before it.
    ASSERT_EQ(w->put(buf, 1, i32, t, 0, 1, i32), 0);
    EXPECT_TRUE(is_class(dev, w->fence(adi3::kModeNoPrecede), ErrorClass::RmaSync));
    // Locks inside a fence epoch with operations, bad assertions and lock types.
    EXPECT_TRUE(is_class(dev, w->lock(LockType::Shared, t, 0), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->fence(adi3::kModeNoCheck), ErrorClass::Assert));
    EXPECT_TRUE(is_class(dev, w->lock(static_cast<LockType>(5), t, 0), ErrorClass::Locktype));
    ASSERT_EQ(w->fence(adi3::kModeNoSucceed), 0);
    // Lock conflicts the standard forbids.
    ASSERT_EQ(w->lock(LockType::Shared, t, 0), 0);
    EXPECT_TRUE(is_class(dev, w->lock(LockType::Exclusive, t, 0), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->lock_all(0), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->fence(0), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w->start(std::vector<int>{t}, 0), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, Window::free(&w), ErrorClass::RmaSync));
    ASSERT_NE(w, nullptr);
    ASSERT_EQ(w->unlock(t), 0);
    // Groups.
    EXPECT_TRUE(is_class(dev, w->post(std::vector<int>{t, t}, 0), ErrorClass::Group));
    EXPECT_TRUE(is_class(dev, w->start(std::vector<int>{5}, 0), ErrorClass::Group));
    // Attach on a window that is not dynamic.
    EXPECT_TRUE(is_class(dev, w->attach(buf, 4), ErrorClass::RmaFlavor));
    ASSERT_EQ(dev.barrier(), 0);
    ASSERT_EQ(Window::free(&w), 0);
    // Creation arguments.
    EXPECT_TRUE(is_class(dev, Window::create(dev, buf, -4, 4, {}, win_comm(dev), &w), ErrorClass::Size));
    EXPECT_TRUE(is_class(dev, Window::create(dev, buf, 4, 0, {}, win_comm(dev), &w), ErrorClass::Disp));
    // Only the one legal put (element 0, value 0) touched anything.
    EXPECT_EQ(g.win_mem()[0], 0);
    g.win_mem()[0] = me * 1000 + 16;
    EXPECT_TRUE(g.unchanged(me));
  });
}

// A target type nested deeper than a description may be (17 contiguous
// layers over a strided pair of ints): the emulation cannot send it and
// refuses it at the call (ERR_TYPE, nothing sent); a path that never sends
// it (native) puts. Each rank reads its put's target back.
// 17 contiguous layers over pair, committed (freed with the object).
struct Tower {
  std::vector<adi3::Datatype*> layers;
  explicit Tower(const adi3::Datatype* pair) {
    const adi3::Datatype* inner = pair;
    for (int i = 0; i < 17; ++i) {
      adi3::Datatype* d = nullptr;
      EXPECT_EQ(adi3::type_contiguous(1, inner, &d), ErrorClass::Success);
      if (!d) return;
      layers.push_back(d);
      inner = d;
    }
    EXPECT_EQ(adi3::type_commit(layers.back()), ErrorClass::Success);
  }
  ~Tower() {
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) (void)adi3::type_free(&*it);
  }
  const adi3::Datatype* top() const { return layers.back(); }
};

TEST_P(RmaErrors, UndescribableTargetTypeNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), t = 1 - me;
    IntWin w(dev, 4, Flavor::Allocate);
    Type pair(vector_of_ints(2, 1, 2));  // ints 0 and 2
    Tower tower(pair);
    ASSERT_EQ(tower.layers.size(), 17u);
    ASSERT_EQ(dev.barrier(), 0);  // both windows filled (IntWin) before any put
    int v[2] = {7 + me, 9 + me};
    ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
    const int code = w.win->put(v, 2, int_t(), t, 1, 1, tower.top());
    if (code) {
      EXPECT_TRUE(is_class(dev, code, ErrorClass::Type));
      EXPECT_NE(why(dev, code).find("cannot travel"), std::string::npos) << why(dev, code);
    }
    if (!w.win->state().native_usable) {
      EXPECT_NE(code, 0) << "the emulation sent an undescribable type";
    }
    ASSERT_EQ(w.win->unlock(t), 0);
    int back[4] = {-1, -1, -1, -1};
    ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
    ASSERT_EQ(w.win->get(back, 4, int_t(), t, 0, 4, int_t()), 0);
    ASSERT_EQ(w.win->unlock(t), 0);
    EXPECT_EQ(back[0], 100 * t);
    EXPECT_EQ(back[1], code ? 100 * t + 1 : 7 + me);
    EXPECT_EQ(back[2], 100 * t + 2);
    EXPECT_EQ(back[3], code ? 100 * t + 3 : 9 + me);
    ASSERT_EQ(dev.barrier(), 0);
  });
}

// The same refusal in a fence epoch issues nothing: a fence asserting
// MPI_MODE_NOPRECEDE may follow it (a count bumped before the refusal made
// that fence fail with ERR_RMA_SYNC).
TEST_P(RmaErrors, RefusedTypeIsNoFenceOperationNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), t = 1 - me;
    IntWin w(dev, 4, Flavor::Create);
    Type pair(vector_of_ints(2, 1, 2));
    Tower tower(pair);
    ASSERT_EQ(tower.layers.size(), 17u);
    ASSERT_EQ(w.win->fence(0), 0);
    int v[2] = {7 + me, 9 + me};
    const int code = w.win->put(v, 2, int_t(), t, 1, 1, tower.top());
    if (!w.win->state().native_usable) {
      EXPECT_TRUE(is_class(dev, code, ErrorClass::Type));
    }
    EXPECT_EQ(w.win->fence(code ? adi3::kModeNoPrecede : 0), 0);
    EXPECT_EQ(w.win->fence(adi3::kModeNoSucceed), 0);
  });
}

// no_locks windows refuse passive target.
TEST_P(RmaErrors, NoLocksNp2) {
  run(2, [](Device& dev) {
    adi3::WinInfo info;
    info.no_locks = true;
    IntWin w(dev, 4, Flavor::Allocate, info);
    EXPECT_TRUE(is_class(dev, w.win->lock(LockType::Shared, 0, 0), ErrorClass::RmaSync));
    EXPECT_TRUE(is_class(dev, w.win->lock_all(0), ErrorClass::RmaSync));
    EXPECT_FALSE(w.win->passive_progress());
    ASSERT_EQ(dev.barrier(), 0);
  });
}

// Dynamic windows: attach overlap and detach of unknown memory are refused
// at the origin; an access to memory the target never attached is refused
// by the target, reported at the origin's unlock, and changes nothing.
TEST_P(RmaErrors, DynamicTargetRefusesNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), t = 1 - me;
    Guarded g;
    g.fill(me);
    IntWin w(dev, 8, Flavor::Dynamic);
    EXPECT_TRUE(is_class(dev, w.win->attach(w.mem + 2, 4), ErrorClass::RmaAttach));
    EXPECT_TRUE(is_class(dev, w.win->detach(g.win_mem()), ErrorClass::RmaAttach));
    auto bases = exchange_bases(dev, w);
    ASSERT_EQ(dev.barrier(), 0);
    int v[4] = {1, 2, 3, 4};
    ASSERT_EQ(w.win->lock(LockType::Exclusive, t, 0), 0);
    // Past the attached region's end.
    ASSERT_EQ(w.win->put(v, 4, int_t(), t, bases[static_cast<std::size_t>(t)] + 6 * sizeof(int), 4, int_t()), 0);
    EXPECT_TRUE(is_class(dev, w.win->unlock(t), ErrorClass::RmaRange));
    // A get of unattached memory completes (with the error) instead of hanging.
    int back[4] = {-1, -1, -1, -1};
    ASSERT_EQ(w.win->lock(LockType::Shared, t, 0), 0);
    ASSERT_EQ(w.win->get(back, 4, int_t(), t, bases[static_cast<std::size_t>(t)] - 64, 4, int_t()), 0);
    EXPECT_TRUE(is_class(dev, w.win->unlock(t), ErrorClass::RmaRange));
    EXPECT_EQ(back[0], -1);
    ASSERT_EQ(dev.barrier(), 0);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(w.mem[i], static_cast<int>(100 * me + i)) << i;
    EXPECT_TRUE(g.unchanged(me));
  });
}

// A packet crafted by hand (as a corrupt or hostile peer would send it):
// out of range, wrong window generation, bad type id, a chunk that
// overflows its stream, a bad datatype description, operations that fetch
// with bad sizes, ops or ranges, descriptions in parts out of order. The target refuses
// each, reports it to the sender, and its memory is unchanged.
TEST_P(RmaErrors, HostilePacketsRefusedNp2) {
  run(2, [](Device& dev) {
    const int me = dev.rank(), t = 1 - me;
    Guarded g;
    Window* w = guarded_window(dev, g);
    ASSERT_NE(w, nullptr);
    if (me == 0) {
      const adi3::rma::PeerWin p = w->state().peers[static_cast<std::size_t>(t)];
      auto send = [&](adi3::rma::Header h, const void* data, std::size_t n) {
        h.id = p.pkt;
        if (h.win == 0 && h.gen == 0) {
          h.win = p.win;
          h.gen = p.gen;
        }
        int e = dev.port().send_packet(p.peer, &h, sizeof h, adi3::Payload{data, n, nullptr, 0});
        ASSERT_EQ(e, 0) << why(dev, e);
      };
      int data[8] = {9, 9, 9, 9, 9, 9, 9, 9};
      adi3::rma::Header h{};
      h.kind = adi3::rma::Msg::Put;
      h.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      // 1. past the end of the window
      h.disp = 60;
      h.count = 2;
      h.total = 8;
      h.len = 8;
      send(h, data, 8);
      // 2. a huge displacement that wraps around
      h.disp = ~uint64_t{0} - 3;
      send(h, data, 8);
      // 3. chunk beyond the stream it claims
      h.disp = 0;
      h.first = 4;
      send(h, data, 8);
      // 4. bad predefined type id
      h.first = 0;
      h.elem = 200;
      send(h, data, 8);
      // 5. garbage datatype description, then a put using it
      adi3::rma::Header d{};
      d.kind = adi3::rma::Msg::TypeDesc;
      unsigned char junk[5] = {1, 0xff, 0xff, 0xff, 0x7f};
      send(d, junk, sizeof junk);
      h.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      h.flags = adi3::rma::kUseDesc;
      send(h, data, 8);
      // 6. accumulate with an op the type does not take, and a split element
      h.flags = 0;
      h.kind = adi3::rma::Msg::Acc;
      h.elem = static_cast<uint8_t>(adi3::Builtin::kDouble);
      h.op = static_cast<uint8_t>(OpKind::Band);
      h.count = 1;
      send(h, data, 8);
      h.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      h.op = static_cast<uint8_t>(OpKind::Sum);
      h.count = 2;
      h.len = 6;
      send(h, data, 6);
      // 7. a stale window generation (lands nowhere)
      h.win = p.win;
      h.gen = p.gen + 7;
      h.len = 8;
      send(h, data, 8);
      // 8. batches of puts: a record past the end, a count its bytes cannot
      //    hold, a record longer than the bytes after it, a bad type id
      struct {
        adi3::rma::BatchRec r;
        int d[2];
      } rec{};
      rec.r.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      rec.r.len = 8;
      rec.r.disp = 60;
      rec.d[0] = rec.d[1] = 9;
      adi3::rma::Header b{};
      b.kind = adi3::rma::Msg::Batch;
      b.count = 1;
      b.len = b.total = sizeof rec;
      send(b, &rec, sizeof rec);
      b.count = 5;
      send(b, &rec, sizeof rec);
      b.count = 1;
      rec.r.disp = 0;
      rec.r.len = 64;
      send(b, &rec, sizeof rec);
      rec.r.len = 8;
      rec.r.elem = 200;
      send(b, &rec, sizeof rec);
      // a get past the end, a record of no known kind
      rec.r.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      rec.r.kind = adi3::rma::kBatchGet;
      rec.r.disp = 60;
      send(b, &rec, sizeof rec);
      rec.r.kind = 7;
      rec.r.disp = 0;
      send(b, &rec, sizeof rec);
      // 9. operations that fetch (the target's short paths for them): a
      //    get past the end, a fetch_and_op of two elements, one whose op
      //    the type does not take, a compare_and_swap without its compare
      //    operand, a get_accumulate past the end and one of a bad type id
      adi3::rma::Header f{};
      f.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      f.token = 99;
      f.kind = adi3::rma::Msg::Get;
      f.disp = 60;
      f.count = 2;
      f.total = 8;
      send(f, nullptr, 0);
      f.kind = adi3::rma::Msg::Fop;
      f.op = static_cast<uint8_t>(OpKind::Sum);
      f.disp = 0;
      f.len = 8;
      send(f, data, 8);
      f.count = 1;
      f.total = f.len = 4;
      f.elem = static_cast<uint8_t>(adi3::Builtin::kFloat);
      f.op = static_cast<uint8_t>(OpKind::Bor);
      send(f, data, 4);
      f.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      f.kind = adi3::rma::Msg::Cas;
      f.op = static_cast<uint8_t>(OpKind::Replace);
      send(f, data, 4);
      f.kind = adi3::rma::Msg::GetAcc;
      f.op = static_cast<uint8_t>(OpKind::Sum);
      f.disp = 62;
      send(f, data, 4);
      f.disp = 0;
      f.elem = 200;
      send(f, data, 4);
      // 10. the shortened headers (rma/protocol.hpp), whose lengths the
      //     target derives from the element type and count: a one-element
      //     put of a bad type id, a counted get whose count overflows the
      //     stream, a one-element compare_and_swap past the end
      auto send_short = [&](adi3::rma::Header s, std::size_t hb, const void* d, std::size_t n) {
        s.id = p.pkt;
        s.win = p.win;
        s.gen = p.gen;
        int e = dev.port().send_packet(p.peer, &s, hb, adi3::Payload{d, n, nullptr, 0});
        ASSERT_EQ(e, 0) << why(dev, e);
      };
      adi3::rma::Header o{};
      o.kind = adi3::rma::Msg::Put;
      o.elem = 200;
      send_short(o, adi3::rma::kOneHeader, data, 4);
      o.kind = adi3::rma::Msg::Get;
      o.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      o.token = 99;
      o.flags = adi3::rma::kCounted;
      o.count = ~uint64_t{0} / 2;
      send_short(o, adi3::rma::kShortHeader, nullptr, 0);
      o.kind = adi3::rma::Msg::Cas;
      o.flags = 0;
      o.disp = 62;
      send_short(o, adi3::rma::kOneHeader, data, 8);
      // 11. operations whose data follows as a message (emul/rndv.cpp): a
      //     put past the end (a receive drains its message, which never
      //     comes: free cancels it), a get past the end, an accumulate
      //     (which never travels so)
      adi3::rma::Header m{};
      m.kind = adi3::rma::Msg::Put;
      m.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
      m.flags = adi3::rma::kRndv;
      m.disp = 60;
      m.count = 1 << 16;
      m.total = 4 << 16;
      send(m, nullptr, 0);
      m.kind = adi3::rma::Msg::Get;
      m.token = 98;
      send(m, nullptr, 0);
      m.kind = adi3::rma::Msg::Acc;
      m.op = static_cast<uint8_t>(OpKind::Sum);
      m.disp = 0;
      m.count = 2;
      m.total = 8;
      send(m, nullptr, 0);
      // 12. datatype descriptions in several parts (emul/origin.cpp
      //     send_desc): a part that does not start where the gathered ones
      //     end, a total over the limit, a part longer than its total, a
      //     good first part then one out of order; each time a put that
      //     uses the description, refused with it
      adi3::rma::Header q{};
      q.kind = adi3::rma::Msg::TypeDesc;
      unsigned char part[16] = {1, 0, 0, 0, 0};
      auto desc_part = [&](uint64_t first, uint64_t len, uint64_t total) {
        q.first = first;
        q.len = len;
        q.total = total;
        send(q, part, len);
        send(h, data, 8);
      };
      h.flags = adi3::rma::kUseDesc;
      h.kind = adi3::rma::Msg::Put;
      h.win = h.gen = 0;  // (the window's own again)
      h.op = 0;
      h.first = 0;
      h.count = 2;
      h.total = h.len = 8;
      desc_part(8, 8, 64);
      desc_part(0, 8, uint64_t{1} << 40);
      desc_part(0, 16, 8);
      desc_part(0, 8, 64);
      desc_part(4, 8, 64);
      // The refusals come back as errors; wait for them.
      int got = 0;
      for (int i = 0; i < 1000000 && !got; ++i) {
        dev.progress();
        std::lock_guard lk(w->state().mu);
        got = w->state().deferred_error;
      }
      EXPECT_NE(got, 0) << "no refusal came back";
    }
    ASSERT_EQ(dev.barrier(), 0);
    EXPECT_TRUE(g.unchanged(me));
    // Refusals still on their way are reported by free (and the window goes).
    int e = Window::free(&w);
    if (me == 1) {
      EXPECT_EQ(e, 0) << why(dev, e);
    }
    EXPECT_EQ(w, nullptr);
  });
}

// Puts to rank t sent by hand with the short header (rma::kShortHeader
// bytes, rma/protocol.hpp): two ints at 2 that land (their lengths are the
// payload's), one int at 7 with the one-element header (rma::kOneHeader
// bytes: count 1, lengths the int's), which lands, one int at 5 with a
// header of 48 bytes, which is refused, then a put at 15 the usual way and
// a flush, which ends after the target handled the first three (one order
// per peer).
void send_short_puts(Device& dev, Window& w, int t) {
  const adi3::rma::PeerWin p = w.state().peers[static_cast<std::size_t>(t)];
  ASSERT_EQ(w.lock(LockType::Exclusive, t, 0), 0);
  int two[2] = {77, 78}, one = 66, odd = 55, last = 99;
  adi3::rma::Header h{};
  h.id = p.pkt;
  h.win = p.win;
  h.gen = p.gen;
  h.kind = adi3::rma::Msg::Put;
  h.elem = static_cast<uint8_t>(adi3::Builtin::kInt);
  h.count = 2;
  h.disp = 2 * sizeof(int);
  ASSERT_EQ(adi3::rma::header_bytes(h, sizeof two), sizeof h);  // total and len not the payload's yet
  h.total = h.len = sizeof two;
  ASSERT_EQ(adi3::rma::header_bytes(h, sizeof two), adi3::rma::kShortHeader);
  int e = dev.port().send_packet(p.peer, &h, adi3::rma::kShortHeader, adi3::Payload{two, sizeof two, nullptr, 0});
  ASSERT_EQ(e, 0) << why(dev, e);
  h.count = 1;
  h.disp = 7 * sizeof(int);
  h.total = h.len = 0;  // not sent: the receiver takes them from the element type
  e = dev.port().send_packet(p.peer, &h, adi3::rma::kOneHeader, adi3::Payload{&one, sizeof one, nullptr, 0});
  ASSERT_EQ(e, 0) << why(dev, e);
  h.disp = 5 * sizeof(int);
  h.total = h.len = sizeof odd;
  e = dev.port().send_packet(p.peer, &h, adi3::rma::kShortHeader + 8, adi3::Payload{&odd, sizeof odd, nullptr, 0});
  ASSERT_EQ(e, 0) << why(dev, e);
  ASSERT_EQ(w.put(&last, 1, int_t(), t, 15, 1, int_t()), 0);
  ASSERT_EQ(w.flush(t), 0);
  ASSERT_EQ(w.unlock(t), 0);
}

TEST_P(RmaErrors, ShortHeaderPacketsNp2) {
  run(2, [](Device& dev) {
    Guarded g;
    Window* w = guarded_window(dev, g);
    ASSERT_NE(w, nullptr);
    if (dev.rank() == 0) send_short_puts(dev, *w, 1);
    ASSERT_EQ(dev.barrier(), 0);
    if (dev.rank() == 1) {
      EXPECT_EQ(g.win_mem()[2], 77);
      EXPECT_EQ(g.win_mem()[3], 78);
      EXPECT_EQ(g.win_mem()[7], 66);
      EXPECT_EQ(g.win_mem()[5], 1000 + 16 + 5) << "a packet of 48 header bytes was applied";
      EXPECT_EQ(g.win_mem()[15], 99);
    } else {
      EXPECT_TRUE(g.unchanged(0));
    }
    ASSERT_EQ(Window::free(&w), 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Rma, RmaErrors, ::testing::ValuesIn(core_test::setups()), core_test::SetupName());

}  // namespace
