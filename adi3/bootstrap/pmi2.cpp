// PMI-2 client as a Bootstrap (Slurm's srun --mpi=pmi2, Hydra). The
// launcher's socket comes from PMI_FD, or from PMI_PORT (host:port, with
// PMI_ID naming us) when the launcher runs in port mode.
#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "adi3/bootstrap/common.hpp"
#include "adi3/bootstrap/pmi2_wire.hpp"
#include "adi3/bootstrap/pmi_wire.hpp"
#include "adi3/bootstrap/wires.hpp"

namespace adi3 {
namespace {

std::runtime_error error(const std::string& what) { return std::runtime_error("PMI-2: " + what); }

std::optional<long> env_number(const char* name) {
  const char* t = std::getenv(name);
  if (!t) return std::nullopt;
  long v = -1;
  auto [end, ec] = std::from_chars(t, t + std::strlen(t), v);
  if (ec != std::errc() || *end != '\0' || end == t || v < 0) {
    throw error(std::string(name) + "='" + t + "' is not a non-negative integer");
  }
  return v;
}

int connect_port(const std::string& hostport) {
  auto colon = hostport.rfind(':');
  if (colon == std::string::npos || colon == 0) throw error("PMI_PORT='" + hostport + "' is not host:port");
  std::string host = hostport.substr(0, colon), port = hostport.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    throw error("cannot resolve PMI_PORT='" + hostport + "': " + gai_strerror(rc));
  }
  int fd = -1, err = 0;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) throw error("cannot connect to PMI_PORT='" + hostport + "': " + std::strerror(err));
  return fd;
}

class Pmi2Bootstrap final : public BootstrapCommon {
 public:
  Pmi2Bootstrap() {
    take_secret_from_environment();
    std::optional<long> id;
    if (auto fd = env_number("PMI_FD")) {
      if (fcntl(static_cast<int>(*fd), F_SETFD, FD_CLOEXEC) != 0) {
        throw error("PMI_FD=" + std::to_string(*fd) + " is not an open descriptor: " + std::strerror(errno));
      }
      fd_ = static_cast<int>(*fd);
      id = env_number("PMI_RANK");
    } else if (const char* port = std::getenv("PMI_PORT")) {
      fd_ = connect_port(port);
      id = env_number("PMI_ID");
    } else {
      throw error("neither PMI_FD nor PMI_PORT is set (no PMI-2 launcher started this process)");
    }
    try {
      handshake(id);
    } catch (...) {
      close(fd_);
      throw;
    }
  }
  ~Pmi2Bootstrap() override {
    if (fd_ >= 0) close(fd_);
  }

