// The PMI server's TCP port for ranks on other hosts (--launcher ssh):
// they cannot inherit a socket, so they connect here and authenticate
// with the job secret (adi3/bootstrap/pmi_auth.hpp) before their
// connection carries PMI-1. A connection that fails (garbage, a wrong
// proof, a rank out of range, not started remotely or already connected,
// silence for kAuthTimeout) is closed and logged; the job goes on.
#pragma once

#include "unique_fd.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <poll.h>

namespace adi3::mpiexec {

class PmiPort {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kAuthTimeout{10};
  static constexpr std::size_t kMaxPending = 64;

  // Listens on the IPv4 address of interface iface (empty: the address
  // this host's name resolves to, if it is not a loopback one). Throws
  // std::runtime_error with the reason. expected[r]: rank r may connect.
  PmiPort(const std::string& iface, std::string secret, std::vector<bool> expected);

  // "a.b.c.d:port", for ADI3_PMI_PORT.
  const std::string& address() const { return address_; }

  // The descriptors to poll (the listener first, then pending connections).
  void add_poll_fds(std::vector<pollfd>& fds) const;
  // Handles the events of those descriptors (the same order); returns the
  // connections that authenticated, as (rank, socket). Refusals go to log.
  std::vector<std::pair<int, UniqueFd>> handle(const pollfd* fds, std::size_t n,
                                               const std::function<void(const std::string&)>& log);
  // Closes connections past their deadline; the next deadline, if any.
  std::optional<Clock::time_point> expire(const std::function<void(const std::string&)>& log);

 private:
  struct Pending {
    UniqueFd fd;
    std::string peer;  // "ip:port", for logs
    std::string nonce;
    std::string in;
    Clock::time_point deadline;
  };
  void accept_all(const std::function<void(const std::string&)>& log);
  // true: done with it (authenticated into *out, or refused).
  bool read_pending(Pending& p, std::optional<std::pair<int, UniqueFd>>* out,
                    const std::function<void(const std::string&)>& log);

  std::string secret_;
  std::vector<bool> expected_;
  UniqueFd listener_;
  std::string address_;
  std::vector<Pending> pending_;
};

}  // namespace adi3::mpiexec
