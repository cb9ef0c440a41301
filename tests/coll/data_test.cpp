// Data-movement collectives (bcast, gather(v), scatter(v), allgather(v),
// alltoall(v,w)) against serial references: every rank count, sizes from
// 0 to beyond the long-message thresholds, every algorithm, contiguous,
// shifted (true_lb > 0) and strided types, and send/receive types that
// differ but carry the same signature.
#include <algorithm>

#include "tests/coll/harness.hpp"

namespace adi3::coll::test {
namespace {

// Three layouts of one "unit" of two ints.
struct Shapes {
  Type vec{vector_of(B(Builtin::kInt), 2, 1, 3)};
  Type shift{shifted_of(B(Builtin::kInt), 2)};
  // (type, elements per unit)
  std::pair<const Datatype*, std::size_t> get(int k) const {
    switch (k % 3) {
      case 0:
        return {B(Builtin::kInt), 2};
      case 1:
        return {vec.get(), 1};
      default:
        return {shift.get(), 1};
    }
  }
};
constexpr std::size_t kUnit = 2 * sizeof(int);

std::vector<std::size_t> unit_counts() { return {0, 1, 7, 300, 3000}; }

Tuning with_bcast(BcastAlgo a) {
  Tuning t;
  t.bcast = a;
  return t;
}
Tuning with_allgather(AllgatherAlgo a) {
  Tuning t;
  t.allgather = a;
  return t;
}
Tuning with_alltoall(AlltoallAlgo a, int throttle = 32) {
  Tuning t;
  t.alltoall = a;
  t.alltoall_throttle = throttle;
  return t;
}

class Data : public ::testing::TestWithParam<int> {
 protected:
  Shapes shapes;
};

TEST_P(Data, Bcast) {
  int n = GetParam();
  std::vector<Tuning> tunings{Tuning{}, with_bcast(BcastAlgo::Binomial), with_bcast(BcastAlgo::ScatterDoubling),
                              with_bcast(BcastAlgo::ScatterRing)};
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    std::vector<std::size_t> units = unit_counts();
    units.push_back(70000);  // 560 KB: the default picks scatter + ring
    int salt = 0;
    for (std::size_t u : units) {
      for (std::size_t ti = 0; ti < tunings.size(); ++ti) {
        if (u == 70000 && ti > 0) continue;
        for (int root : {0, n - 1, n / 2}) {
          auto [type, per] = shapes.get(me + root + static_cast<int>(ti));
          Typed buf(type, u * per), want(type, u * per);
          auto data = noise(u * kUnit, root, ++salt);
          want.set(data);
          if (me == root) buf.set(data);
          ASSERT_EQ(bcast(dev, buf.ptr(), u * per, type, root, c, &tunings[ti]), 0);
          expect_same(
              buf.raw(), want.raw(),
              where("bcast", n, me,
                    "units=" + std::to_string(u) + " algo=" + std::to_string(ti) + " root=" + std::to_string(root)));
        }
      }
    }
  });
}