  std::string_view wire() const override { return "pmi2"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& job_id() const override { return job_id_; }
  std::size_t max_key_length() const override { return pmi2::kKeyMax - 1; }
  std::size_t max_value_length() const override { return pmi2::kValueMax - 1; }

  void put(std::string_view key, std::string_view value) override {
    std::string k = pmi::encode_token(key), v = pmi::encode_token(value);
    if (key.empty() || k.size() > max_key_length()) {
      throw std::length_error("PMI-2: key '" + std::string(key) + "' is empty or longer than " +
                              std::to_string(max_key_length()) + " bytes once encoded");
    }
    if (v.size() > max_value_length()) {
      throw std::length_error("PMI-2: value for key '" + std::string(key) + "' is " + std::to_string(v.size()) +
                              " bytes once encoded; the limit is " + std::to_string(max_value_length()));
    }
    request(pmi2::Message{"kvs-put", {}}.add("key", k).add("value", v), "kvs-put-response");
  }
  void fence() override { request(pmi2::Message{"kvs-fence", {}}, "kvs-fence-response"); }
  std::optional<std::string> get_from(int, std::string_view key) override {
    std::string k = pmi::encode_token(key);
    if (key.empty() || k.size() > max_key_length()) return std::nullopt;
    auto r = request(pmi2::Message{"kvs-get", {}}.add("jobid", job_id_).add("srcid", "-1").add("key", k),
                     "kvs-get-response", /*rc_must_be_zero=*/false);
    auto v = r.get("value");
    if (r.get_int("rc").value_or(-1) != 0 || !r.get_bool("found") || !v) return std::nullopt;
    return pmi::decode_token(*v);
  }
  // PMI-2 has no barrier command, and a fence is not one everywhere:
  // Hydra answers kvs-fence at once and instead holds a get of a missing
  // key until every rank has fenced as often as the asker. So: fence, then
  // ask for a key nobody puts. Slurm's fence is already a barrier (the get
  // then answers "not found" at once).
  void barrier() override {
    fence();
    get_from(-1, "adi3.pmi2.barrier.never-put");
  }

  std::optional<std::string> job_attr(std::string_view key) {
    auto r =
        request(pmi2::Message{"info-getjobattr", {}}.add("key", std::string(key)), "info-getjobattr-response", false);
    auto v = r.get("value");
    if (r.get_int("rc").value_or(-1) != 0 || !r.get_bool("found") || !v) return std::nullopt;
    return std::string(*v);
  }

  [[noreturn]] void abort(int code, std::string_view msg) override {
    std::fprintf(stderr, "adi3: rank %d aborting with code %d: %.*s\n", rank_, code, static_cast<int>(msg.size()),
                 msg.data());
    std::fflush(stderr);
    {
      std::lock_guard lock(mutex_);
      if (!finalized_) {
        try {
          send_all(pmi2::frame(pmi2::Message{"abort", {}}.add("isworldabort", "TRUE").add("msg", std::string(msg))));
        } catch (const std::exception&) {
          // The launcher is gone; the exit status is all that is left.
        }
      }
    }
    int status = code & 0xff;
    std::_Exit(status == 0 ? 1 : status);
  }
  void finalize() override {
    request(pmi2::Message{"finalize", {}}, "finalize-response");
    std::lock_guard lock(mutex_);
    finalized_ = true;
  }

 private:
  void handshake(std::optional<long> id) {
    send_all(pmi::WireCommand("init").add("pmi_version", 2).add("pmi_subversion", 0).format());
    auto init = pmi::WireCommand::parse(read_line());
    if (init.name() != "response_to_init" || init.get_int("rc").value_or(-1) != 0 ||
        init.get_int("pmi_version").value_or(-1) != 2) {
      throw error("the launcher does not serve PMI version 2 (it answered '" + init.format().substr(0, 200) +
                  "'); use ADI3_PMI=pmi1");
    }
    pmi2::Message full{"fullinit", {}};
    // Slurm requires pmijobid (its PMI_JOBID) and pmirank; Hydra reads pmirank.
    if (const char* jobid = std::getenv("PMI_JOBID"); jobid && *jobid) full.add("pmijobid", jobid);
    if (id) full.add("pmirank", std::to_string(*id));
    full.add("threaded", "FALSE");
    auto r = request(full, "fullinit-response");
    auto rank = r.get_int("rank"), size = r.get_int("size");
    if (!rank || !size || *size < 1 || *size > (1 << 24) || *rank < 0 || *rank >= *size) {
      throw error("fullinit answered an invalid rank/size (rank=" + std::string(r.get("rank").value_or("?")) +
                  " size=" + std::string(r.get("size").value_or("?")) + ")");
    }
    rank_ = static_cast<int>(*rank);
    size_ = static_cast<int>(*size);
    auto jid = request(pmi2::Message{"job-getid", {}}, "job-getid-response");
    job_id_ = std::string(jid.get("jobid").value_or(""));
    if (job_id_.empty()) throw error("job-getid answered no job id");
  }

  pmi2::Message request(const pmi2::Message& m, std::string_view expected, bool rc_must_be_zero = true) {
    std::lock_guard lock(mutex_);
    if (finalized_) throw error("used after finalize");
    send_all(pmi2::frame(m));
    pmi2::Message r = pmi2::parse(read_message());
    if (r.cmd != expected) {
      throw error("sent '" + m.cmd + "', expected '" + std::string(expected) + "' but got '" + r.cmd + "'");
    }
    if (rc_must_be_zero && r.get_int("rc").value_or(-1) != 0) {
      throw error("'" + m.cmd +
                  "' failed: " + std::string(r.get("errmsg").value_or(r.get("msg").value_or("no reason given"))));
    }
    return r;
  }

  void send_all(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw error(std::string("cannot write to the launcher: ") + std::strerror(errno));
      sent += static_cast<std::size_t>(n);
    }
  }

  void read_exact(char* buf, std::size_t len) {
    std::size_t got = 0;
    while (got < len) {
      ssize_t n = ::recv(fd_, buf + got, len - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw error(std::string("cannot read from the launcher: ") + std::strerror(errno));
      if (n == 0) throw error("the launcher closed the connection");
      got += static_cast<std::size_t>(n);
    }
  }

  // The init answer is a PMI-1 line; read it a byte at a time so nothing
  // of the framed messages after it is consumed.
  std::string read_line() {
    std::string line;
    char c = 0;
    for (;;) {
      read_exact(&c, 1);
      if (c == '\n') return line;
      if (line.size() >= pmi::kMaxLineLength) throw error("the launcher sent an overlong init line");
      line += c;
    }
  }

  std::string read_message() {
    char header[6];
    read_exact(header, sizeof header);
    std::size_t len = 0, i = 0;
    while (i < sizeof header && header[i] == ' ') ++i;  // tolerate right-aligned lengths
    for (; i < sizeof header && header[i] >= '0' && header[i] <= '9'; ++i) len = len * 10 + (header[i] - '0');
    for (; i < sizeof header; ++i) {
      if (header[i] != ' ') throw error("bad length field '" + std::string(header, sizeof header) + "'");
    }
    if (len == 0 || len > pmi2::kMaxMessage) throw error("bad message length " + std::to_string(len));
    std::string body(len, '\0');
    read_exact(body.data(), len);
    return body;
  }

  std::mutex mutex_;  // one request/response at a time
  int fd_ = -1;
  int rank_ = 0;
  int size_ = 1;
  bool finalized_ = false;
  std::string job_id_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmi2_bootstrap() {
  auto boot = std::make_unique<Pmi2Bootstrap>();
  std::optional<NodeMap> map;
  if (auto text = boot->job_attr("PMI_process_mapping")) map = parse_process_mapping(*text, boot->size());
  boot->learn_layout(std::move(map));
  return boot;
}

}  // namespace adi3
