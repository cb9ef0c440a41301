// Matching cost against queue depth: the posted queue holds `depth`
// receives on distinct (source, tag) pairs (or the unexpected queue holds
// `depth` messages) and we time one match against it. A plain list, as
// MPICH and Open MPI keep per communicator, is timed beside it.
#include <benchmark/benchmark.h>

#include <list>
#include <vector>

#include "adi3/matcher.hpp"
#include "adi3/request.hpp"

namespace {

using adi3::Matcher;
using adi3::Request;

constexpr int kSources = 64;

void fill(Request& r, int i) {
  r.context = 0;
  r.source = i % kSources;
  r.tag = i / kSources;
}

// An arrival matches one posted receive among `depth`.
void BM_PostedMatch(benchmark::State& st) {
  const int depth = static_cast<int>(st.range(0));
  Matcher m(false);
  std::vector<Request> reqs(static_cast<std::size_t>(depth) + 1);
  for (int i = 0; i < depth; ++i) {
    fill(reqs[static_cast<std::size_t>(i)], i);
    m.post(&reqs[static_cast<std::size_t>(i)]);
  }
  Request& probe = reqs.back();
  int victim = 0;
  for (auto _ : st) {
    // Match the receive halfway down the queue, then re-post it at the end.
    Request& r = reqs[static_cast<std::size_t>(victim)];
    Request* got = m.arrive({r.context, r.source, r.tag}, [&] { return &probe; });
    benchmark::DoNotOptimize(got);
    m.post(got);
    victim = (victim + depth / 2 + 1) % depth;
  }
  st.counters["depth"] = depth;
}

// A receive matches one unexpected message among `depth`.
void BM_UnexpectedMatch(benchmark::State& st) {
  const int depth = static_cast<int>(st.range(0));
  Matcher m(false);
  std::vector<Request> msgs(static_cast<std::size_t>(depth));
  for (int i = 0; i < depth; ++i) {
    fill(msgs[static_cast<std::size_t>(i)], i);
    m.arrive({0, msgs[static_cast<std::size_t>(i)].source, msgs[static_cast<std::size_t>(i)].tag},
             [&] { return &msgs[static_cast<std::size_t>(i)]; });
  }
  Request recv;
  int victim = 0;
  for (auto _ : st) {
    Request& u = msgs[static_cast<std::size_t>(victim)];
    recv.context = 0;
    recv.source = u.source;
    recv.tag = u.tag;
    Request* got = m.post(&recv);
    benchmark::DoNotOptimize(got);
    m.arrive({0, got->source, got->tag}, [&] { return got; });  // file it again
    victim = (victim + depth / 2 + 1) % depth;
  }
  st.counters["depth"] = depth;
}

// The same with one ANY_SOURCE receive posted first (every arrival must
// then compare posting order across the wildcard buckets).
void BM_PostedMatchWithWildcard(benchmark::State& st) {
  const int depth = static_cast<int>(st.range(0));
  Matcher m(false);
  std::vector<Request> reqs(static_cast<std::size_t>(depth) + 2);
  Request& wild = reqs[static_cast<std::size_t>(depth) + 1];
  wild.context = 0;
  wild.source = adi3::kAnySource;
  wild.tag = 1 << 20;  // a tag nobody sends
  m.post(&wild);
  for (int i = 0; i < depth; ++i) {
    fill(reqs[static_cast<std::size_t>(i)], i);
    m.post(&reqs[static_cast<std::size_t>(i)]);
  }
  Request& probe = reqs[static_cast<std::size_t>(depth)];
  int victim = 0;
  for (auto _ : st) {
    Request& r = reqs[static_cast<std::size_t>(victim)];
    Request* got = m.arrive({r.context, r.source, r.tag}, [&] { return &probe; });
    benchmark::DoNotOptimize(got);
    m.post(got);
    victim = (victim + depth / 2 + 1) % depth;
  }
}

// Reference: one list per communicator, scanned front to back.
void BM_LinearListMatch(benchmark::State& st) {
  const int depth = static_cast<int>(st.range(0));
  struct Entry {
    int source, tag;
  };
  std::list<Entry> q;
  for (int i = 0; i < depth; ++i) q.push_back({i % kSources, i / kSources});
  // Like the hashed runs, the wanted receive sits halfway down the queue.
  Entry want{(depth / 2) % kSources, (depth / 2) / kSources};
  for (auto _ : st) {
    auto it = q.begin();
    while (it != q.end() && !(it->source == want.source && it->tag == want.tag)) ++it;
    benchmark::DoNotOptimize(it);
  }
}

}  // namespace

BENCHMARK(BM_PostedMatch)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_UnexpectedMatch)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_PostedMatchWithWildcard)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_LinearListMatch)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK_MAIN();