TEST_P(Data, GatherScatter) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    int salt = 100;
    for (std::size_t u : unit_counts()) {
      for (int root : {0, n - 1, n / 2}) {
        for (bool inplace : {false, true}) {
          ++salt;
          auto [st, sp] = shapes.get(me);
          auto [rt, rp] = shapes.get(root + 1);
          std::string what =
              "units=" + std::to_string(u) + " root=" + std::to_string(root) + (inplace ? " in-place" : "");
          // Gather: rank i contributes noise(i).
          Typed mine(st, u * sp), all(rt, u * rp * static_cast<std::size_t>(n)),
              want(rt, u * rp * static_cast<std::size_t>(n));
          mine.set(noise(u * kUnit, me, salt));
          std::vector<std::byte> cat;
          for (int i = 0; i < n; ++i) {
            auto d = noise(u * kUnit, i, salt);
            cat.insert(cat.end(), d.begin(), d.end());
          }
          want.set(cat);
          const void* sb = mine.ptr();
          if (me == root && inplace) {
            unpack(noise(u * kUnit, me, salt).data(), all.elem(static_cast<std::size_t>(me) * u * rp), u * rp, rt);
            sb = kInPlace;
          }
          ASSERT_EQ(gather(dev, sb, u * sp, st, all.ptr(), u * rp, rt, root, c), 0);
          if (me == root) expect_same(all.raw(), want.raw(), where("gather", n, me, what));
          // Scatter: the root's concatenation comes back in pieces.
          Typed piece(st, u * sp), piece_want(st, u * sp);
          piece_want.set(noise(u * kUnit, me, salt));
          void* rb = piece.ptr();
          if (me == root && inplace) rb = kInPlace;
          ASSERT_EQ(scatter(dev, want.ptr(), u * rp, rt, rb, u * sp, st, root, c), 0);
          if (rb != kInPlace) expect_same(piece.raw(), piece_want.raw(), where("scatter", n, me, what));
        }
      }
    }
  });
}

// Gatherv/scatterv/allgatherv layout: blocks in reverse rank order with a
// one-element gap, sizes varying (some empty).
struct VLayout {
  std::vector<int> counts, displs;
  std::size_t span = 0;
  VLayout(int n, std::size_t per, std::uint64_t salt) {
    counts.resize(static_cast<std::size_t>(n));
    displs.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) counts[static_cast<std::size_t>(i)] = static_cast<int>((key(salt, i) % 5) * 37 * per);
    int at = 0;
    for (int i = n - 1; i >= 0; --i) {
      displs[static_cast<std::size_t>(i)] = at;
      at += counts[static_cast<std::size_t>(i)] + 1;
    }
    span = static_cast<std::size_t>(at);
  }
};

TEST_P(Data, GathervScattervAllgatherv) {
  int n = GetParam();
  std::vector<Tuning> tunings{Tuning{}, with_allgather(AllgatherAlgo::RecursiveDoubling),
                              with_allgather(AllgatherAlgo::Bruck), with_allgather(AllgatherAlgo::Ring)};
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    for (int salt = 1; salt <= 4; ++salt) {
      for (int root : {0, n - 1}) {
        auto [st, sp] = shapes.get(me + salt);
        auto [rt, rp] = shapes.get(root + salt + 1);
        VLayout v(n, rp, static_cast<std::uint64_t>(salt));
        auto units = [&](int i) { return static_cast<std::size_t>(v.counts[static_cast<std::size_t>(i)]) / rp; };
        Typed mine(st, units(me) * sp), all(rt, v.span), want(rt, v.span);
        mine.set(noise(units(me) * kUnit, me, salt));
        for (int i = 0; i < n; ++i) {
          unpack(noise(units(i) * kUnit, i, salt).data(),
                 want.elem(static_cast<std::size_t>(v.displs[static_cast<std::size_t>(i)])),
                 static_cast<std::size_t>(v.counts[static_cast<std::size_t>(i)]), rt);
        }
        std::string what = "salt=" + std::to_string(salt) + " root=" + std::to_string(root);
        // The root works in place every other round.
        bool root_in_place = me == root && salt % 2 == 0;
        if (root_in_place) {
          unpack(noise(units(me) * kUnit, me, salt).data(),
                 all.elem(static_cast<std::size_t>(v.displs[static_cast<std::size_t>(me)])),
                 static_cast<std::size_t>(v.counts[static_cast<std::size_t>(me)]), rt);
        }
        ASSERT_EQ(gatherv(dev, root_in_place ? kInPlace : mine.ptr(), units(me) * sp, st, all.ptr(), v.counts.data(),
                          v.displs.data(), rt, root, c),
                  0);
        if (me == root) expect_same(all.raw(), want.raw(), where("gatherv", n, me, what));
        Typed piece(st, units(me) * sp);
        ASSERT_EQ(scatterv(dev, want.ptr(), v.counts.data(), v.displs.data(), rt,
                           root_in_place ? kInPlace : piece.ptr(), units(me) * sp, st, root, c),
                  0);
        if (!root_in_place) expect_same(piece.raw(), mine.raw(), where("scatterv", n, me, what));
        // Allgatherv with every algorithm, in place or not.
        for (std::size_t ti = 0; ti < tunings.size(); ++ti) {
          for (bool inplace : {false, true}) {
            Typed got(rt, v.span);
            if (inplace) {
              unpack(noise(units(me) * kUnit, me, salt).data(),
                     got.elem(static_cast<std::size_t>(v.displs[static_cast<std::size_t>(me)])),
                     static_cast<std::size_t>(v.counts[static_cast<std::size_t>(me)]), rt);
            }
            ASSERT_EQ(allgatherv(dev, inplace ? kInPlace : mine.ptr(), units(me) * sp, st, got.ptr(), v.counts.data(),
                                 v.displs.data(), rt, c, &tunings[ti]),
                      0);
            expect_same(
                got.raw(), want.raw(),
                where("allgatherv", n, me, what + " algo=" + std::to_string(ti) + (inplace ? " in-place" : "")));
          }
        }
      }
    }
  });
}

