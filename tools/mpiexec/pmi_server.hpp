// The PMI-1 "simple" protocol state of one job, with no I/O: the job
// loop feeds it complete lines per rank and sends back what it returns.
// Keeping it pure lets unit tests drive every command without processes.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adi3::mpiexec {

struct PmiServerConfig {
  int size = 1;
  std::string kvsname;
  int appnum = 0;
  std::size_t key_max = 0;  // 0: the PMI defaults (64 / 1024)
  std::size_t value_max = 0;
  // What one rank may keep in the key-value space, so that no rank can grow
  // the launcher without bound (0: the defaults below).
  std::size_t keys_per_rank = 0;
  std::size_t bytes_per_rank = 0;
};
inline constexpr std::size_t kDefaultKeysPerRank = 1024;
inline constexpr std::size_t kDefaultBytesPerRank = std::size_t{1} << 20;  // keys and values

// What handling one line produced.
struct PmiOutcome {
  std::vector<std::pair<int, std::string>> replies;  // (rank, line) to send
  std::optional<int> abort_code;                     // the rank called abort
  std::optional<std::string> error;                  // protocol violation
};

class PmiServer {
 public:
  explicit PmiServer(PmiServerConfig config);
  // The node layout served as PMI_process_mapping (jobs across hosts);
  // unset: every rank on one node.
  void set_process_mapping(std::string mapping) { process_mapping_ = std::move(mapping); }

  PmiOutcome handle_line(int rank, std::string_view line);

  bool initialized(int rank) const { return ranks_.at(index(rank)).initialized; }
  bool finalized(int rank) const { return ranks_.at(index(rank)).finalized; }
  // Ranks currently blocked in barrier_in.
  int barrier_waiting() const { return barrier_count_; }

  std::size_t key_max() const { return key_max_; }
  std::size_t value_max() const { return value_max_; }

 private:
  struct RankState {
    bool initialized = false;
    bool in_barrier = false;
    bool finalized = false;
    std::size_t keys = 0, bytes = 0;  // what its puts hold in kvs_
  };
  struct Entry {
    std::string value;
    int owner;  // the rank whose put holds it (charged for it)
  };

  std::size_t index(int rank) const;
  std::optional<std::string> lookup(const std::string& key) const;

  PmiServerConfig config_;
  std::string process_mapping_;
  std::size_t key_max_;
  std::size_t value_max_;
  std::vector<RankState> ranks_;
  std::size_t keys_per_rank_;
  std::size_t bytes_per_rank_;
  std::map<std::string, Entry, std::less<>> kvs_;
  int barrier_count_ = 0;
};

}  // namespace adi3::mpiexec
