// shm_flood_budget: every rank but 0 floods rank 0 with eager-sized
// messages that rank 0 does not receive yet. With ADI3_UNEXPECTED_BYTES
// set, the senders run out of credit and fall back to rendezvous (their
// blocking sends then wait for the match), so rank 0's memory stays
// bounded; then rank 0 receives everything (ANY_SOURCE) and checks every
// byte and each sender's order.
//
//   mpiexec -n 4 shm_flood_budget [MESSAGES_PER_SENDER] [--report-only]
//
// Rank 0 reports its memory high-water mark (VmHWM) before and after the
// flood and fails when the growth exceeds the budget by more than the
// rings and a fixed slack; --report-only (for a run with no budget, to see
// the contrast) only reports.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"

namespace {

using adi3::Device;
using adi3::Request;
using adi3::SendMode;
using adi3::Status;

constexpr int kTag = 5;

// VmHWM of this process, in KiB.
long vm_hwm_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// Message k of a sender: between 0 and the eager limit, so that without
// the budget every one of them would be eager.
std::size_t size_of(int k, std::size_t eager) { return static_cast<std::size_t>(k) * 7919u % (eager + 1); }
uint32_t seed_of(int sender, int k) { return static_cast<uint32_t>(sender * 1000003 + k); }

void sender(Device& dev, int count) {
  const std::size_t eager = dev.eager_limit();
  std::vector<unsigned char> buf(eager);
  for (int k = 0; k < count; ++k) {
    const std::size_t n = size_of(k, eager);
    shm_test::fill_pattern(buf.data(), n, seed_of(dev.rank(), k));
    // Standard mode: complete once the data left while eager (so the flood
    // goes on), and waiting for the match once the credit ran out.
    SHM_OK(dev, dev.send(buf.data(), n, adi3::Datatype::byte(), 0, kTag, dev.world(), SendMode::Standard));
  }
}

void receiver(Device& dev, int count, bool report_only) {
  const std::size_t eager = dev.eager_limit();
  const int senders = dev.size() - 1;
  const long before = vm_hwm_kib();
  // Progress without receiving until the flood stalls (every sender out of
  // credit and blocked in a rendezvous send) or all of it has arrived.
  std::size_t depth = 0;
  auto still = std::chrono::steady_clock::now();
  const auto give_up = still + std::chrono::seconds(30);
  for (;;) {
    dev.progress();
    const auto now = std::chrono::steady_clock::now();
    if (dev.unexpected_depth() != depth) {
      depth = dev.unexpected_depth();
      still = now;
    }
    if (depth == static_cast<std::size_t>(senders) * static_cast<std::size_t>(count)) break;
    if (now - still > std::chrono::milliseconds(700) || now > give_up) break;
  }
  const long after = vm_hwm_kib();
  double flood_mib = 0;
  for (int k = 0; k < count; ++k) flood_mib += static_cast<double>(size_of(k, eager)) * senders / (1 << 20);
  std::printf(
      "flood: %d senders x %d messages (%.1f MiB, 0..%zu B each), budget %lld B (share %lld B per sender); "
      "rank 0 held %zu unexpected; VmHWM %ld KiB before, %ld KiB after the flood (+%ld KiB)\n",
      senders, count, flood_mib, eager, static_cast<long long>(dev.eager_share()) * dev.size(),
      static_cast<long long>(dev.eager_share()), depth, before, after, after - before);
  std::fflush(stdout);
  if (!report_only) {
    SHM_CHECK_MSG(dev, dev.eager_share() > 0, "run with ADI3_UNEXPECTED_BYTES set (or --report-only)");
    // Held: at most the budget, plus the rings from the senders filling up
    // (shared pages count in VmHWM), plus allocator slack.
    const char* rb = std::getenv("ADI3_SHM_RING_BYTES");
    const long ring_kib = (rb ? std::atol(rb) : 524288) / 1024;
    const long bound = static_cast<long>(dev.eager_share()) * dev.size() / 1024 + 2 * senders * ring_kib + 8192;
    SHM_CHECK_MSG(dev, after - before <= bound,
                  "VmHWM grew by " + std::to_string(after - before) + " KiB, bound " + std::to_string(bound) + " KiB");
    SHM_CHECK_MSG(dev, flood_mib * 1024 > 2.0 * static_cast<double>(bound), "the flood is too small to tell");
  }
  // Everything arrives, intact, in each sender's order.
  std::vector<int> next(static_cast<std::size_t>(dev.size()), 0);
  std::vector<unsigned char> buf(eager + 1);
  for (int i = 0; i < senders * count; ++i) {
    Status st;
    SHM_OK(dev, dev.recv(buf.data(), buf.size(), adi3::Datatype::byte(), adi3::kAnySource, kTag, dev.world(), &st));
    SHM_CHECK(dev, st.source >= 1 && st.source < dev.size());
    const int k = next[static_cast<std::size_t>(st.source)]++;
    SHM_CHECK_MSG(dev, k < count, "more messages than sent from rank " + std::to_string(st.source));
    SHM_CHECK_MSG(dev, st.bytes == size_of(k, eager),
                  "message " + std::to_string(k) + " from rank " + std::to_string(st.source) + " has " +
                      std::to_string(st.bytes) + " bytes, want " + std::to_string(size_of(k, eager)) +
                      " (lost or out of order)");
    SHM_PATTERN(dev, buf.data(), st.bytes, seed_of(st.source, k));
  }
  for (int s = 1; s < dev.size(); ++s) SHM_CHECK(dev, next[static_cast<std::size_t>(s)] == count);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 4000;
  bool report_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--report-only") == 0) {
      report_only = true;
    } else {
      count = std::atoi(argv[i]);
    }
  }
  std::unique_ptr<Device> dev;
  try {
    dev = adi3::init_process();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shm_flood_budget: %s\n", e.what());
    return 1;
  }
  Device& d = *dev;
  SHM_CHECK_MSG(d, d.size() >= 2, "needs at least 2 ranks");
  SHM_OK(d, d.barrier());
  if (d.rank() == 0) {
    receiver(d, count, report_only);
  } else {
    sender(d, count);
  }
  SHM_OK(d, d.finalize());
  SHM_CHECK_MSG(d, d.live_requests() == 0, std::to_string(d.live_requests()) + " requests live at the end");
  SHM_CHECK(d, d.posted_depth() == 0 && d.unexpected_depth() == 0);
  // Every credit came back: nothing is left unexpected, so each sender's
  // credit toward rank 0 is within half a share of full.
  if (d.rank() != 0 && d.eager_share() > 0) {
    SHM_CHECK_MSG(d, d.eager_credit(0) > d.eager_share() / 2 - static_cast<int64_t>(adi3::EagerCredits::kMessageCost),
                  "credit toward rank 0 is " + std::to_string(d.eager_credit(0)));
  }
  if (d.rank() == 0) std::printf("flood_budget: passed on %d ranks\n", d.size());
  return 0;
}
