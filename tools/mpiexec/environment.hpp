// Environment and identity handed to each rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace adi3::mpiexec {

// The launcher's own environment without PMI_* variables, so ranks of a
// job started from inside another PMI job (Hydra, or us) cannot pick up
// the outer job's settings.
std::vector<std::string> inherited_environment(const char* const* envp);

// Sets or replaces NAME=value in a "NAME=value" list.
void set_env(std::vector<std::string>& env, std::string_view name, std::string_view value);

// NAME's value in env ("" when absent).
std::string env_value(const std::vector<std::string>& env, std::string_view name);

// Removes NAME from env.
void drop_env(std::vector<std::string>& env, std::string_view name);

// Unique job id: "<mpiexec pid>-<8 random hex digits>". It only holds
// [0-9a-f-], so it can be embedded in file and KVS names.
std::string make_job_id();

// 32 random bytes as 64 hex digits, handed to the ranks in
// ADI3_JOB_SECRET (the runtime takes it out of its environment) so they
// can authenticate each other's connections.
std::string make_job_secret();

}  // namespace adi3::mpiexec
