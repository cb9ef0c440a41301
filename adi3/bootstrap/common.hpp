// Pieces shared by the Bootstrap implementations: the node layout (from
// the launcher's PMI_process_mapping or PMIx node ids, else by exchanging
// host ids through the key-value space) and the job secret.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "adi3/bootstrap/bootstrap.hpp"

namespace adi3 {

// Parses MPICH's PMI_process_mapping, "(vector,(node,nodes,ranks_per_node),...)":
// the blocks, repeated in order, deal ranks_per_node consecutive ranks to
// each of nodes consecutive node ids until all `size` ranks are placed.
// nullopt (with *why set) for text that is malformed or places no rank.
std::optional<NodeMap> parse_process_mapping(std::string_view text, int size, std::string* why = nullptr);

// This host's identity: ADI3_HOST_ID if set, else hostname:boot_id (the
// boot id tells apart machines that share a host name).
std::string host_identity();

// Base of every wire: holds the layout and the secret.
class BootstrapCommon : public Bootstrap {
 public:
  const NodeMap& node_map() const override { return map_; }
  const std::optional<std::string>& job_secret() const override { return secret_; }

  // Called once, after connecting, by every rank: uses the launcher's
  // layout when given and consistent, else publishes host_identity(),
  // fences and reads everyone's (one extra fence at start-up).
  void learn_layout(std::optional<NodeMap> from_launcher);

 protected:
  // ADI3_JOB_SECRET (from our mpiexec), removed from the environment so
  // programs the rank starts do not inherit it.
  void take_secret_from_environment();

  std::optional<std::string> secret_;

 private:
  NodeMap map_;
};

}  // namespace adi3
