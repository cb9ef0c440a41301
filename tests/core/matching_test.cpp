// Matching order: receives with and without wildcards (ANY_SOURCE, ANY_TAG)
// posted before and after the messages they match, checked against a
// list-based reference model of MPI matching (a message goes to the first
// posted receive, in posting order, that matches it; a receive takes the
// first arrived message that matches it; per-source order is kept).
//
// Three ranks: ranks 1 and 2 send sequences of tagged messages whose payload
// names them; rank 0 posts receives and lets one sender at a time deliver a
// batch of messages, then waits for that sender's marker on a control
// communicator. Since a pair of ranks delivers in order, the marker tells
// rank 0 that the whole batch has arrived, so the exact interleaving of
// posts and arrivals at rank 0 is known and the model can replay it.
#include <deque>
#include <random>
#include <sstream>

#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::kAnySource;
using adi3::kAnyTag;
using adi3::Request;
using adi3::Status;

constexpr int kGo = 1, kMarker = 2;

struct Msg {
  int src, idx, tag;
  std::size_t bytes;
  bool sync;
};
struct Event {
  enum Kind { Post, Deliver } kind;
  int src = 0, tag = 0;       // Post: the receive's pattern
  int sender = 0, count = 0;  // Deliver: sender's next `count` messages
};
struct Plan {
  std::vector<Msg> msgs[3];  // per sender (1, 2), in send order
  std::vector<Event> events;
  int receives = 0;
  std::size_t capacity = 4;
};

uint32_t msg_id(int src, int idx) { return static_cast<uint32_t>(src << 16 | idx); }

// ---- the reference model ----
class Model {
 public:
  explicit Model(int receives) : match_(static_cast<std::size_t>(receives), {-1, -1}) {}
  void post(int rid, int src, int tag) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
      if (matches(src, tag, *it)) {
        match_[static_cast<std::size_t>(rid)] = {it->src, it->idx};
        unexpected_.erase(it);
        return;
      }
    }
    posted_.push_back({rid, src, tag});
  }
  void arrive(const Msg& m) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
      if (matches(it->src, it->tag, m)) {
        match_[static_cast<std::size_t>(it->rid)] = {m.src, m.idx};
        posted_.erase(it);
        return;
      }
    }
    unexpected_.push_back(m);
  }
  std::pair<int, int> match(int rid) const { return match_[static_cast<std::size_t>(rid)]; }
  const std::deque<Msg>& unexpected() const { return unexpected_; }

 private:
  static bool matches(int src, int tag, const Msg& m) {
    return (src == kAnySource || src == m.src) && (tag == kAnyTag || tag == m.tag);
  }
  struct Posted {
    int rid, src, tag;
  };
  std::deque<Posted> posted_;
  std::deque<Msg> unexpected_;
  std::vector<std::pair<int, int>> match_;
};

// ---- plans ----

// A random plan: every message gets a receive that matches it (exact or with
// wildcards); receives are posted in random order, interleaved with random
// batches of deliveries. Leftovers (receives whose messages were taken by
// wildcards) are possible and checked too.
Plan random_plan(uint32_t seed, std::size_t eager) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  Plan p;
  const std::size_t small_max = std::min<std::size_t>(eager, 200);
  std::vector<std::pair<int, int>> patterns;
  for (int s = 1; s <= 2; ++s) {
    int n = 4 + pick(20);
    for (int i = 0; i < n; ++i) {
      int tag = pick(10) == 0 ? adi3::kTagUb : pick(3);
      std::size_t bytes = pick(8) == 0 ? eager + 1 + static_cast<std::size_t>(pick(3000))
                                       : 4 + static_cast<std::size_t>(pick(static_cast<int>(small_max - 3)));
      p.msgs[s].push_back({s, i, tag, bytes, pick(5) == 0});
      p.capacity = std::max(p.capacity, bytes);
      switch (pick(5)) {
        case 0:
          patterns.push_back({kAnySource, tag});
          break;
        case 1:
          patterns.push_back({s, kAnyTag});
          break;
        case 2:
          patterns.push_back({kAnySource, kAnyTag});
          break;
        default:
          patterns.push_back({s, tag});
          break;
      }
    }
  }
  std::shuffle(patterns.begin(), patterns.end(), rng);
  std::size_t next_post = 0;
  int left[3] = {0, static_cast<int>(p.msgs[1].size()), static_cast<int>(p.msgs[2].size())};
  while (next_post < patterns.size() || left[1] || left[2]) {
    bool post = next_post < patterns.size() && (!(left[1] || left[2]) || pick(2) == 0);
    if (post) {
      p.events.push_back({Event::Post, patterns[next_post].first, patterns[next_post].second, 0, 0});
      ++next_post;
    } else {
      int s = left[1] && left[2] ? 1 + pick(2) : (left[1] ? 1 : 2);
      int k = std::min(left[s], 1 + pick(3));
      left[s] -= k;
      p.events.push_back({Event::Deliver, 0, 0, s, k});
    }
  }
  p.receives = static_cast<int>(patterns.size());
  return p;
}

