// What a process learns from the launcher that started it, whatever the
// wire: PMI-1 (our mpiexec, Hydra, Slurm's pmi2 plugin), PMI-2 (Slurm's
// srun --mpi=pmi2, Hydra), PMIx (Open MPI's mpirun, srun --mpi=pmix,
// through libpmix in a separately built module), or nothing (a singleton).
//
// make_bootstrap() picks the wire from the environment (ADI3_PMI forces
// one). Every launcher-provided fact the runtime uses goes through this
// interface: rank, size, job id, key-value exchange, fences, the node
// layout, the job secret and the abort path.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adi3/config.hpp"

namespace adi3 {

// Which ranks share a host. Node indices are dense, 0..nodes-1.
struct NodeMap {
  std::vector<int> node_of;  // node index of every rank
  int nodes = 1;
  std::string source;  // where it came from, for adi3_info and errors

  // The ranks on `node`, ascending.
  std::vector<int> ranks_on(int node) const;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // "pmi1", "pmi2", "pmix" or "singleton".
  virtual std::string_view wire() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The launcher's name for the job (unique among its jobs; any bytes).
  virtual const std::string& job_id() const = 0;

  // Publish key=value; visible to every rank after the next fence().
  // Throws std::length_error past max_key_length()/max_value_length().
  virtual void put(std::string_view key, std::string_view value) = 0;
  // Collective: commits this rank's puts and waits for everyone's.
  virtual void fence() = 0;
  // A value some rank put before the last fence, or nullopt. PMIx files
  // values under the rank that put them: get_from() names it and costs one
  // lookup, get() searches every rank there (PMI-1/2 have one flat space).
  virtual std::optional<std::string> get_from(int owner, std::string_view key) = 0;
  std::optional<std::string> get(std::string_view key) { return get_from(-1, key); }
  // Collective: returns once every rank has entered it.
  virtual void barrier() = 0;
  virtual std::size_t max_key_length() const = 0;
  virtual std::size_t max_value_length() const = 0;

  // Node layout (from the launcher, or learned by exchanging host ids).
  virtual const NodeMap& node_map() const = 0;
  int node() const { return node_map().node_of.at(static_cast<std::size_t>(rank())); }
  std::vector<int> local_ranks() const { return node_map().ranks_on(node()); }
  int local_rank() const;
  int local_size() const { return static_cast<int>(local_ranks().size()); }

  // A secret shared by the ranks of this job only, when the launcher
  // provides one (our mpiexec does, in ADI3_JOB_SECRET); nullopt else.
  virtual const std::optional<std::string>& job_secret() const = 0;

  // Ends the whole job with `code` (prints msg on stderr first). Never returns.
  [[noreturn]] virtual void abort(int code, std::string_view msg) = 0;
  // This rank is done with the launcher; the object is unusable after.
  virtual void finalize() = 0;
};

// ADI3_PMI, ADI3_HOST_ID.
std::span<const Knob> bootstrap_knobs();

// The wire the environment calls for ("pmi1", "pmi2", "pmix" or
// "singleton"), honouring ADI3_PMI; throws std::runtime_error on a bad
// ADI3_PMI value.
std::string detect_wire();

// Connects to the launcher chosen by detect_wire(). Throws
// std::runtime_error with the reason when the launcher cannot be reached
// or the wire is not available in this build (PMIx without libpmix).
std::unique_ptr<Bootstrap> make_bootstrap();

}  // namespace adi3
