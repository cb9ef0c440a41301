// Reductions (reduce, allreduce, reduce_scatter(_block), scan, exscan)
// against the serial rank-order fold, for every kind of reduce_kinds.hpp,
// every rank count, sizes 0 to beyond the long thresholds, every
// algorithm, with and without IN_PLACE.
#include "tests/coll/reduce_kinds.hpp"

namespace adi3::coll::test {
namespace {

// 1100 elements pass every short-message threshold, and the wider kinds
// pass the eager limit (rendezvous).
const std::vector<std::size_t> kCounts{0, 1, 37, 1100};

class Reduce : public ::testing::TestWithParam<int> {
 protected:
  Kinds kinds;
};

std::string what(const Kind& k, std::size_t count, std::size_t algo, bool inplace) {
  return k.name + " count=" + std::to_string(count) + " algo=" + std::to_string(algo) + (inplace ? " in-place" : "");
}

// Automatic (index 0), then each reduce algorithm forced.
std::vector<Tuning> reduce_tunings() {
  std::vector<Tuning> t(3);
  t[1].reduce = ReduceAlgo::Binomial;
  t[2].reduce = ReduceAlgo::ReduceScatterGather;
  return t;
}

// The first how_many of: automatic, recursive doubling, Rabenseifner, ring,
// automatic with every vector long.
std::vector<Tuning> allreduce_tunings(std::size_t how_many) {
  std::vector<Tuning> t(5);
  t[1].allreduce = AllreduceAlgo::RecursiveDoubling;
  t[2].allreduce = AllreduceAlgo::Rabenseifner;
  t[3].allreduce = AllreduceAlgo::Ring;
  t[4].allreduce_short = 0;  // auto picks the long-vector algorithm
  t.resize(how_many);
  return t;
}

// One size of one kind: this rank's input and the answer, the serial fold.
struct Round {
  const Kind& k;
  std::size_t count;
  int salt;
  Typed want;
  Typed mine;
  Round(const Kind& kind, std::size_t cnt, int s, const Comm& c)
      : k(kind), count(cnt), salt(s), want(fold(kind, cnt, 0, c.size - 1, s)), mine(kind.type, cnt) {
    mine.set(input(kind, cnt, c.rank, s));
  }
};

// A reduce to root with tunings[ti] (IN_PLACE at the root when inplace),
// checked at the root.
void check_reduce(Device& dev, const Comm& c, const Round& r, const std::vector<Tuning>& tunings, std::size_t ti,
                  bool inplace, int root) {
  const Kind& k = r.k;
  Typed out(k.type, r.count);
  if (inplace && c.rank == root) out.set(input(k, r.count, c.rank, r.salt));
  const void* sb = inplace && c.rank == root ? kInPlace : r.mine.ptr();
  ASSERT_EQ(reduce(dev, sb, out.ptr(), r.count, k.type, k.op, root, c, &tunings[ti]), 0);
  if (c.rank == root)
    expect_same(out.raw(), r.want.raw(), where("reduce", c.size, c.rank, what(k, r.count, ti, inplace)));
}

// An allreduce with tunings[ti] (IN_PLACE when inplace), checked everywhere.
void check_allreduce(Device& dev, const Comm& c, const Round& r, const std::vector<Tuning>& tunings, std::size_t ti,
                     bool inplace) {
  const Kind& k = r.k;
  Typed out(k.type, r.count);
  if (inplace) out.set(input(k, r.count, c.rank, r.salt));
  ASSERT_EQ(allreduce(dev, inplace ? kInPlace : r.mine.ptr(), out.ptr(), r.count, k.type, k.op, c, &tunings[ti]), 0);
  expect_same(out.raw(), r.want.raw(), where("allreduce", c.size, c.rank, what(k, r.count, ti, inplace)));
}

TEST_P(Reduce, ReduceAndAllreduce) {
  int n = GetParam();
  const std::vector<Tuning> rt = reduce_tunings(), at = allreduce_tunings(5);
  run(n, [&](Device& dev, const Comm& c) {
    int salt = 0;
    for (const Kind& k : kinds.all) {
      for (std::size_t count : kCounts) {
        const Round r(k, count, ++salt, c);
        for (std::size_t ti = 0; ti < rt.size(); ++ti) {
          for (bool inplace : {false, true}) {
            if (inplace && ti != static_cast<std::size_t>(salt) % rt.size())
              continue;  // IN_PLACE with one algorithm per size
            int root = static_cast<int>((ti + static_cast<std::size_t>(salt) + inplace) % static_cast<std::size_t>(n));
            check_reduce(dev, c, r, rt, ti, inplace, root);
          }
        }
        for (std::size_t ti = 0; ti < at.size(); ++ti) {
          for (bool inplace : {false, true}) {
            if (inplace && ti != static_cast<std::size_t>(salt) % at.size()) continue;
            check_allreduce(dev, c, r, at, ti, inplace);
          }
        }
      }
    }
  });
}

// Vectors long enough that the work buffers come from the pooled large
// allocator and the halving algorithms read the input in place (odd
// counts, so blocks differ in length); a few kinds keep it quick.
TEST_P(Reduce, LongVectors) {
  int n = GetParam();
  const std::vector<Tuning> rt = reduce_tunings(), at = allreduce_tunings(3);
  const std::vector<std::size_t> counts{20011};
  run(n, [&](Device& dev, const Comm& c) {
    int salt = 100;
    for (const Kind& k : kinds.all) {
      if (k.name != "int sum" && k.name != "strided double min" && k.name != "user affine (non-commutative)") continue;
      if (n > 4 && k.name != "int sum") continue;  // sanitizer presets: 8 thread-ranks share 2 cores
      for (std::size_t count : counts) {
        const Round r(k, count, ++salt, c);
        for (std::size_t ti = 0; ti < rt.size(); ++ti) {
          for (bool inplace : {false, true})
            check_reduce(dev, c, r, rt, ti, inplace, static_cast<int>((ti + inplace) % static_cast<std::size_t>(n)));
        }
        for (std::size_t ti = 0; ti < at.size(); ++ti) {
          for (bool inplace : {false, true}) check_allreduce(dev, c, r, at, ti, inplace);
        }
      }
    }
  });
}

TEST_P(Reduce, ReduceScatter) {
  int n = GetParam();
  std::vector<Tuning> tt(4);
  tt[1].reduce_scatter = ReduceScatterAlgo::RecursiveHalving;
  tt[2].reduce_scatter = ReduceScatterAlgo::Pairwise;
  tt[3].reduce_scatter = ReduceScatterAlgo::ReduceScatterv;
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank, salt = 1000;
    auto un = static_cast<std::size_t>(n);
    for (const Kind& k : kinds.all) {
      for (std::size_t per : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
        ++salt;
        // Varying block sizes (some empty) and equal ones.
        std::vector<int> counts(un);
        std::size_t total = 0, first = 0;
        for (int i = 0; i < n; ++i) {
          counts[static_cast<std::size_t>(i)] = static_cast<int>(per * (key(salt, i) % 3));
          if (i < me) first += static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]);
          total += static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]);
        }
        std::size_t mine_n = static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]);
        Typed all = fold(k, total, 0, n - 1, salt);
        Typed allb = fold(k, per * un, 0, n - 1, salt);
        auto slice = [&](const Typed& t, std::size_t from, std::size_t cnt) {
          auto packed = t.get();
          Typed out(k.type, cnt);
          std::size_t sz = k.type->size();
          out.set(std::vector<std::byte>(packed.begin() + static_cast<std::ptrdiff_t>(from * sz),
                                         packed.begin() + static_cast<std::ptrdiff_t>((from + cnt) * sz)));
          return out;
        };
        Typed want = slice(all, first, mine_n), wantb = slice(allb, static_cast<std::size_t>(me) * per, per);
        for (std::size_t ti = 0; ti < tt.size(); ++ti) {
          for (bool inplace : {false, true}) {
            if (inplace && ti != static_cast<std::size_t>(salt) % tt.size()) continue;
            Typed in(k.type, total), out(k.type, inplace ? total : mine_n);
            in.set(input(k, total, me, salt));
            if (inplace) out.set(input(k, total, me, salt));
            ASSERT_EQ(
                reduce_scatter(dev, inplace ? kInPlace : in.ptr(), out.ptr(), counts.data(), k.type, k.op, c, &tt[ti]),
                0);
            expect_same(slice(out, 0, mine_n).get(), want.get(),
                        where("reduce_scatter", n, me, what(k, per, ti, inplace)));
            if (!inplace)
              expect_same(out.raw(), want.raw(), where("reduce_scatter gaps", n, me, what(k, per, ti, false)));
            Typed inb(k.type, per * un), outb(k.type, inplace ? per * un : per);
            inb.set(input(k, per * un, me, salt));
            if (inplace) outb.set(input(k, per * un, me, salt));
            ASSERT_EQ(
                reduce_scatter_block(dev, inplace ? kInPlace : inb.ptr(), outb.ptr(), per, k.type, k.op, c, &tt[ti]),
                0);
            expect_same(slice(outb, 0, per).get(), wantb.get(),
                        where("reduce_scatter_block", n, me, what(k, per, ti, inplace)));
          }
        }
      }
    }
  });
}

