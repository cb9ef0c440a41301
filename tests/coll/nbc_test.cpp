// Nonblocking collectives: run by the progress engine while the ranks do
// point-to-point traffic, several outstanding at once (completed in any
// order), mixed with blocking collectives, driven by test() alone, freed
// before completion, and every i-variant against its blocking twin.
#include "tests/coll/harness.hpp"

namespace adi3::coll::test {
namespace {

class Nbc : public ::testing::TestWithParam<int> {};

std::vector<int> ints(std::size_t n, int rank, int salt) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(key(rank, i, static_cast<std::uint64_t>(salt)) % 1000);
  return v;
}

TEST_P(Nbc, OverlapWithPointToPoint) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    Sequence seq;
    const std::size_t big = 50000;  // rendezvous-sized
    std::vector<int> bc(big), sum_small(3), sum_big(big), in_small = ints(3, me, 1), in_big = ints(big, me, 2);
    if (me == n - 1) bc = ints(big, 99, 3);
    Request* reqs[4] = {};
    ASSERT_EQ(ibarrier(dev, c, seq, &reqs[0]), 0);
    ASSERT_EQ(ibcast(dev, bc.data(), big, kInt, n - 1, c, seq, &reqs[1]), 0);
    ASSERT_EQ(iallreduce(dev, in_small.data(), sum_small.data(), 3, kInt, Op(OpKind::Sum), c, seq, &reqs[2]), 0);
    ASSERT_EQ(iallreduce(dev, in_big.data(), sum_big.data(), big, kInt, Op(OpKind::Sum), c, seq, &reqs[3]), 0);
    // Meanwhile: a ring of point-to-point messages on the user context,
    // large ones included, with the same tags the collectives might use.
    const Comm& world = dev.world();
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int lap = 0; lap < 5; ++lap) {
      std::vector<int> out(lap % 2 ? 30000 : 4, me * 10 + lap), got(out.size(), -1);
      Status st;
      ASSERT_EQ(dev.sendrecv(out.data(), out.size(), kInt, right, 64 + lap, got.data(), got.size(), kInt, left,
                             64 + lap, world, &st),
                0);
      EXPECT_EQ(got.front(), left * 10 + lap);
      EXPECT_EQ(got.back(), left * 10 + lap);
    }
    Status sts[4];
    ASSERT_EQ(dev.waitall(4, reqs, sts), 0);
    for (Request* r : reqs) EXPECT_EQ(r, nullptr);
    EXPECT_EQ(bc, ints(big, 99, 3));
    for (std::size_t i = 0; i < big; ++i) {
      long want = 0;
      for (int r = 0; r < n; ++r) want += static_cast<int>(key(r, i, 2) % 1000);
      if (sum_big[i] != want) {
        ADD_FAILURE() << "iallreduce big at " << i;
        break;
      }
      if (i < 3) {
        long ws = 0;
        for (int r = 0; r < n; ++r) ws += ints(3, r, 1)[i];
        EXPECT_EQ(sum_small[i], ws);
      }
    }
  });
}

TEST_P(Nbc, ManyOutstandingAnyOrderMixedWithBlocking) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    Sequence seq;
    constexpr int kOps = 6;
    std::vector<std::vector<int>> in(kOps), out(kOps);
    Request* reqs[kOps] = {};
    for (int k = 0; k < kOps; ++k) {
      std::size_t len = k % 2 ? 9000 : 5;  // long ones take Rabenseifner
      in[static_cast<std::size_t>(k)] = ints(len, me, k);
      out[static_cast<std::size_t>(k)].assign(len, 0);
      ASSERT_EQ(iallreduce(dev, in[static_cast<std::size_t>(k)].data(), out[static_cast<std::size_t>(k)].data(), len,
                           kInt, Op(OpKind::Max), c, seq, &reqs[k]),
                0);
    }
    // A blocking collective on the same communicator in between.
    int one = 1, total = 0;
    ASSERT_EQ(allreduce(dev, &one, &total, 1, kInt, Op(OpKind::Sum), c), 0);
    EXPECT_EQ(total, n);
    for (int k = kOps - 1; k >= 0; --k) {
      ASSERT_EQ(dev.wait(&reqs[k], nullptr), 0);
      auto& o = out[static_cast<std::size_t>(k)];
      for (std::size_t i = 0; i < o.size(); ++i) {
        int want = 0;
        for (int r = 0; r < n; ++r)
          want = std::max(want, static_cast<int>(key(r, i, static_cast<std::uint64_t>(k)) % 1000));
        if (o[i] != want) {
          ADD_FAILURE() << "op " << k << " element " << i;
          break;
        }
      }
    }
    // Driven by test() only; then one freed before it completes.
    Request* r = nullptr;
    ASSERT_EQ(ibarrier(dev, c, seq, &r), 0);
    bool done = false;
    while (!done) ASSERT_EQ(dev.test(&r, &done, nullptr), 0);
    ASSERT_EQ(ibarrier(dev, c, seq, &r), 0);
    ASSERT_EQ(dev.request_free(&r), 0);
    ASSERT_EQ(barrier(dev, c), 0);
  });
}

