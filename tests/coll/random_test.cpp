// A random mix of collectives with random sizes, roots, thresholds and
// algorithms, blocking and nonblocking (several outstanding, completed in
// a random order), each checked against its serial reference. All ranks
// draw from one seed, so they agree on the sequence.
#include <memory>
#include <random>

#include "tests/coll/harness.hpp"

namespace adi3::coll::test {
namespace {

class Random : public ::testing::TestWithParam<int> {};

constexpr int kIters = 150;

int value(int rank, std::size_t i, int it) {
  return static_cast<int>(key(rank, i, static_cast<std::uint64_t>(it)) % 1000);
}

Tuning random_tuning(std::mt19937_64& rng) {
  Tuning t;
  auto small = [&] { return static_cast<std::size_t>(rng() % 40000); };
  t.bcast_short = small();
  t.bcast_long = t.bcast_short + small();
  t.bcast_min_procs = static_cast<int>(rng() % 9);
  t.reduce_short = small();
  t.allreduce_short = small();
  t.allgather_short = small();
  t.allgather_long = small();
  t.alltoall_short = small() / 100;
  t.alltoall_min_procs = static_cast<int>(rng() % 9);
  t.alltoall_medium = small() / 10;
  t.alltoall_throttle = 1 + static_cast<int>(rng() % 4);
  t.reduce_scatter_long = small();
  t.bcast = static_cast<BcastAlgo>(rng() % 4);
  t.reduce = static_cast<ReduceAlgo>(rng() % 3);
  t.allreduce = static_cast<AllreduceAlgo>(rng() % 4);
  t.allgather = static_cast<AllgatherAlgo>(rng() % 4);
  t.alltoall = static_cast<AlltoallAlgo>(rng() % 4);
  t.reduce_scatter = static_cast<ReduceScatterAlgo>(rng() % 4);
  return t;
}

// One started collective: its buffers and what they must hold at the end.
struct Op1 {
  std::vector<int> in, out, want;
  Tuning t;
  Request* req = nullptr;
  std::string name;
};

TEST_P(Random, MixedSequence) {
  int n = GetParam();
  run(n, [&](Device& dev, const Comm& c) {
    int me = c.rank;
    auto un = static_cast<std::size_t>(n);
    std::mt19937_64 rng(77 + static_cast<unsigned>(n));
    Sequence seq;
    std::vector<std::unique_ptr<Op1>> pending;
    int checked = 0;
    auto finish = [&](std::unique_ptr<Op1>& o) {
      ++checked;
      if (o->req) {
        ASSERT_EQ(dev.wait(&o->req, nullptr), 0) << o->name;
      }
      if (o->out != o->want) ADD_FAILURE() << o->name << " ranks=" << n << " rank=" << me;
    };
    for (int it = 0; it < kIters; ++it) {
      auto o = std::make_unique<Op1>();
      o->t = random_tuning(rng);
      std::size_t sizes[] = {0, 1, rng() % 100, rng() % 6000};
      std::size_t count = sizes[rng() % 4];
      int root = static_cast<int>(rng() % un);
      bool nb = rng() % 2;
      int kind = static_cast<int>(rng() % 6);
      o->name = "it=" + std::to_string(it) + " kind=" + std::to_string(kind) + " count=" + std::to_string(count);
      Request** rq = nb ? &o->req : nullptr;
      const Op sum(OpKind::Sum), max(OpKind::Max);
      int e = 0;
      switch (kind) {
        case 0: {  // allreduce (sum)
          o->in.resize(count);
          o->out.assign(count, -1);
          o->want.assign(count, 0);
          for (std::size_t i = 0; i < count; ++i) {
            o->in[i] = value(me, i, it);
            for (int r = 0; r < n; ++r) o->want[i] += value(r, i, it);
          }
          e = nb ? iallreduce(dev, o->in.data(), o->out.data(), count, kInt, sum, c, seq, rq, &o->t)
                 : allreduce(dev, o->in.data(), o->out.data(), count, kInt, sum, c, &o->t);
          break;
        }
        case 1: {  // bcast
          o->want.resize(count);
          for (std::size_t i = 0; i < count; ++i) o->want[i] = value(root, i, it);
          o->out = me == root ? o->want : std::vector<int>(count, -1);
          e = nb ? ibcast(dev, o->out.data(), count, kInt, root, c, seq, rq, &o->t)
                 : bcast(dev, o->out.data(), count, kInt, root, c, &o->t);
          break;
        }
        case 2: {  // allgather
          o->in.resize(count);
          o->out.assign(count * un, -1);
          for (int r = 0; r < n; ++r) {
            for (std::size_t i = 0; i < count; ++i) o->want.push_back(value(r, i, it));
          }
          for (std::size_t i = 0; i < count; ++i) o->in[i] = value(me, i, it);
          e = nb ? iallgather(dev, o->in.data(), count, kInt, o->out.data(), count, kInt, c, seq, rq, &o->t)
                 : allgather(dev, o->in.data(), count, kInt, o->out.data(), count, kInt, c, &o->t);
          break;
        }
        case 3: {  // alltoall: block for j from i is value(i, j * count + k)
          count /= 8;
          o->in.resize(count * un);
          o->out.assign(count * un, -1);
          o->want.resize(count * un);
          for (std::size_t j = 0; j < un; ++j) {
            for (std::size_t k = 0; k < count; ++k) {
              o->in[j * count + k] = value(me, j * count + k, it);
              o->want[j * count + k] = value(static_cast<int>(j), static_cast<std::size_t>(me) * count + k, it);
            }
          }
          e = nb ? ialltoall(dev, o->in.data(), count, kInt, o->out.data(), count, kInt, c, seq, rq, &o->t)
                 : alltoall(dev, o->in.data(), count, kInt, o->out.data(), count, kInt, c, &o->t);
          break;
        }
        case 4: {  // reduce_scatter_block (sum)
          count /= 4;
          o->in.resize(count * un);
          o->out.assign(count, -1);
          o->want.assign(count, 0);
          for (std::size_t i = 0; i < count * un; ++i) o->in[i] = value(me, i, it);
          for (std::size_t i = 0; i < count; ++i) {
            for (int r = 0; r < n; ++r) o->want[i] += value(r, static_cast<std::size_t>(me) * count + i, it);
          }
          e = nb ? ireduce_scatter_block(dev, o->in.data(), o->out.data(), count, kInt, sum, c, seq, rq, &o->t)
                 : reduce_scatter_block(dev, o->in.data(), o->out.data(), count, kInt, sum, c, &o->t);
          break;
        }
        default: {  // reduce (max) to root
          o->in.resize(count);
          o->out.assign(count, -1);
          o->want = o->out;
          for (std::size_t i = 0; i < count; ++i) {
            o->in[i] = value(me, i, it);
            if (me != root) continue;
            o->want[i] = 0;
            for (int r = 0; r < n; ++r) o->want[i] = std::max(o->want[i], value(r, i, it));
          }
          e = nb ? ireduce(dev, o->in.data(), o->out.data(), count, kInt, max, root, c, seq, rq, &o->t)
                 : reduce(dev, o->in.data(), o->out.data(), count, kInt, max, root, c, &o->t);
          break;
        }
      }
      ASSERT_EQ(e, 0) << o->name;
      if (!nb) {
        finish(o);
        continue;
      }
      pending.push_back(std::move(o));
      // Now and then complete a random one of the outstanding calls.
      while (pending.size() > 3 || (!pending.empty() && rng() % 3 == 0)) {
        std::size_t k = rng() % pending.size();
        finish(pending[k]);
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    for (auto& o : pending) finish(o);
    EXPECT_EQ(checked, kIters);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Random, ::testing::ValuesIn(rank_counts()));

}  // namespace
}  // namespace adi3::coll::test