// A plan from a script: "r1.0" posts a receive for source 1, tag 0 ("*" is a
// wildcard); "s2.3" makes rank 2 send its next message, with tag 3 ("s2.3L":
// a message above the eager limit, "s2.3S": synchronous).
Plan script_plan(const std::string& script, std::size_t eager) {
  Plan p;
  std::istringstream in(script);
  std::string tok;
  auto num = [](const std::string& s, int any) { return s == "*" ? any : std::stoi(s); };
  while (in >> tok) {
    auto dot = tok.find('.');
    std::string a = tok.substr(1, dot - 1), b = tok.substr(dot + 1);
    if (tok[0] == 'r') {
      p.events.push_back({Event::Post, num(a, kAnySource), num(b, kAnyTag), 0, 0});
      ++p.receives;
    } else {
      int s = std::stoi(a);
      bool large = b.find('L') != std::string::npos, sync = b.find('S') != std::string::npos;
      std::size_t bytes = large ? eager + 1000 : 8;
      p.msgs[s].push_back({s, static_cast<int>(p.msgs[s].size()), std::stoi(b), bytes, sync});
      p.capacity = std::max(p.capacity, bytes);
      // Consecutive deliveries of one sender form one batch.
      if (!p.events.empty() && p.events.back().kind == Event::Deliver && p.events.back().sender == s) {
        ++p.events.back().count;
      } else {
        p.events.push_back({Event::Deliver, 0, 0, s, 1});
      }
    }
  }
  return p;
}

// ---- the ranks ----

void sender(Device& dev, const Plan& p) {
  adi3::Comm ctl = ctl_comm(dev);
  const int me = dev.rank();
  std::vector<Request*> reqs;
  std::vector<std::vector<unsigned char>> bufs;
  std::size_t next = 0;
  for (;;) {
    step("sender: waiting for go");
    int64_t count = recv_int(dev, ctl, 0, kGo);
    if (count < 0) break;
    for (int64_t k = 0; k < count; ++k) {
      const Msg& m = p.msgs[me][next++];
      bufs.emplace_back(m.bytes);
      auto& b = bufs.back();
      uint32_t id = msg_id(m.src, m.idx);
      fill_pattern(b.data(), b.size(), id);
      std::memcpy(b.data(), &id, sizeof id);
      Request* r = nullptr;
      ASSERT_OK(dev, dev.isend(b.data(), b.size(), byte(), 0, m.tag, dev.world(),
                               m.sync ? adi3::SendMode::Synchronous : adi3::SendMode::Standard, &r));
      reqs.push_back(r);
    }
    notify(dev, ctl, 0, kMarker);
  }
  step("sender: waitall");
  ASSERT_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr));
  EXPECT_EQ(next, p.msgs[me].size());
}

// Checks a completed receive against the message the model gave it.
void check_received(const std::string& what, const Status& st, const unsigned char* buf, const Msg& m) {
  SCOPED_TRACE(what);
  EXPECT_EQ(st.source, m.src);
  EXPECT_EQ(st.tag, m.tag);
  EXPECT_EQ(st.bytes, m.bytes);
  EXPECT_FALSE(st.cancelled);
  uint32_t id = 0;
  std::memcpy(&id, buf, sizeof id);
  EXPECT_EQ(id >> 16, static_cast<uint32_t>(m.src)) << "got message " << (id >> 16) << ":" << (id & 0xffff);
  EXPECT_EQ(id & 0xffff, static_cast<uint32_t>(m.idx)) << "got message " << (id >> 16) << ":" << (id & 0xffff);
  std::vector<unsigned char> want = pattern(m.bytes, msg_id(m.src, m.idx));
  EXPECT_EQ(0, std::memcmp(buf + 4, want.data() + 4, m.bytes - 4)) << "payload differs";
}

