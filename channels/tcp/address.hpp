// Where a rank's TCP channel listens and what it tells its peers.
#pragma once
#include <string>

namespace adi3::tcp {

struct ListenPlan {
  std::string bind_ip;       // "0.0.0.0" only when all interfaces were asked for
  std::string advertise_ip;  // what peers dial
};

// ADI3_TCP_IF (an interface name) wins, then ADI3_TCP_ADDRESS (an IPv4
// address, or "*" / 0.0.0.0 for every interface); by default loopback for a
// one-host job, else the first non-loopback interface that is up. Throws
// std::runtime_error naming the bad value.
ListenPlan plan_listen(const std::string& interface, const std::string& address, bool many_hosts);

}  // namespace adi3::tcp
