#include "adi3/bootstrap/pmi_client.hpp"

#include "adi3/bootstrap/pmi_auth.hpp"
#include "adi3/bootstrap/pmi_wire.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace adi3 {
namespace {

std::runtime_error pmi_error(const std::string& what) { return std::runtime_error("PMI: " + what); }

std::string errno_text(int err) { return std::strerror(err); }

// Parses a non-negative decimal environment variable; nullopt if unset.
std::optional<int> pmi_env_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) {
    return std::nullopt;
  }
  int value = -1;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || ptr == text || value < 0) {
    throw pmi_error(std::string(name) + "='" + text + "' is not a non-negative integer");
  }
  return value;
}

// One line from fd (without its newline), at most max bytes, within the
// deadline; throws with what went wrong.
std::string read_line(int fd, std::size_t max, int timeout_ms, const char* what) {
  std::string line;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw pmi_error(std::string(what) + ": no answer within " + std::to_string(timeout_ms) + " ms");
    char c;
    ssize_t got = ::read(fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw pmi_error(std::string(what) + ": the connection closed");
    if (c == '\n') return line;
    if (line.size() >= max) throw pmi_error(std::string(what) + ": line longer than " + std::to_string(max) + " bytes");
    line += c;
  }
}

void write_text(int fd, const std::string& text, const char* what) {
  std::size_t at = 0;
  while (at < text.size()) {
    ssize_t n = ::send(fd, text.data() + at, text.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw pmi_error(std::string(what) + ": " + errno_text(errno));
    at += static_cast<std::size_t>(n);
  }
}

// ADI3_PMI_PORT=host:port (mpiexec --launcher ssh): connects, proves this
// rank holds the job's secret and checks that the server does too
// (adi3/bootstrap/pmi_auth.hpp). The secret is ADI3_JOB_SECRET, or the
// first line of standard input with ADI3_JOB_SECRET_STDIN=1 (mpiexec
// writes it there, so it appears on no command line); it is put back
// into ADI3_JOB_SECRET for the bootstrap, which takes it from there.
int connect_port(const std::string& where, int rank) {
  std::string secret;
  if (const char* s = std::getenv("ADI3_JOB_SECRET"); s && *s) {
    secret = s;
  } else if (const char* in = std::getenv("ADI3_JOB_SECRET_STDIN"); in && std::strcmp(in, "1") == 0) {
    secret = read_line(STDIN_FILENO, 256, 30000, "reading the job secret from standard input");
    ::setenv("ADI3_JOB_SECRET", secret.c_str(), 1);
  }
  ::unsetenv("ADI3_JOB_SECRET_STDIN");
  if (secret.empty()) throw pmi_error("ADI3_PMI_PORT is set but this rank was given no job secret");
  const auto colon = where.rfind(':');
  if (colon == std::string::npos || colon == 0) throw pmi_error("ADI3_PMI_PORT='" + where + "' is not host:port");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(where.substr(0, colon).c_str(), where.substr(colon + 1).c_str(), &hints, &res)) {
    throw pmi_error("cannot resolve ADI3_PMI_PORT='" + where + "': " + gai_strerror(rc));
  }
  int fd = -1, err = 0;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    int one = 1;  // PMI is request and reply: no Nagle delay
    if (fd >= 0) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) throw pmi_error("cannot connect to ADI3_PMI_PORT='" + where + "': " + errno_text(err));
  try {
    auto challenge = pmi::WireCommand::parse(read_line(fd, 512, 30000, "PMI port challenge"));
    auto nonce = challenge.get("nonce");
    if (challenge.name() != "adi3_challenge" || !nonce || nonce->size() != 2 * pmi_auth::kNonceBytes) {
      throw pmi_error("the server at " + where + " did not send an adi3 challenge (not our mpiexec?)");
    }
    const std::string cnonce = pmi_auth::random_nonce();
    write_text(fd,
               pmi::WireCommand("adi3_auth")
                   .add("rank", rank)
                   .add("cnonce", cnonce)
                   .add("proof", pmi_auth::proof(secret, pmi_auth::kClient, *nonce, cnonce, rank))
                   .format(),
               "PMI port authentication");
    auto ok = pmi::WireCommand::parse(read_line(fd, 512, 30000, "PMI port authentication"));
    auto proof = ok.get("proof");
    if (ok.name() != "adi3_auth_ok" || !proof ||
        !pmi_auth::same(*proof, pmi_auth::proof(secret, pmi_auth::kServer, *nonce, cnonce, rank))) {
      throw pmi_error("the server at " + where + " refused this rank or could not prove it holds the job secret");
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

}  // namespace

std::unique_ptr<PmiClient> PmiClient::from_environment() {
  auto fd = pmi_env_int("PMI_FD");
  const char* port = std::getenv("ADI3_PMI_PORT");
  if (!fd && !port) {
    if (std::getenv("PMI_PORT") != nullptr) {
      throw pmi_error("PMI_PORT is set but only PMI_FD launchers are supported");
    }
    return nullptr;
  }
  auto rank = pmi_env_int("PMI_RANK");
  auto size = pmi_env_int("PMI_SIZE");
  if (!rank || !size) {
    throw pmi_error(std::string(fd ? "PMI_FD" : "ADI3_PMI_PORT") + " is set but PMI_RANK or PMI_SIZE is missing");
  }
  if (*size < 1 || *rank >= *size) {
    throw pmi_error("PMI_RANK=" + std::to_string(*rank) + " is out of range for PMI_SIZE=" + std::to_string(*size));
  }
  if (!fd) return std::make_unique<PmiClient>(connect_port(port, *rank), *rank, *size);
  // Programs this rank execs must not inherit the launcher's socket.
  if (::fcntl(*fd, F_SETFD, FD_CLOEXEC) != 0) {
    throw pmi_error("PMI_FD=" + std::to_string(*fd) + " is not an open descriptor: " + errno_text(errno));
  }
  return std::make_unique<PmiClient>(*fd, *rank, *size);
}

PmiClient::PmiClient(int fd, int rank, int size) : fd_(fd), rank_(rank), size_(size) {
  try {
    handshake();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

PmiClient::~PmiClient() {
  // Deliberately no implicit finalize: a launcher must see a rank that
  // unwinds without finalize() as one that did not finish cleanly.
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void PmiClient::handshake() {
  auto init = request(pmi::WireCommand("init").add("pmi_version", 1).add("pmi_subversion", 1), "response_to_init");
  if (init.get_int("pmi_version").value_or(-1) != 1) {
    throw pmi_error("launcher does not speak PMI version 1");
  }

  auto maxes = request(pmi::WireCommand("get_maxes"), "maxes");
  key_max_ = static_cast<std::size_t>(maxes.get_int("keylen_max").value_or(pmi::kDefaultKeyMax));
  value_max_ = static_cast<std::size_t>(maxes.get_int("vallen_max").value_or(pmi::kDefaultValueMax));
  if (key_max_ < 2 || value_max_ < 2) {
    throw pmi_error("launcher reported unusable limits keylen_max=" + std::to_string(key_max_) +
                    " vallen_max=" + std::to_string(value_max_));
  }

  auto name = request(pmi::WireCommand("get_my_kvsname"), "my_kvsname");
  auto kvsname = name.get("kvsname");
  if (!kvsname || kvsname->empty()) {
    throw pmi_error("launcher sent no kvsname");
  }
  kvsname_ = std::string(*kvsname);
  const char* jobid = std::getenv("PMI_JOBID");
  job_id_ = (jobid != nullptr && *jobid != '\0') ? std::string(jobid) : kvsname_;
}

void PmiClient::check_open() const {
  if (finalized_) {
    throw pmi_error("client used after finalize()");
  }
}

void PmiClient::kvs_put(std::string_view key, std::string_view value) {
  std::string wire_key = pmi::encode_token(key);
  std::string wire_value = pmi::encode_token(value);
  if (key.empty() || wire_key.size() > max_key_length()) {
    throw std::length_error("PMI: key '" + std::string(key) + "' is empty or longer than " +
                            std::to_string(max_key_length()) + " bytes once encoded");
  }
  if (wire_value.size() > max_value_length()) {
    throw std::length_error("PMI: value for key '" + std::string(key) + "' is " + std::to_string(wire_value.size()) +
                            " bytes once encoded; the limit is " + std::to_string(max_value_length()));
  }
  std::lock_guard lock(mutex_);
  check_open();
  auto reply = request(pmi::WireCommand("put").add("kvsname", kvsname_).add("key", wire_key).add("value", wire_value),
                       "put_result");
  if (reply.get_int("rc").value_or(-1) != 0) {
    throw pmi_error("put of key '" + std::string(key) +
                    "' refused: " + std::string(reply.get("msg").value_or("no reason given")));
  }
}

void PmiClient::kvs_fence() { barrier(); }

std::optional<std::string> PmiClient::kvs_get(std::string_view key) {
  std::string wire_key = pmi::encode_token(key);
  if (key.empty() || wire_key.size() > max_key_length()) {
    return std::nullopt;  // could never have been put
  }
  std::lock_guard lock(mutex_);
  check_open();
  auto reply = request(pmi::WireCommand("get").add("kvsname", kvsname_).add("key", wire_key), "get_result");
  auto value = reply.get("value");
  if (reply.get_int("rc").value_or(-1) != 0 || !value) {
    return std::nullopt;
  }
  return pmi::decode_token(*value);
}

void PmiClient::barrier() {
  std::lock_guard lock(mutex_);
  check_open();
  request(pmi::WireCommand("barrier_in"), "barrier_out");
}

void PmiClient::abort(int code, std::string_view msg) {
  // Print first: Hydra discards the reason, and the launcher may kill
  // us as soon as it reads the abort.
  std::fprintf(stderr, "adi3: rank %d aborting with code %d: %.*s\n", rank_, code, static_cast<int>(msg.size()),
               msg.data());
  std::fflush(stderr);
  {
    std::lock_guard lock(mutex_);
    if (!finalized_) {
      try {
        send_line(pmi::WireCommand("abort").add("exitcode", code).format());
      } catch (const std::exception&) {
        // The launcher is gone; exiting non-zero is all we can do.
      }
    }
  }
  // An exit status keeps 8 bits; never let an abort look like success.
  int status = code & 0xff;
  std::_Exit(status == 0 ? 1 : status);
}

void PmiClient::finalize() {
  std::lock_guard lock(mutex_);
  check_open();
  request(pmi::WireCommand("finalize"), "finalize_ack");
  finalized_ = true;
}

pmi::WireCommand PmiClient::request(const pmi::WireCommand& cmd, std::string_view expected) {
  send_line(cmd.format());
  auto reply = pmi::WireCommand::parse(read_line());
  if (reply.name() != expected) {
    throw pmi_error("sent '" + cmd.name() + "', expected reply '" + std::string(expected) + "' but got '" +
                    reply.name() + "'");
  }
  return reply;
}

void PmiClient::send_line(const std::string& line) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    // MSG_NOSIGNAL: a dead launcher must become an exception, not SIGPIPE.
    ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw pmi_error("cannot write to the launcher: " + errno_text(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
}

std::string PmiClient::read_line() {
  for (;;) {
    auto newline = inbuf_.find('\n');
    if (newline != std::string::npos) {
      std::string line = inbuf_.substr(0, newline);
      inbuf_.erase(0, newline + 1);
      return line;
    }
    if (inbuf_.size() > pmi::kMaxLineLength) {
      throw pmi_error("launcher sent a line longer than " + std::to_string(pmi::kMaxLineLength) + " bytes");
    }
    char chunk[4096];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw pmi_error("cannot read from the launcher: " + errno_text(errno));
    }
    if (n == 0) {
      throw pmi_error("the launcher closed the connection");
    }
    inbuf_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace adi3
