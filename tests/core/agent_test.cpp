// The progress agent (type 2 over type 1, emul/agent.*): a rank that
// computes outside the library still answers rendezvous and eager traffic
// when its agent runs; an idle agent sleeps on the doorbell and uses no CPU
// to speak of; ADI3_ASYNC_PROGRESS decides whether it may run; a device
// whose agent started mid-run (locks turned on at run time) stays correct
// under traffic from the user thread and the agent at once (TSan suite).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "emul/agent.hpp"
#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::Request;
using adi3::Status;
using Clock = std::chrono::steady_clock;

class AgentTest : public CoreTest {};

constexpr int kGo = 50, kDone = 51;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

TEST_P(AgentTest, ComputingRankStillReceives) {
  run(2, [](Device& dev) {
    adi3::Comm ctl = ctl_comm(dev);
    const std::size_t big = 1 << 20;
    if (dev.rank() == 1) {
      ASSERT_TRUE(dev.port().require_agent("test: receiver computes"));
      ASSERT_TRUE(dev.port().agent_running());
      EXPECT_EQ(dev.port().agent_reason(), "test: receiver computes");
      EXPECT_TRUE(dev.threads_enabled());
      std::vector<unsigned char> a(big), b(100);
      Request* reqs[2] = {nullptr, nullptr};
      ASSERT_OK(dev, dev.irecv(a.data(), big, byte(), 0, 1, dev.world(), &reqs[0]));
      ASSERT_OK(dev, dev.irecv(b.data(), b.size(), byte(), 0, 2, dev.world(), &reqs[1]));
      notify(dev, ctl, 0, kGo);
      // "Compute": no library call until rank 0 is done or 5 s passed.
      auto t0 = Clock::now();
      while (!reqs[0]->complete() || !reqs[1]->complete()) {
        if (ms_since(t0) > 5000) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      EXPECT_TRUE(reqs[0]->complete() && reqs[1]->complete()) << "the agent did not complete the receives";
      ASSERT_OK(dev, dev.waitall(2, reqs, nullptr));
      EXPECT_TRUE(has_pattern(a.data(), big, 3));
      EXPECT_TRUE(has_pattern(b.data(), b.size(), 4));
      await(dev, ctl, 0, kDone);
    } else {
      std::vector<unsigned char> a = pattern(big, 3), b = pattern(100, 4);
      await(dev, ctl, 1, kGo);
      ASSERT_OK(dev, dev.send(a.data(), big, byte(), 1, 1, dev.world()));  // rendezvous: needs the receiver
      ASSERT_OK(dev, dev.send(b.data(), b.size(), byte(), 1, 2, dev.world()));
      notify(dev, ctl, 1, kDone);
    }
  });
}

TEST_P(AgentTest, IdleAgentSleeps) {
  run(1, [](Device& dev) {
    ASSERT_TRUE(dev.port().require_agent("test: idle"));
    EXPECT_TRUE(dev.port().require_agent("again")) << "idempotent";
    EXPECT_EQ(dev.port().agent_reason(), "test: idle");
    adi3::Agent* agent = dev.port().agent();
    ASSERT_NE(agent, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    double cpu0 = agent->cpu_seconds();
    uint64_t sleeps0 = agent->doorbell_sleeps();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    double cpu = agent->cpu_seconds() - cpu0;
    uint64_t sleeps = agent->doorbell_sleeps() - sleeps0;
    // Asleep on the doorbell, waking a few times per second at most.
    EXPECT_LT(cpu, 0.02) << "an idle agent used " << cpu * 1000 << " ms of CPU in 500 ms";
    EXPECT_LE(sleeps, 10u);
  });
}

TEST_P(AgentTest, SettingDecidesWhetherItRuns) {
  adi3::InprocFabric fabric(1);
  adi3::Config off = GetParam().config;
  off.async_progress = adi3::AsyncProgress::Off;
  {
    Device dev(fabric.channel(0), off);
    EXPECT_FALSE(dev.port().require_agent("test"));
    EXPECT_FALSE(dev.port().agent_running());
    EXPECT_EQ(dev.threads_enabled(), off.thread_multiple) << "no agent, no locks";
  }
  adi3::InprocFabric fabric2(1);
  adi3::Config on = GetParam().config;
  on.async_progress = adi3::AsyncProgress::On;
  Device dev(fabric2.channel(0), on);
  EXPECT_TRUE(dev.port().agent_running());
  EXPECT_TRUE(dev.threads_enabled());
  EXPECT_EQ(dev.port().agent_reason(), "ADI3_ASYNC_PROGRESS=on");
  adi3::Config automatic = GetParam().config;
  adi3::InprocFabric fabric3(1);
  Device lazy(fabric3.channel(0), automatic);
  EXPECT_FALSE(lazy.port().agent_running()) << "auto starts the agent only on need";
  EXPECT_EQ(lazy.threads_enabled(), automatic.thread_multiple);
}

// A misspelt mode is an error naming the value (as ADI3_PMI), not a silent
// default.
TEST(AgentSetting, UnknownAsyncProgressModeIsAnError) {
  const char* old = std::getenv("ADI3_ASYNC_PROGRESS");
  std::string saved = old ? old : "";
  setenv("ADI3_ASYNC_PROGRESS", "sometimes", 1);
  try {
    (void)adi3::Config::from_env();
    ADD_FAILURE() << "ADI3_ASYNC_PROGRESS=sometimes was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'sometimes'"), std::string::npos) << e.what();
  }
  setenv("ADI3_ASYNC_PROGRESS", "off", 1);
  EXPECT_EQ(adi3::Config::from_env().async_progress, adi3::AsyncProgress::Off);
  if (old) {
    setenv("ADI3_ASYNC_PROGRESS", saved.c_str(), 1);
  } else {
    unsetenv("ADI3_ASYNC_PROGRESS");
  }
}

