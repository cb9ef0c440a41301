#include "pmi_port.hpp"

#include "adi3/bootstrap/pmi_auth.hpp"
#include "adi3/bootstrap/pmi_wire.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace adi3::mpiexec {
namespace {

std::runtime_error error(const std::string& what) { return std::runtime_error("PMI port: " + what); }

// The IPv4 address to listen on.
in_addr pick_address(const std::string& iface) {
  if (!iface.empty()) {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) throw error(std::string("getifaddrs: ") + std::strerror(errno));
    std::optional<in_addr> found;
    for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && iface == i->ifa_name) {
        found = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
      }
    }
    ::freeifaddrs(list);
    if (!found) throw error("interface '" + iface + "' has no IPv4 address (--iface)");
    return *found;
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host, nullptr, &hints, &res) == 0) {
    for (addrinfo* a = res; a; a = a->ai_next) {
      in_addr x = reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr;
      if ((ntohl(x.s_addr) >> 24) != 127) {
        ::freeaddrinfo(res);
        return x;
      }
    }
    ::freeaddrinfo(res);
  }
  throw error(std::string("this host's name '") + host +
              "' resolves to no non-loopback IPv4 address: name the interface remote ranks reach with --iface");
}

std::string describe(const sockaddr_in& a) {
  char ip[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(a.sin_port));
}

void send_line(int fd, const std::string& text) {
  // Small and the first thing on the socket: it fits the send buffer.
  [[maybe_unused]] ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

PmiPort::PmiPort(const std::string& iface, std::string secret, std::vector<bool> expected)
    : secret_(std::move(secret)), expected_(std::move(expected)) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr = pick_address(iface);
  listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener_.valid()) throw error(std::string("socket: ") + std::strerror(errno));
  if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_.get(), 128) != 0) {
    throw error("cannot listen on " + describe(a) + ": " + std::strerror(errno));
  }
  socklen_t len = sizeof a;
  ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len);
  address_ = describe(a);
}

void PmiPort::add_poll_fds(std::vector<pollfd>& fds) const {
  fds.push_back({listener_.get(), POLLIN, 0});
  for (const Pending& p : pending_) fds.push_back({p.fd.get(), POLLIN, 0});
}

void PmiPort::accept_all(const std::function<void(const std::string&)>& log) {
  for (;;) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or a connection that went away meanwhile
    UniqueFd sock(fd);
    int one = 1;  // PMI is request and reply: no Nagle delay
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (pending_.size() >= kMaxPending) {
      log("refused a PMI connection from " + describe(a) + ": too many connections are authenticating");
      continue;
    }
    Pending p{std::move(sock), describe(a), pmi_auth::random_nonce(), {}, Clock::now() + kAuthTimeout};
    send_line(p.fd.get(), pmi::WireCommand("adi3_challenge").add("nonce", p.nonce).format());
    pending_.push_back(std::move(p));
  }
}

bool PmiPort::read_pending(Pending& p, std::optional<std::pair<int, UniqueFd>>* out,
                           const std::function<void(const std::string&)>& log) {
  auto refuse = [&](const std::string& why) {
    log("refused a PMI connection from " + p.peer + ": " + why);
    return true;
  };
  char buf[512];
  ssize_t n = ::recv(p.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) return refuse("it closed the connection before authenticating");
  p.in.append(buf, static_cast<std::size_t>(n));
  const auto nl = p.in.find('\n');
  if (nl == std::string::npos) {
    return p.in.size() > 512 ? refuse("its first line is longer than 512 bytes") : false;
  }
  if (nl + 1 != p.in.size()) return refuse("it sent more than its authentication before the answer");
  std::optional<pmi::WireCommand> cmd;
  try {
    cmd = pmi::WireCommand::parse(std::string_view(p.in).substr(0, nl));
  } catch (const std::exception&) {
    return refuse("it did not send a PMI command");
  }
  if (cmd->name() != "adi3_auth") return refuse("it sent '" + cmd->name() + "' instead of adi3_auth");
  auto rank = cmd->get_int("rank");
  auto cnonce = cmd->get("cnonce");
  auto proof = cmd->get("proof");
  if (!rank || *rank < 0 || *rank >= static_cast<long long>(expected_.size())) {
    return refuse("it claims a rank out of range");
  }
  const int r = static_cast<int>(*rank);
  if (!cnonce || cnonce->size() != 2 * pmi_auth::kNonceBytes || !proof ||
      !pmi_auth::same(*proof, pmi_auth::proof(secret_, pmi_auth::kClient, p.nonce, *cnonce, r))) {
    return refuse("it claims rank " + std::to_string(r) + " but did not prove it holds this job's secret");
  }
  if (!expected_[static_cast<std::size_t>(r)]) {
    return refuse("rank " + std::to_string(r) +
                  " is not expected to connect (already connected, or not started "
                  "on another host)");
  }
  expected_[static_cast<std::size_t>(r)] = false;
  send_line(p.fd.get(), pmi::WireCommand("adi3_auth_ok")
                            .add("proof", pmi_auth::proof(secret_, pmi_auth::kServer, p.nonce, *cnonce, r))
                            .format());
  // The PMI loop reads it with MSG_DONTWAIT and replies blocking.
  ::fcntl(p.fd.get(), F_SETFL, ::fcntl(p.fd.get(), F_GETFL) & ~O_NONBLOCK);
  out->emplace(r, std::move(p.fd));
  return true;
}

std::vector<std::pair<int, UniqueFd>> PmiPort::handle(const pollfd* fds, std::size_t n,
                                                      const std::function<void(const std::string&)>& log) {
  std::vector<std::pair<int, UniqueFd>> done;
  if (n == 0) return done;
  // Pending connections first (their indices follow the listener's).
  std::vector<bool> finished(pending_.size(), false);
  for (std::size_t i = 1; i < n && i - 1 < pending_.size(); ++i) {
    if (!fds[i].revents || fds[i].fd != pending_[i - 1].fd.get()) continue;
    std::optional<std::pair<int, UniqueFd>> ok;
    finished[i - 1] = read_pending(pending_[i - 1], &ok, log);
    if (ok) done.push_back(std::move(*ok));
  }
  std::size_t keep = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (finished[i]) continue;
    if (keep != i) pending_[keep] = std::move(pending_[i]);  // never onto itself: that would empty it
    ++keep;
  }
  pending_.resize(keep);
  if (fds[0].revents) accept_all(log);
  return done;
}

std::optional<PmiPort::Clock::time_point> PmiPort::expire(const std::function<void(const std::string&)>& log) {
  const auto now = Clock::now();
  std::optional<Clock::time_point> next;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].deadline <= now) {
      log("refused a PMI connection from " + pending_[i].peer + ": it did not authenticate within " +
          std::to_string(kAuthTimeout.count()) + " s");
      continue;
    }
    if (!next || pending_[i].deadline < *next) next = pending_[i].deadline;
    if (keep != i) pending_[keep] = std::move(pending_[i]);
    ++keep;
  }
  pending_.resize(keep);
  return next;
}

}  // namespace adi3::mpiexec
