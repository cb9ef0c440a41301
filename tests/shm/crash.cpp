// shm_crash: a job in which rank 1 dies while rank 0 waits for a large
// message from it. Run by crash_test.sh, which checks how fast the job
// ends, what is reported and that /dev/shm holds nothing of the job.
//
//   mpiexec -n 2 shm_crash abort|kill9|watch|orphan
//
// abort: rank 1 calls abort_process (MPI_Abort) before sending.
// kill9: rank 1 is killed by SIGKILL in the middle of a streamed transfer.
// watch: rank 1 vanishes (_exit without finalize, which the launcher does
//        not treat as a failure) before it sends, so nothing but rank 0's
//        own channel can notice: the wait must fail with ERR_PROC_FAILED
//        naming the dead rank, and later sends to it must fail.
#include <signal.h>
#include <unistd.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "adi3/process.hpp"

namespace {

constexpr std::size_t kBig = std::size_t{256} << 20;

long long realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void say(const char* fmt, long long v, const std::string& s = {}) {
  std::printf(fmt, v, s.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "abort" && mode != "kill9" && mode != "watch" && mode != "orphan") {
    std::fprintf(stderr, "usage: shm_crash abort|kill9|watch|orphan\n");
    return 2;
  }
  auto dev = adi3::init_process();
  adi3::Device& d = *dev;
  const auto* byte = adi3::Datatype::byte();
  if (mode == "orphan") {
    char b = 0;
    say("WAITING %lld%s\n", d.rank());
    int e = d.recv(&b, 1, byte, (d.rank() + 1) % d.size(), 9, d.world(), nullptr);
    std::fprintf(stderr, "rank %d: %s\n", d.rank(), e ? d.errors().message(e).c_str() : "received?");
    return 3;
  }
  if (d.size() != 2) {
    std::fprintf(stderr, "shm_crash needs 2 ranks\n");
    return 2;
  }
  if (d.rank() == 0) say("JOB %lld %s\n", 0, std::string(adi3::process_job_id(d)));
  d.barrier();

  std::vector<char> buf(kBig, 1);
  if (d.rank() == 1) {
    if (mode != "kill9") {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 0 sleeps in its wait by now
      say("DIE_AT %lld%s\n", realtime_ns());
      if (mode == "watch") _exit(0);
      adi3::abort_process(d, 7, "rank 1: deliberate abort while rank 0 waits for 256 MiB");
    }
    // Start the transfer, let some of it flow, then die without a word.
    adi3::Request* r = nullptr;
    d.isend(buf.data(), kBig, byte, 0, 1, d.world(), adi3::SendMode::Standard, &r);
    for (int i = 0; i < 200; ++i) d.progress();
    say("DIE_AT %lld%s\n", realtime_ns());
    raise(SIGKILL);
  }

  auto t0 = std::chrono::steady_clock::now();
  adi3::Status st;
  int e = d.recv(buf.data(), kBig, byte, 1, 1, d.world(), &st);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (e) {
    say("DETECTED_AT %lld: %s\n", realtime_ns(), d.errors().message(e));
    say("DETECTED after %lld ms of waiting\n", static_cast<long long>(ms));
    int s = d.send(buf.data(), 10, byte, 1, 2, d.world());
    say("SEND_AFTER %lld: %s\n", s != 0, s ? d.errors().message(s) : std::string("succeeded"));
    if (mode == "watch") return 0;  // the Device ends without finalize (a rank is gone)
  } else {
    say("RECEIVED %lld bytes%s\n", static_cast<long long>(st.bytes));
  }
  // Wait for the launcher's SIGKILL; never finalize a job that lost a rank.
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}
