// Point-to-point test bodies that run as processes over a process channel
// (shm by default). Each works for any number of ranks >= 2 and is run by
// shm_p2p (driver.cpp) under mpiexec with 2, 4 and 8 processes.
#pragma once
#include <span>

#include "adi3/device.hpp"

namespace shm_test {

struct Body {
  const char* name;
  void (*run)(adi3::Device&);
  const char* about;
};

std::span<const Body> p2p_bodies();

}  // namespace shm_test
