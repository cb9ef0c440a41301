// A blocking client socket to "ip:port", for tests that talk to a port by
// hand (a tcp channel's or mpiexec's PMI port): the channel tests and
// hosts_check's intruders.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace adi3::tcp::testing {

// The connected socket, receives timing out after 5 s; -1 when the address
// has no port or nothing accepts there.
inline int dial(const std::string& where) {
  auto colon = where.rfind(':');
  if (colon == std::string::npos) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(where.substr(colon + 1))));
  inet_pton(AF_INET, where.substr(0, colon).c_str(), &a.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval limit{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

}  // namespace adi3::tcp::testing