TEST_P(Data, Allgather) {
  int n = GetParam();
  std::vector<Tuning> tunings{Tuning{}, with_allgather(AllgatherAlgo::RecursiveDoubling),
                              with_allgather(AllgatherAlgo::Bruck), with_allgather(AllgatherAlgo::Ring)};
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    int salt = 500;
    for (std::size_t u : unit_counts()) {
      for (std::size_t ti = 0; ti < tunings.size(); ++ti) {
        for (bool inplace : {false, true}) {
          ++salt;
          auto [st, sp] = shapes.get(me + salt);
          auto [rt, rp] = shapes.get(salt);
          Typed mine(st, u * sp), got(rt, u * rp * static_cast<std::size_t>(n)),
              want(rt, u * rp * static_cast<std::size_t>(n));
          mine.set(noise(u * kUnit, me, salt));
          std::vector<std::byte> cat;
          for (int i = 0; i < n; ++i) {
            auto d = noise(u * kUnit, i, salt);
            cat.insert(cat.end(), d.begin(), d.end());
          }
          want.set(cat);
          if (inplace)
            unpack(noise(u * kUnit, me, salt).data(), got.elem(static_cast<std::size_t>(me) * u * rp), u * rp, rt);
          ASSERT_EQ(allgather(dev, inplace ? kInPlace : mine.ptr(), u * sp, st, got.ptr(), u * rp, rt, c, &tunings[ti]),
                    0);
          expect_same(
              got.raw(), want.raw(),
              where("allgather", n, me,
                    "units=" + std::to_string(u) + " algo=" + std::to_string(ti) + (inplace ? " in-place" : "")));
        }
      }
    }
  });
}

TEST_P(Data, Alltoall) {
  int n = GetParam();
  std::vector<Tuning> tunings{Tuning{}, with_alltoall(AlltoallAlgo::Bruck), with_alltoall(AlltoallAlgo::Scattered, 2),
                              with_alltoall(AlltoallAlgo::Pairwise)};
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    int salt = 900;
    auto un = static_cast<std::size_t>(n);
    for (std::size_t u : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{300}, std::size_t{2500}}) {
      for (std::size_t ti = 0; ti < tunings.size(); ++ti) {
        for (bool inplace : {false, true}) {
          ++salt;
          auto [st, sp] = shapes.get(me + salt);
          auto [rt, rp] = shapes.get(salt);
          if (inplace) std::tie(st, sp) = std::make_pair(rt, rp);
          // Block j of rank i: noise(i, j).
          std::vector<std::byte> out, in;
          for (int j = 0; j < n; ++j) {
            auto d = noise(u * kUnit, key(me, j), salt);
            out.insert(out.end(), d.begin(), d.end());
            auto e = noise(u * kUnit, key(j, me), salt);
            in.insert(in.end(), e.begin(), e.end());
          }
          Typed sb(st, u * sp * un), got(rt, u * rp * un), want(rt, u * rp * un);
          sb.set(out);
          want.set(in);
          if (inplace) got.set(out);
          ASSERT_EQ(alltoall(dev, inplace ? kInPlace : sb.ptr(), u * sp, st, got.ptr(), u * rp, rt, c, &tunings[ti]),
                    0);
          expect_same(
              got.raw(), want.raw(),
              where("alltoall", n, me,
                    "units=" + std::to_string(u) + " algo=" + std::to_string(ti) + (inplace ? " in-place" : "")));
        }
      }
    }
  });
}

