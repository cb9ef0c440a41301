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

TEST_P(Reduce, ReduceAndAllreduce) {
  int n = GetParam();
  std::vector<Tuning> rt(3), at(5);
  rt[1].reduce = ReduceAlgo::Binomial;
  rt[2].reduce = ReduceAlgo::ReduceScatterGather;
  at[1].allreduce = AllreduceAlgo::RecursiveDoubling;
  at[2].allreduce = AllreduceAlgo::Rabenseifner;
  at[3].allreduce = AllreduceAlgo::Ring;
  at[4].allreduce_short = 0;  // auto picks the long-vector algorithm
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank, salt = 0;
    for (const Kind& k : kinds.all) {
      for (std::size_t count : kCounts) {
        ++salt;
        Typed want = fold(k, count, 0, n - 1, salt);
        Typed mine(k.type, count);
        mine.set(input(k, count, me, salt));
        for (std::size_t ti = 0; ti < rt.size(); ++ti) {
          for (bool inplace : {false, true}) {
            if (inplace && ti != static_cast<std::size_t>(salt) % rt.size())
              continue;  // IN_PLACE with one algorithm per size
            int root = static_cast<int>((ti + static_cast<std::size_t>(salt) + inplace) % static_cast<std::size_t>(n));
            Typed out(k.type, count);
            if (inplace && me == root) out.set(input(k, count, me, salt));
            const void* sb = inplace && me == root ? kInPlace : mine.ptr();
            ASSERT_EQ(reduce(dev, sb, out.ptr(), count, k.type, k.op, root, c, &rt[ti]), 0);
            if (me == root) expect_same(out.raw(), want.raw(), where("reduce", n, me, what(k, count, ti, inplace)));
          }
        }
        for (std::size_t ti = 0; ti < at.size(); ++ti) {
          for (bool inplace : {false, true}) {
            if (inplace && ti != static_cast<std::size_t>(salt) % at.size()) continue;
            Typed out(k.type, count);
            if (inplace) out.set(input(k, count, me, salt));
            ASSERT_EQ(allreduce(dev, inplace ? kInPlace : mine.ptr(), out.ptr(), count, k.type, k.op, c, &at[ti]), 0);
            expect_same(out.raw(), want.raw(), where("allreduce", n, me, what(k, count, ti, inplace)));
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
  std::vector<Tuning> rt(3), at(3);
  rt[1].reduce = ReduceAlgo::Binomial;
  rt[2].reduce = ReduceAlgo::ReduceScatterGather;
  at[1].allreduce = AllreduceAlgo::RecursiveDoubling;
  at[2].allreduce = AllreduceAlgo::Rabenseifner;
  const std::vector<std::size_t> counts{20011};
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank, salt = 100;
    for (const Kind& k : kinds.all) {
      if (k.name != "int sum" && k.name != "strided double min" && k.name != "user affine (non-commutative)") continue;
      if (n > 4 && k.name != "int sum") continue;  // sanitizer presets: 8 thread-ranks share 2 cores
      for (std::size_t count : counts) {
        ++salt;
        Typed want = fold(k, count, 0, n - 1, salt);
        Typed mine(k.type, count);
        mine.set(input(k, count, me, salt));
        for (std::size_t ti = 0; ti < rt.size(); ++ti) {
          for (bool inplace : {false, true}) {
            int root = static_cast<int>((ti + inplace) % static_cast<std::size_t>(n));
            Typed out(k.type, count);
            if (inplace && me == root) out.set(input(k, count, me, salt));
            const void* sb = inplace && me == root ? kInPlace : mine.ptr();
            ASSERT_EQ(reduce(dev, sb, out.ptr(), count, k.type, k.op, root, c, &rt[ti]), 0);
            if (me == root) expect_same(out.raw(), want.raw(), where("reduce", n, me, what(k, count, ti, inplace)));
          }
        }
        for (std::size_t ti = 0; ti < at.size(); ++ti) {
          for (bool inplace : {false, true}) {
            Typed out(k.type, count);
            if (inplace) out.set(input(k, count, me, salt));
            ASSERT_EQ(allreduce(dev, inplace ? kInPlace : mine.ptr(), out.ptr(), count, k.type, k.op, c, &at[ti]), 0);
            expect_same(out.raw(), want.raw(), where("allreduce", n, me, what(k, count, ti, inplace)));
          }
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