TEST_P(Reduce, ScanExscan) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank, salt = 2000;
    for (const Kind& k : kinds.all) {
      for (std::size_t count : kCounts) {
        ++salt;
        Typed mine(k.type, count);
        mine.set(input(k, count, me, salt));
        Typed want = fold(k, count, 0, me, salt);
        for (bool inplace : {false, true}) {
          Typed out(k.type, count);
          if (inplace) out.set(input(k, count, me, salt));
          ASSERT_EQ(scan(dev, inplace ? kInPlace : mine.ptr(), out.ptr(), count, k.type, k.op, c), 0);
          expect_same(out.raw(), want.raw(), where("scan", n, me, what(k, count, 0, inplace)));
          Typed eout(k.type, count);
          if (inplace) eout.set(input(k, count, me, salt));
          ASSERT_EQ(exscan(dev, inplace ? kInPlace : mine.ptr(), eout.ptr(), count, k.type, k.op, c), 0);
          if (me > 0) {
            Typed ewant = fold(k, count, 0, me - 1, salt);
            expect_same(eout.raw(), ewant.raw(), where("exscan", n, me, what(k, count, 0, inplace)));
          }
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Reduce, ::testing::ValuesIn(rank_counts()));

}  // namespace
}  // namespace adi3::coll::test