// The agent's long idle sleep ends when work is announced (rma's Hub::poke
// sets a flag, then wakes the doorbell only if someone sleeps there): the
// sleep's condition includes the flag, looked at under the doorbell after
// the sleep is announced, so a poke between the agent's look at the flag
// and its sleep is not left for the sleep's end. The channel side: an idle
// sleep (WaitCondition::idle, not a blocking call's) whose condition holds
// returns at once. The agent side: pokes timed to land as the agent heads
// for its sleep are all served (their wait is printed; a missed one took
// the 200 ms sleep, which the machine's load can also cost, so only a poke
// never served fails).
struct PokeHook {
  std::atomic<bool> due{false};
  std::atomic<int> runs{0};
};

bool poke_hook(void* ctx) {
  auto* h = static_cast<PokeHook*>(ctx);
  if (!h->due.load(std::memory_order_acquire)) return false;
  h->due.store(false, std::memory_order_relaxed);
  h->runs.fetch_add(1, std::memory_order_release);
  return true;
}

TEST_P(AgentTest, IdleSleepEndsOnItsCondition) {
  run(1, [](Device& dev) {
    std::atomic<bool> flag{true};
    auto set = [&] { return flag.load(std::memory_order_seq_cst); };
    adi3::WaitCondition c = adi3::WaitCondition::of(set);
    c.idle = true;
    for (int i = 0; i < 20; ++i) {
      const auto t0 = Clock::now();
      dev.channel().wait_until(std::chrono::seconds(20), c);
      EXPECT_LT(ms_since(t0), 5000) << "an idle sleep whose condition held slept on";
    }
  });
}

TEST_P(AgentTest, PokesAsTheAgentHeadsForItsSleepAreServed) {
  run(1, [](Device& dev) {
    ASSERT_TRUE(dev.port().require_agent("test: pokes"));
    adi3::Agent* agent = dev.port().agent();
    PokeHook hook;
    const int id = dev.port().add_progress_hook(&poke_hook, &hook, true);
    agent->watch_hooks(&hook.due);
    constexpr int kPokes = 300;
    int late = 0;
    double worst = 0;
    uint64_t seen = agent->doorbell_sleeps();
    for (int i = 0; i < kPokes; ++i) {
      // After the last poke's hook the agent heads for its sleep: poke as
      // it counts that sleep (if we read the count too late, after 2 ms).
      const auto t_look = Clock::now();
      while (agent->doorbell_sleeps() == seen && ms_since(t_look) < 2) {
      }
      const int before = hook.runs.load(std::memory_order_acquire);
      const auto t0 = Clock::now();
      if (!hook.due.exchange(true, std::memory_order_acq_rel)) dev.channel().wake();
      dev.port().wake_hooks();
      while (hook.runs.load(std::memory_order_acquire) == before && ms_since(t0) < 20000) {
      }
      seen = agent->doorbell_sleeps();
      ASSERT_NE(hook.runs.load(), before) << "poke " << i << " was not served in 20 s";
      worst = std::max(worst, ms_since(t0));
      late += ms_since(t0) > 100;
    }
    agent->watch_hooks(nullptr);
    dev.port().remove_progress_hook(id);
    std::printf("%d pokes: %d waited over 100 ms, worst %.1f ms\n", kPokes, late, worst);
  });
}

// Traffic of every size both ways while both agents run and the user
// threads poll too, with a progress hook added and removed meanwhile.
bool count_hook(void* ctx) {
  static_cast<std::atomic<int>*>(ctx)->fetch_add(1, std::memory_order_relaxed);
  return false;
}

TEST_P(AgentTest, TrafficWithAgentStartedMidRun) {
  run(2, [](Device& dev) {
    const int peer = 1 - dev.rank();
    const std::size_t sizes[] = {0, 8, 200, 4000, 40000, 300000};
    auto exchange = [&](int round) {
      std::vector<std::vector<unsigned char>> out, in;
      std::vector<Request*> reqs;
      for (std::size_t k = 0; k < std::size(sizes); ++k) {
        int tag = round * 16 + static_cast<int>(k);
        out.push_back(pattern(sizes[k], static_cast<uint32_t>(tag * 2 + dev.rank())));
        in.emplace_back(sizes[k]);
        Request* r = nullptr;
        ASSERT_OK(dev, dev.irecv(in.back().data(), sizes[k], byte(), peer, tag, dev.world(), &r));
        reqs.push_back(r);
        ASSERT_OK(dev, dev.isend(out.back().data(), sizes[k], byte(), peer, tag, dev.world(),
                                 k % 2 ? adi3::SendMode::Synchronous : adi3::SendMode::Standard, &r));
        reqs.push_back(r);
      }
      ASSERT_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr));
      for (std::size_t k = 0; k < std::size(sizes); ++k) {
        int tag = round * 16 + static_cast<int>(k);
        EXPECT_TRUE(has_pattern(in[k].data(), sizes[k], static_cast<uint32_t>(tag * 2 + peer)));
      }
    };
    exchange(0);  // before: no locks unless thread-multiple
    ASSERT_TRUE(dev.port().require_agent("test: mid-run"));
    std::atomic<int> hook_runs{0};
    int hook = dev.port().add_progress_hook(&count_hook, &hook_runs);
    for (int round = 1; round < 30; ++round) exchange(round);
    dev.port().remove_progress_hook(hook);
    int after = hook_runs.load();
    EXPECT_GT(after, 0);
    dev.progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(hook_runs.load(), after) << "a removed hook ran";
  });
}

CORE_INSTANTIATE(AgentTest);

}  // namespace