// Returns the model's assignment (per receive: sender and index, or -1).
std::vector<std::pair<int, int>> receiver(Device& dev, const Plan& p) {
  adi3::Comm ctl = ctl_comm(dev);
  Model model(p.receives);
  std::vector<Request*> reqs(static_cast<std::size_t>(p.receives), nullptr);
  std::vector<std::vector<unsigned char>> bufs(static_cast<std::size_t>(p.receives));
  std::vector<bool> reported(static_cast<std::size_t>(p.receives), false);
  std::size_t sent[3] = {0, 0, 0};
  int posted = 0;
  auto msg = [&](std::pair<int, int> sm) { return p.msgs[sm.first][static_cast<std::size_t>(sm.second)]; };
  for (std::size_t e = 0; e < p.events.size(); ++e) {
    const Event& ev = p.events[e];
    if (ev.kind == Event::Post) {
      step("receiver: post");
      auto& b = bufs[static_cast<std::size_t>(posted)];
      b.assign(p.capacity, 0);
      EXPECT_OK(dev, dev.irecv(b.data(), b.size(), byte(), ev.src, ev.tag, dev.world(),
                               &reqs[static_cast<std::size_t>(posted)]));
      model.post(posted++, ev.src, ev.tag);
    } else {
      step("receiver: deliver");
      send_int(dev, ctl, ev.sender, ev.count, kGo);
      await(dev, ctl, ev.sender, kMarker);
      for (int k = 0; k < ev.count; ++k) model.arrive(p.msgs[ev.sender][sent[ev.sender]++]);
    }
    // Every receive the model has matched to an eager message is complete
    // now, every unmatched one is not.
    for (int rid = 0; rid < posted; ++rid) {
      if (reported[static_cast<std::size_t>(rid)]) continue;
      auto sm = model.match(rid);
      bool eager = sm.first < 0 || msg(sm).bytes <= dev.eager_limit();
      if (!eager) continue;
      bool flag = false;
      Status st;
      EXPECT_OK(dev, dev.request_get_status(reqs[static_cast<std::size_t>(rid)], &flag, &st));
      EXPECT_EQ(flag, sm.first >= 0) << "receive " << rid << " after event " << e << ": model says "
                                     << (sm.first >= 0 ? "matched" : "pending");
      if (flag && sm.first >= 0) {
        EXPECT_EQ(st.source, sm.first) << "receive " << rid << " after event " << e;
        reported[static_cast<std::size_t>(rid)] = true;
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  // Completion and content of every matched receive; cancel of the others.
  std::vector<std::pair<int, int>> result;
  for (int rid = 0; rid < posted; ++rid) {
    step("receiver: wait");
    auto sm = model.match(rid);
    Request*& r = reqs[static_cast<std::size_t>(rid)];
    Status st;
    if (sm.first < 0) EXPECT_OK(dev, dev.cancel(r));
    EXPECT_OK(dev, dev.wait(&r, &st));
    EXPECT_EQ(r, nullptr);
    if (sm.first < 0) {
      EXPECT_TRUE(st.cancelled) << "receive " << rid << " matched nothing in the model";
    } else {
      check_received("receive " + std::to_string(rid), st, bufs[static_cast<std::size_t>(rid)].data(), msg(sm));
    }
    result.push_back(sm);
  }
  // Messages nobody received: an ANY_SOURCE/ANY_TAG probe and receive see
  // them in arrival order.
  std::vector<unsigned char> b(p.capacity);
  for (const Msg& m : model.unexpected()) {
    step("receiver: drain leftovers");
    Status st;
    bool flag = false;
    EXPECT_OK(dev, dev.iprobe(kAnySource, kAnyTag, dev.world(), &flag, &st));
    EXPECT_TRUE(flag);
    EXPECT_EQ(st.source, m.src);
    EXPECT_EQ(st.tag, m.tag);
    EXPECT_EQ(st.bytes, m.bytes);
    EXPECT_OK(dev, dev.recv(b.data(), b.size(), byte(), kAnySource, kAnyTag, dev.world(), &st));
    check_received("leftover " + std::to_string(m.src) + ":" + std::to_string(m.idx), st, b.data(), m);
  }
  step("receiver: finish");
  send_int(dev, ctl, 1, -1, kGo);
  send_int(dev, ctl, 2, -1, kGo);
  return result;
}

void run_plan(Device& dev, const Plan& p, std::vector<std::pair<int, int>>* assignment = nullptr) {
  if (dev.rank() == 0) {
    auto a = receiver(dev, p);
    if (assignment) *assignment = a;
  } else {
    sender(dev, p);
  }
}

class Matching : public CoreTest {};

// Hand-made cases, each with the answer worked out by hand (which also
// checks the reference model).
struct Scripted {
  const char* script;
  std::vector<std::pair<int, int>> want;  // per receive: (sender, index), or (-1, -1)
};

TEST_P(Matching, ScriptedCases) {
  const std::vector<Scripted> cases = {
      // A wildcard posted first takes the first message; then posting order.
      {"r*.0 r1.0 r*.* s1.0 s1.0 s1.0", {{1, 0}, {1, 1}, {1, 2}}},
      // A specific receive does not take another source's message.
      {"r1.0 r*.0 s2.0 s1.0", {{1, 0}, {2, 0}}},
      // Receives posted late take the oldest matching unexpected message.
      {"s1.1 s2.0 s1.0 r*.0 r1.* r*.*", {{2, 0}, {1, 0}, {1, 1}}},
      // Non-overtaking: ANY_TAG gets the older message of the source.
      {"s1.5 s1.6 r1.6 r1.*", {{1, 1}, {1, 0}}},
      // A receive left without a message is cancelled.
      {"r*.3 s1.3 s2.3 r2.3 r*.*", {{1, 0}, {2, 0}, {-1, -1}}},
      // Exact and wildcard receives of the same source compete by posting order.
      {"r2.* r*.4 r2.4 s2.4 s2.4 s2.4", {{2, 0}, {2, 1}, {2, 2}}},
      // Rendezvous and synchronous messages follow the same order.
      {"r*.* s1.0L s2.0 r2.0 r1.0 s1.0S", {{1, 0}, {2, 0}, {1, 1}}},
      {"s1.7L s1.7 s2.7S r*.7 r*.7 r*.7", {{1, 0}, {1, 1}, {2, 0}}},
      {"r1.* r2.* r*.* s2.1 s2.2 s1.3L s1.4", {{1, 0}, {2, 0}, {2, 1}}},
      // A message no receive wants stays unexpected (drained at the end).
      {"s1.9 s2.8 r*.8", {{2, 0}}},
      // The first exact receive into an empty queue waits outside the hash
      // table (Matcher's solo slot): it stays the oldest, a wildcard and an
      // equal receive posted after it come next.
      {"r1.4 r*.4 r1.4 s1.4 s1.4 s1.4", {{1, 0}, {1, 1}, {1, 2}}},
      // A message the solo receive does not want goes to the table's.
      {"r1.7 r1.5 s1.5 s1.7", {{1, 1}, {1, 0}}},
      // Taken solo: a receive posted while older ones wait in the table
      // goes behind them.
      {"r1.3 r2.3 s1.3 r2.3 s2.3 s2.3", {{1, 0}, {2, 0}, {2, 1}}},
      // A solo receive left without a message is cancelled.
      {"r1.8 s2.8 r*.8", {{-1, -1}, {2, 0}}},
  };
  run(3, [&](Device& dev) {
    for (const Scripted& c : cases) {
      SCOPED_TRACE(c.script);
      std::vector<std::pair<int, int>> got;
      run_plan(dev, script_plan(c.script, dev.eager_limit()), &got);
      if (dev.rank() == 0) {
        EXPECT_EQ(got, c.want) << "the reference model disagrees with the hand-made answer";
      }
      if (::testing::Test::HasFailure()) return;
    }
  });
}

TEST_P(Matching, RandomInterleavings) {
  constexpr uint32_t kSeeds = 200;
  run(3, [&](Device& dev) {
    for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      run_plan(dev, random_plan(seed, dev.eager_limit()));
      if (::testing::Test::HasFailure()) return;
    }
  });
}

// Appends "s<source>.<tag> " to a script (by appends: GCC 12 -O3 reports a
// false -Wrestrict on "s" + std::to_string(...)).
void add_send(std::string& script, int source, int tag) {
  script.append("s").append(std::to_string(source)).append(".").append(std::to_string(tag)).append(" ");
}

// Many receives of every wildcard shape pending at once, then many arrivals:
// the posted queue with deep buckets.
TEST_P(Matching, DeepQueues) {
  run(3, [&](Device& dev) {
    std::string script;
    const char* shapes[] = {"r*.1", "r1.1", "r2.*", "r*.*", "r2.1", "r1.*", "r*.2"};
    for (int i = 0; i < 140; ++i) script += std::string(shapes[i % 7]) + " ";
    for (int i = 0; i < 80; ++i) add_send(script, 1 + i % 2, 1 + (i / 2) % 2);
    for (int i = 0; i < 80; ++i) add_send(script, 1 + (i / 3) % 2, i % 3);
    run_plan(dev, script_plan(script, dev.eager_limit()));
  });
}

// Hundreds of unexpected messages (the unexpected tables grow and rehash;
// messages with equal envelopes must keep their order), then receives of
// every wildcard shape.
TEST_P(Matching, ManyUnexpected) {
  run(3, [&](Device& dev) {
    std::string script;
    for (int block = 0; block < 60; ++block) {
      for (int i = 0; i < 10; ++i) {
        int s = 1 + block % 2, k = block * 10 + i;
        add_send(script, s, (k * 7) % 13);
      }
    }
    const char* shapes[] = {"r1.7", "r*.3", "r2.*", "r1.*", "r*.12", "r2.0", "r*.*"};
    for (int i = 0; i < 600; ++i) script += std::string(shapes[(i * 5) % 7]) + " ";
    run_plan(dev, script_plan(script, dev.eager_limit()));
  });
}

CORE_INSTANTIATE(Matching);

}  // namespace
