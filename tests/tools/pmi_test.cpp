// Rank program for the launcher tests; the first argument picks a
// scenario (default "exchange"). Exits 0 on success, prints why not.
//
//   exchange            every rank puts a key, fences, reads all others
//   abort R             rank R calls PmiClient::abort(3, ...); the rest block
//   sigkill R           rank R SIGKILLs itself; the rest block
//   exit R CODE         rank R exits CODE before finalize; the rest block
//                       (these three print "failing at <steady ns>" first;
//                       with a trailing "ignore-term" the rest ignore SIGTERM)
//   exit-after R CODE   everybody finalizes, then rank R exits CODE
//   print               writes tagged lines to stdout and stderr
//   env                 prints ADI3_CHANNEL, ADI3_TEST_VAR and PMI_JOBID
//   shm                 creates /dev/shm/adi3-<jobid>-rank<R> and leaves it
//   sleep SECONDS       sleeps, for timeout and signal tests
#include "adi3/bootstrap/pmi_client.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

// Characters the wire format cannot carry raw, to prove the escaping.
std::string value_for(int rank) {
  return "rank " + std::to_string(rank) + " = 100% \\ ; \n\t" + std::string(40, static_cast<char>('a' + rank % 26));
}

int exchange(adi3::PmiClient& pmi) {
  int r = pmi.rank();
  pmi.kvs_put("key-" + std::to_string(r), value_for(r));
  pmi.kvs_put("empty-" + std::to_string(r), "");
  // The longest plain value the launcher allows must round-trip.
  pmi.kvs_put("long-" + std::to_string(r), std::string(pmi.max_value_length(), 'x'));
  bool refused = false;
  try {
    pmi.kvs_put("too-long", std::string(pmi.max_value_length() + 1, 'x'));
  } catch (const std::length_error&) {
    refused = true;
  }
  if (!refused) {
    std::cerr << "rank " << r << ": over-long value was not refused\n";
    return 1;
  }
  pmi.kvs_fence();
  for (int peer = 0; peer < pmi.size(); ++peer) {
    auto value = pmi.kvs_get("key-" + std::to_string(peer));
    auto empty = pmi.kvs_get("empty-" + std::to_string(peer));
    auto long_value = pmi.kvs_get("long-" + std::to_string(peer));
    if (value != value_for(peer) || empty != std::string() || long_value != std::string(pmi.max_value_length(), 'x')) {
      std::cerr << "rank " << r << ": wrong value for rank " << peer << ": '" << value.value_or("<none>") << "'\n";
      return 1;
    }
  }
  if (pmi.kvs_get("no-such-key")) {
    std::cerr << "rank " << r << ": a missing key was found\n";
    return 1;
  }
  pmi.barrier();
  if (r == 0) {
    std::cout << "pmi_test: OK (" << pmi.size() << " ranks)" << std::endl;
  }
  pmi.finalize();
  return 0;
}

int arg_int(const std::vector<std::string>& args, std::size_t i) {
  if (i >= args.size()) {
    throw std::runtime_error("missing argument " + std::to_string(i));
  }
  return std::stoi(args[i]);
}

int run(const std::vector<std::string>& args) {
  std::string mode = args.empty() ? "exchange" : args[0];
  auto pmi = adi3::PmiClient::from_environment();
  if (!pmi) {
    // Singleton: nothing to exchange with, but the program still works.
    std::cout << "pmi_test: OK (singleton)" << std::endl;
    return 0;
  }
  int r = pmi->rank();

  if (mode == "exchange") {
    return exchange(*pmi);
  }
  if (mode == "abort" || mode == "sigkill" || mode == "exit") {
    if (std::find(args.begin(), args.end(), "ignore-term") != args.end()) {
      std::signal(SIGTERM, SIG_IGN);  // forces the launcher to escalate
    }
    pmi->barrier();  // everyone is up (and ignoring SIGTERM) before the failure
    if (r == arg_int(args, 1)) {
      auto now = std::chrono::steady_clock::now().time_since_epoch();
      std::cerr << "pmi_test: rank " << r << " failing at "
                << std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() << std::endl;
      if (mode == "abort") {
        pmi->abort(3, "pmi_test requested abort");
      }
      if (mode == "sigkill") {
        ::kill(::getpid(), SIGKILL);
      }
      std::_Exit(arg_int(args, 2));
    }
    pmi->barrier();  // never completes: the launcher must stop us
    std::cerr << "rank " << r << ": barrier completed unexpectedly\n";
    return 1;
  }
  if (mode == "exit-after") {
    pmi->barrier();
    pmi->finalize();
    return r == arg_int(args, 1) ? arg_int(args, 2) : 0;
  }
  if (mode == "print") {
    std::cout << "out line from " << r << "\n";
    std::cout << "second out line from " << r << std::endl;
    std::cerr << "err line from " << r << std::endl;
    std::cout << "unterminated " << r << std::flush;
  } else if (mode == "env") {
    const char* channel = std::getenv("ADI3_CHANNEL");
    const char* var = std::getenv("ADI3_TEST_VAR");
    std::cout << "channel=" << (channel ? channel : "<unset>") << " var=" << (var ? var : "<unset>")
              << " jobid=" << pmi->job_id() << std::endl;
  } else if (mode == "shm") {
    std::string path = "/dev/shm/adi3-" + pmi->job_id() + "-rank" + std::to_string(r);
    std::ofstream file(path);
    if (!(file << "left behind\n")) {
      std::cerr << "pmi_test: cannot create " << path << "\n";
      return 1;
    }
    std::cout << path << std::endl;
  } else if (mode == "sleep") {
    ::sleep(static_cast<unsigned>(arg_int(args, 1)));
  } else {
    std::cerr << "pmi_test: unknown mode '" << mode << "'\n";
    return 2;
  }
  pmi->finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "pmi_test: " << e.what() << std::endl;
    return 1;
  }
}