// Alltoallv and alltoallw: block (i -> j) has key(i, j) % 4 * 50 units,
// placed in reverse peer order with gaps; w uses a different type per peer
// and byte displacements.
TEST_P(Data, AlltoallvW) {
  int n = GetParam();
  std::vector<Tuning> tunings{Tuning{}, with_alltoall(AlltoallAlgo::Scattered, 3),
                              with_alltoall(AlltoallAlgo::Pairwise)};
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    for (std::size_t ti = 0; ti < tunings.size(); ++ti) {
      for (int variant = 0; variant < 2; ++variant) {
        for (bool inplace : {false, true}) {
          int salt = 1000 + static_cast<int>(ti) * 4 + variant * 2 + inplace;
          bool w = variant == 1;
          // IN_PLACE exchanges need symmetric sizes.
          auto units = [&](int i, int j) {
            if (inplace && i > j) std::swap(i, j);
            return static_cast<std::size_t>(key(i, j, 3) % 4) * 50;
          };
          std::string what = std::string(w ? "w" : "v") + " algo=" + std::to_string(ti) + (inplace ? " in-place" : "");
          // Per-peer types: alltoallv uses one per direction.
          std::vector<const Datatype*> st(static_cast<std::size_t>(n)), rt(static_cast<std::size_t>(n));
          std::vector<std::size_t> sp(static_cast<std::size_t>(n)), rp(static_cast<std::size_t>(n));
          for (int j = 0; j < n; ++j) {
            auto uj = static_cast<std::size_t>(j);
            std::tie(st[uj], sp[uj]) = shapes.get(w ? me + j : me + salt);
            std::tie(rt[uj], rp[uj]) = shapes.get(w ? 2 * j + 1 : salt + 1);
            if (inplace) std::tie(st[uj], sp[uj]) = std::make_pair(rt[uj], rp[uj]);
          }
          // Every block at its own byte offset inside one area, reverse order.
          std::vector<int> sc(static_cast<std::size_t>(n)), sd(static_cast<std::size_t>(n)),
              rc(static_cast<std::size_t>(n)), rd(static_cast<std::size_t>(n));
          std::size_t sbytes = 0, rbytes = 0;
          for (int j = n - 1; j >= 0; --j) {
            auto uj = static_cast<std::size_t>(j);
            sc[uj] = static_cast<int>(units(me, j) * sp[uj]);
            rc[uj] = static_cast<int>(units(j, me) * rp[uj]);
            auto sext = static_cast<std::size_t>(st[uj]->extent()), rext = static_cast<std::size_t>(rt[uj]->extent());
            sbytes = (sbytes + sext - 1) / sext * sext;  // element-aligned for the v form
            rbytes = (rbytes + rext - 1) / rext * rext;
            sd[uj] = static_cast<int>(w ? sbytes : sbytes / sext);
            rd[uj] = static_cast<int>(w ? rbytes : rbytes / rext);
            sbytes += (static_cast<std::size_t>(sc[uj]) + 1) * sext + 16;
            rbytes += (static_cast<std::size_t>(rc[uj]) + 1) * rext + 16;
          }
          if (!w) {
            // One type for all peers in the v form: use peer 0's.
            for (int j = 0; j < n; ++j) {
              auto uj = static_cast<std::size_t>(j);
              if (st[uj] != st[0] || rt[uj] != rt[0]) ADD_FAILURE() << "test setup";
            }
          }
          std::vector<std::byte> sarea(sbytes, std::byte{0x5A}), rarea(rbytes, std::byte{0xA5}),
              want(rbytes, std::byte{0xA5});
          auto sat = [&](int j) {
            auto uj = static_cast<std::size_t>(j);
            return sarea.data() + (w ? sd[uj] : sd[uj] * st[uj]->extent());
          };
          auto rat = [&](std::vector<std::byte>& area, int j) {
            auto uj = static_cast<std::size_t>(j);
            return area.data() + (w ? rd[uj] : rd[uj] * rt[uj]->extent());
          };
          for (int j = 0; j < n; ++j) {
            auto uj = static_cast<std::size_t>(j);
            unpack(noise(units(me, j) * kUnit, key(me, j), salt).data(), sat(j), static_cast<std::size_t>(sc[uj]),
                   st[uj]);
            unpack(noise(units(j, me) * kUnit, key(j, me), salt).data(), rat(want, j), static_cast<std::size_t>(rc[uj]),
                   rt[uj]);
            if (inplace) {
              unpack(noise(units(me, j) * kUnit, key(me, j), salt).data(), rat(rarea, j),
                     static_cast<std::size_t>(rc[uj]), rt[uj]);
            }
          }
          const void* sb = inplace ? kInPlace : sarea.data();
          int e = w ? alltoallw(dev, sb, sc.data(), sd.data(), st.data(), rarea.data(), rc.data(), rd.data(), rt.data(),
                                c, &tunings[ti])
                    : alltoallv(dev, sb, sc.data(), sd.data(), st[0], rarea.data(), rc.data(), rd.data(), rt[0], c,
                                &tunings[ti]);
          ASSERT_EQ(e, 0);
          expect_same(rarea, want, where("alltoall", n, me, what));
        }
      }
    }
  });
}