// MPI lets the user free a datatype (and op) while a nonblocking call
// still uses it: the schedule keeps its own references.
TEST_P(Nbc, TypesFreedWhilePending) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    auto un = static_cast<std::size_t>(n);
    Sequence seq;
    Datatype* vec = vector_of(kInt, 2, 1, 3);
    ASSERT_EQ(type_commit(vec), ErrorClass::Success);
    const std::size_t m = 40;  // vec elements per block
    std::vector<int> out(4 * m * un), in(4 * m * un, -1), bc(4 * m, me == 0 ? 5 : 0), ones(4 * m, 1), red(4 * m, 0);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i) * 10 + me;
    Tuning one_at_a_time;
    one_at_a_time.alltoall = AlltoallAlgo::Scattered;
    one_at_a_time.alltoall_throttle = 1;
    Request* r[3] = {};
    ASSERT_EQ(ialltoall(dev, out.data(), m, vec, in.data(), m, vec, c, seq, &r[0], &one_at_a_time), 0);
    ASSERT_EQ(ibcast(dev, bc.data(), m, vec, 0, c, seq, &r[1]), 0);
    {
      Op user = Op::user(
          [](const void* a, void* b, int k, const Datatype* t) {
            for (int e = 0; e < k; ++e) {
              for (int at : {0, 3}) static_cast<int*>(b)[4 * e + at] += static_cast<const int*>(a)[4 * e + at];
            }
            (void)t;
          },
          true);
      ASSERT_EQ(iallreduce(dev, ones.data(), red.data(), m, vec, user, c, seq, &r[2]), 0);
    }
    ASSERT_EQ(type_free(&vec), ErrorClass::Success);
    ASSERT_EQ(dev.waitall(3, r, nullptr), 0);
    for (std::size_t j = 0; j < un; ++j) {
      for (std::size_t e = 0; e < m; ++e) {
        std::size_t at = 4 * (j * m + e);
        int from = static_cast<int>(j);
        std::size_t src = 4 * (static_cast<std::size_t>(me) * m + e);
        EXPECT_EQ(in[at], static_cast<int>(src) * 10 + from);
        EXPECT_EQ(in[at + 3], static_cast<int>(src + 3) * 10 + from);
        EXPECT_EQ(in[at + 1], -1);  // gaps untouched
      }
    }
    EXPECT_EQ(bc[0], 5);
    EXPECT_EQ(bc[1], me == 0 ? 5 : 0);
    EXPECT_EQ(red[4 * (m - 1)], n);
    EXPECT_EQ(red[4 * (m - 1) + 3], n);
    EXPECT_EQ(red[1], 0);
  });
}

