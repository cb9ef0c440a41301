// A rank's inbox as mapped in this process, for tests that write into a
// peer's inbox as a buggy or hostile process could (found through
// /proc/self/maps: the names are unlinked, the mappings stay).
#pragma once
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "channels/shm/inbox.hpp"

namespace shm_test {

inline char* find_inbox(int owner) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/dev/shm/adi3-") == std::string::npos) continue;
    uintptr_t start = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    auto* h = reinterpret_cast<adi3::shm::InboxHeader*>(start);
    if (h->magic == adi3::shm::kInboxMagic && h->owner == owner) return reinterpret_cast<char*>(start);
  }
  return nullptr;
}

// How those tests fail: a line naming what went wrong, and exit status 1.
inline int fail(const char* what) {
  std::printf("FAIL: %s\n", what);
  std::fflush(stdout);
  return 1;
}

}  // namespace shm_test
