#include "pmi_server.hpp"

#include "adi3/bootstrap/pmi_wire.hpp"

#include <stdexcept>

namespace adi3::mpiexec {

using pmi::WireCommand;

PmiServer::PmiServer(PmiServerConfig config)
    : config_(std::move(config)),
      key_max_(config_.key_max != 0 ? config_.key_max : pmi::kDefaultKeyMax),
      value_max_(config_.value_max != 0 ? config_.value_max : pmi::kDefaultValueMax),
      ranks_(static_cast<std::size_t>(config_.size)),
      keys_per_rank_(config_.keys_per_rank != 0 ? config_.keys_per_rank : kDefaultKeysPerRank),
      bytes_per_rank_(config_.bytes_per_rank != 0 ? config_.bytes_per_rank : kDefaultBytesPerRank) {
  if (config_.size < 1) {
    throw std::invalid_argument("PmiServer: size must be positive");
  }
}

std::size_t PmiServer::index(int rank) const {
  if (rank < 0 || rank >= config_.size) {
    throw std::out_of_range("PmiServer: no rank " + std::to_string(rank));
  }
  return static_cast<std::size_t>(rank);
}

std::optional<std::string> PmiServer::lookup(const std::string& key) const {
  if (auto it = kvs_.find(key); it != kvs_.end()) {
    return it->second.value;
  }
  // MPICH-derived clients read the node layout from this key; without
  // --hosts every rank of ours runs on this one node.
  if (key == "PMI_process_mapping") {
    if (!process_mapping_.empty()) return process_mapping_;
    return "(vector,(0,1," + std::to_string(config_.size) + "))";
  }
  return std::nullopt;
}

PmiOutcome PmiServer::handle_line(int rank, std::string_view line) {
  RankState& state = ranks_.at(index(rank));
  PmiOutcome out;
  auto reply = [&](const WireCommand& cmd) { out.replies.emplace_back(rank, cmd.format()); };

  std::optional<WireCommand> parsed;
  try {
    parsed.emplace(WireCommand::parse(line));
  } catch (const std::exception&) {
    out.error = "malformed PMI line '" + std::string(line) + "'";
    return out;
  }
  const WireCommand& cmd = *parsed;
  const std::string& name = cmd.name();

  if (name == "init") {
    bool v1 = cmd.get_int("pmi_version") == 1;
    state.initialized = v1;
    reply(WireCommand("response_to_init").add("pmi_version", 1).add("pmi_subversion", 1).add("rc", v1 ? 0 : -1));
    if (!v1) {
      out.error =
          "requested PMI version " + std::string(cmd.get("pmi_version").value_or("?")) + "; only version 1 is served";
    }
  } else if (name == "get_maxes") {
    reply(WireCommand("maxes")
              .add("kvsname_max", static_cast<long long>(pmi::kDefaultKvsnameMax))
              .add("keylen_max", static_cast<long long>(key_max_))
              .add("vallen_max", static_cast<long long>(value_max_))
              .add("rc", 0));
  } else if (name == "get_my_kvsname") {
    reply(WireCommand("my_kvsname").add("kvsname", config_.kvsname).add("rc", 0));
  } else if (name == "get_universe_size") {
    reply(WireCommand("universe_size").add("size", config_.size).add("rc", 0));
  } else if (name == "get_appnum") {
    reply(WireCommand("appnum").add("appnum", config_.appnum).add("rc", 0));
  } else if (name == "put") {
    auto kvsname = cmd.get("kvsname");
    auto key = cmd.get("key");
    auto value = cmd.get("value");
    WireCommand result("put_result");
    if (!key || !value || key->empty() || value->empty()) {
      result.add("rc", -1).add("msg", "missing_key_or_value");
    } else if (kvsname != config_.kvsname) {
      result.add("rc", -1).add("msg", "unknown_kvsname");
    } else if (key->size() >= key_max_ || value->size() >= value_max_) {
      result.add("rc", -1).add("msg", "key_or_value_too_long");
    } else {
      // Later puts of the same key replace earlier ones, as in Hydra; the
      // rank of the latest put is charged for it.
      auto it = kvs_.find(*key);
      const bool replaces_own = it != kvs_.end() && it->second.owner == rank;
      const std::size_t keys = state.keys + (replaces_own ? 0 : 1);
      const std::size_t bytes =
          state.bytes + key->size() + value->size() - (replaces_own ? key->size() + it->second.value.size() : 0);
      if (keys > keys_per_rank_ || bytes > bytes_per_rank_) {
        result.add("rc", -1).add("msg", "rank_" + std::to_string(rank) + "_exceeds_its_limit_of_" +
                                            std::to_string(keys_per_rank_) + "_keys_or_" +
                                            std::to_string(bytes_per_rank_) + "_bytes");
        out.error = "rank " + std::to_string(rank) + " put more than its " + std::to_string(keys_per_rank_) +
                    " keys or " + std::to_string(bytes_per_rank_) + " bytes into the key-value space (refused)";
      } else {
        if (it != kvs_.end() && !replaces_own) {
          RankState& old = ranks_[static_cast<std::size_t>(it->second.owner)];
          old.keys -= 1;
          old.bytes -= key->size() + it->second.value.size();
        }
        state.keys = keys;
        state.bytes = bytes;
        kvs_.insert_or_assign(std::string(*key), Entry{std::string(*value), rank});
        result.add("rc", 0).add("msg", "success");
      }
    }
    reply(result);
  } else if (name == "get") {
    auto key = cmd.get("key");
    std::optional<std::string> value;
    if (key && cmd.get("kvsname") == config_.kvsname) {
      value = lookup(std::string(*key));
    }
    if (value) {
      reply(WireCommand("get_result").add("rc", 0).add("msg", "success").add("value", *value));
    } else {
      reply(WireCommand("get_result")
                .add("rc", -1)
                .add("msg", "key_" + pmi::encode_token(key.value_or("")) + "_not_found")
                .add("value", "unknown"));
    }
  } else if (name == "barrier_in") {
    if (state.in_barrier) {
      out.error = "entered a barrier twice";
      return out;
    }
    state.in_barrier = true;
    if (++barrier_count_ == config_.size) {
      barrier_count_ = 0;
      for (int r = 0; r < config_.size; ++r) {
        ranks_[static_cast<std::size_t>(r)].in_barrier = false;
        out.replies.emplace_back(r, WireCommand("barrier_out").format());
      }
    }
  } else if (name == "finalize") {
    state.finalized = true;
    reply(WireCommand("finalize_ack"));
  } else if (name == "abort") {
    // No reply: the launcher answers an abort by ending the job.
    out.abort_code = static_cast<int>(cmd.get_int("exitcode").value_or(1));
  } else {
    out.error = "unsupported PMI command '" + name + "'";
  }
  return out;
}

}  // namespace adi3::mpiexec