// A communicator over some channel ranks in another order: the even
// ranks, reversed. The others stay out.
TEST_P(Data, SubCommunicator) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& world) {
    Comm c;
    c.context = 9;
    for (int r = n - 1 - (n - 1) % 2; r >= 0; r -= 2) c.peers.push_back(r);
    c.size = static_cast<int>(c.peers.size());
    c.rank = -1;
    for (int i = 0; i < c.size; ++i) {
      if (c.peers[static_cast<std::size_t>(i)] == world.rank) c.rank = i;
    }
    if (c.rank < 0) return;
    int me = c.rank, p = c.size;
    const Datatype* dt = B(Builtin::kInt);
    std::vector<int> mine(6), all(6 * static_cast<std::size_t>(p)), sum(6);
    for (int i = 0; i < 6; ++i) mine[static_cast<std::size_t>(i)] = me * 100 + i;
    ASSERT_EQ(allgather(dev, mine.data(), 6, dt, all.data(), 6, dt, c), 0);
    for (int r = 0; r < p; ++r) EXPECT_EQ(all[static_cast<std::size_t>(6 * r + 5)], r * 100 + 5);
    ASSERT_EQ(allreduce(dev, mine.data(), sum.data(), 6, dt, Op(OpKind::Sum), c), 0);
    EXPECT_EQ(sum[1], 100 * p * (p - 1) / 2 + p);
    int token = me == p - 1 ? 42 : 0;
    ASSERT_EQ(bcast(dev, &token, 1, dt, p - 1, c), 0);
    EXPECT_EQ(token, 42);
    ASSERT_EQ(barrier(dev, c), 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Data, ::testing::ValuesIn(rank_counts()));

}  // namespace
}  // namespace adi3::coll::test
