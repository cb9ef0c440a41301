// PMI-1 "simple" client: the bootstrap channel between a rank and its
// launcher (our mpiexec or MPICH's Hydra), spoken over the socket the
// launcher passes in PMI_FD.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace adi3 {

namespace pmi {
class WireCommand;
}

class PmiClient {
 public:
  // Connects to the launcher named by PMI_FD / PMI_RANK / PMI_SIZE and
  // performs the init handshake. Returns nullptr when PMI_FD is unset:
  // a singleton run, which callers treat as rank 0 of 1. Throws
  // std::runtime_error when the variables are malformed or the
  // launcher does not answer as PMI-1.
  static std::unique_ptr<PmiClient> from_environment();

  // Takes ownership of fd (a connected PMI socket) and performs the
  // handshake. Exposed for tests that run a server in-process.
  PmiClient(int fd, int rank, int size);
  ~PmiClient();

  PmiClient(const PmiClient&) = delete;
  PmiClient& operator=(const PmiClient&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& kvsname() const { return kvsname_; }
  // Unique per job: PMI_JOBID from our mpiexec, else the KVS name
  // (Hydra does not set PMI_JOBID). Used to name per-job resources.
  const std::string& job_id() const { return job_id_; }
  // Longest key / value kvs_put accepts, after wire encoding.
  std::size_t max_key_length() const { return key_max_ - 1; }
  std::size_t max_value_length() const { return value_max_ - 1; }

  // Publishes key=value. Any bytes are allowed, but bytes outside
  // [A-Za-z0-9-_.:,/+@()[]] take three wire bytes each; throws
  // std::length_error when the encoded form exceeds the launcher's
  // limits and std::runtime_error when the launcher refuses it.
  void kvs_put(std::string_view key, std::string_view value);
  // Makes every rank's earlier puts visible to every rank. PMI-1 puts
  // go straight to the server, so commit is a no-op and this is a barrier.
  void kvs_fence();
  // Value another rank published before the last fence, or nullopt.
  std::optional<std::string> kvs_get(std::string_view key);
  // Blocks until every rank of the job has entered the barrier.
  void barrier();
  // Tells the launcher to kill the whole job with exit status code,
  // prints msg on stderr, and exits this process. Never returns.
  [[noreturn]] void abort(int code, std::string_view msg);
  // Tells the launcher this rank is done; the object is unusable after.
  void finalize();

 private:
  pmi::WireCommand request(const pmi::WireCommand& cmd, std::string_view expected);
  void send_line(const std::string& line);
  std::string read_line();
  void handshake();
  void check_open() const;

  std::mutex mutex_;  // one request/response exchange at a time
  int fd_ = -1;
  int rank_ = 0;
  int size_ = 1;
  bool finalized_ = false;
  std::string kvsname_;
  std::string job_id_;
  std::size_t key_max_ = 0;
  std::size_t value_max_ = 0;
  std::string inbuf_;  // bytes read past the last newline
};

}  // namespace adi3