// Every nonblocking variant gives what its blocking twin gives.
TEST_P(Nbc, EveryVariantMatchesBlocking) {
  int n = GetParam();
  Type vec(vector_of(kInt, 2, 1, 3));
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    auto un = static_cast<std::size_t>(n);
    Sequence seq;
    const std::size_t m = 700;  // ints per block
    std::vector<int> counts(un), displs(un);
    for (int i = 0; i < n; ++i) {
      counts[static_cast<std::size_t>(i)] = static_cast<int>(m) - 3 * i;
      displs[static_cast<std::size_t>(i)] = static_cast<int>(i * m);
    }
    std::vector<int> send = ints(m * un, me, 7);
    using Fn = std::function<int(void* out, Request** req)>;
    struct Case {
      const char* name;
      std::size_t out_len;
      Fn blocking, nonblocking;
    };
    int root = n / 2;
    const Datatype* dt = kInt;
    const Op sum(OpKind::Sum);
    const DT types[8] = {dt, dt, dt, dt, dt, dt, dt, dt};
    // Alltoallv/w: I send counts[me] to everyone and get counts[j] from j.
    std::vector<int> scounts(un, counts[static_cast<std::size_t>(me)]);
    std::vector<int> bytes_displs(un);
    for (int i = 0; i < n; ++i) bytes_displs[static_cast<std::size_t>(i)] = displs[static_cast<std::size_t>(i)] * 4;
    std::vector<Case> cases{
        {"bcast", m * un,
         [&](void* o, Request**) {
           std::memcpy(o, send.data(), m * un * 4);
           return bcast(dev, o, m * un, dt, root, c);
         },
         [&](void* o, Request** q) {
           std::memcpy(o, send.data(), m * un * 4);
           return ibcast(dev, o, m * un, dt, root, c, seq, q);
         }},
        {"reduce", m, [&](void* o, Request**) { return reduce(dev, send.data(), o, m, dt, sum, root, c); },
         [&](void* o, Request** q) { return ireduce(dev, send.data(), o, m, dt, sum, root, c, seq, q); }},
        {"gather", m * un, [&](void* o, Request**) { return gather(dev, send.data(), m, dt, o, m, dt, root, c); },
         [&](void* o, Request** q) { return igather(dev, send.data(), m, dt, o, m, dt, root, c, seq, q); }},
        {"gatherv", m * un,
         [&](void* o, Request**) {
           return gatherv(dev, send.data(), static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), dt, o,
                          counts.data(), displs.data(), dt, root, c);
         },
         [&](void* o, Request** q) {
           return igatherv(dev, send.data(), static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), dt, o,
                           counts.data(), displs.data(), dt, root, c, seq, q);
         }},
        {"scatter", m, [&](void* o, Request**) { return scatter(dev, send.data(), m, dt, o, m, dt, root, c); },
         [&](void* o, Request** q) { return iscatter(dev, send.data(), m, dt, o, m, dt, root, c, seq, q); }},
        {"scatterv", m,
         [&](void* o, Request**) {
           return scatterv(dev, send.data(), counts.data(), displs.data(), dt, o,
                           static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), dt, root, c);
         },
         [&](void* o, Request** q) {
           return iscatterv(dev, send.data(), counts.data(), displs.data(), dt, o,
                            static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), dt, root, c, seq, q);
         }},
        {"allgather", m * un, [&](void* o, Request**) { return allgather(dev, send.data(), m, dt, o, m, dt, c); },
         [&](void* o, Request** q) { return iallgather(dev, send.data(), m, dt, o, m, dt, c, seq, q); }},
        {"allgatherv", m * un,
         [&](void* o, Request**) {
           return allgatherv(dev, send.data(), static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), dt, o,
                             counts.data(), displs.data(), dt, c);
         },
         [&](void* o, Request** q) {
           return iallgatherv(dev, send.data(), static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]), dt, o,
                              counts.data(), displs.data(), dt, c, seq, q);
         }},
        {"alltoall", m * un, [&](void* o, Request**) { return alltoall(dev, send.data(), m, dt, o, m, dt, c); },
         [&](void* o, Request** q) { return ialltoall(dev, send.data(), m, dt, o, m, dt, c, seq, q); }},
        {"alltoallv", m * un,
         [&](void* o, Request**) {
           return alltoallv(dev, send.data(), scounts.data(), displs.data(), dt, o, counts.data(), displs.data(), dt,
                            c);
         },
         [&](void* o, Request** q) {
           return ialltoallv(dev, send.data(), scounts.data(), displs.data(), dt, o, counts.data(), displs.data(), dt,
                             c, seq, q);
         }},
        {"alltoallw", m * un,
         [&](void* o, Request**) {
           return alltoallw(dev, send.data(), scounts.data(), bytes_displs.data(), types, o, counts.data(),
                            bytes_displs.data(), types, c);
         },
         [&](void* o, Request** q) {
           return ialltoallw(dev, send.data(), scounts.data(), bytes_displs.data(), types, o, counts.data(),
                             bytes_displs.data(), types, c, seq, q);
         }},
        {"reduce_scatter", m,
         [&](void* o, Request**) { return reduce_scatter(dev, send.data(), o, counts.data(), dt, sum, c); },
         [&](void* o, Request** q) { return ireduce_scatter(dev, send.data(), o, counts.data(), dt, sum, c, seq, q); }},
        {"reduce_scatter_block", m,
         [&](void* o, Request**) { return reduce_scatter_block(dev, send.data(), o, m, dt, sum, c); },
         [&](void* o, Request** q) { return ireduce_scatter_block(dev, send.data(), o, m, dt, sum, c, seq, q); }},
        {"scan", m, [&](void* o, Request**) { return scan(dev, send.data(), o, m, dt, sum, c); },
         [&](void* o, Request** q) { return iscan(dev, send.data(), o, m, dt, sum, c, seq, q); }},
        {"exscan", m, [&](void* o, Request**) { return exscan(dev, send.data(), o, m, dt, sum, c); },
         [&](void* o, Request** q) { return iexscan(dev, send.data(), o, m, dt, sum, c, seq, q); }},
        {"allreduce vector type", m / 2,
         [&](void* o, Request**) { return allreduce(dev, send.data(), o, m / 8, vec, sum, c); },
         [&](void* o, Request** q) { return iallreduce(dev, send.data(), o, m / 8, vec, sum, c, seq, q); }},
    };
    // Start them all, then complete them together.
    std::vector<std::vector<int>> nb(cases.size());
    std::vector<Request*> reqs(cases.size(), nullptr);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      nb[k].assign(cases[k].out_len, -7);
      ASSERT_EQ(cases[k].nonblocking(nb[k].data(), &reqs[k]), 0) << cases[k].name;
    }
    ASSERT_EQ(dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr), 0);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      std::vector<int> b(cases[k].out_len, -7);
      ASSERT_EQ(cases[k].blocking(b.data(), nullptr), 0) << cases[k].name;
      EXPECT_EQ(nb[k], b) << cases[k].name << " ranks=" << n << " rank=" << me;
      // The root always gets data (exscan's rank 0 excepted).
      bool exscan0 = std::string(cases[k].name) == "exscan" && me == 0;
      if (me == root && !exscan0) {
        EXPECT_NE(nb[k], std::vector<int>(cases[k].out_len, -7)) << cases[k].name;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Nbc, ::testing::ValuesIn(rank_counts()));

}  // namespace
}  // namespace adi3::coll::test
