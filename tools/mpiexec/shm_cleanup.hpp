// Removal of shared-memory files a job left behind.
#pragma once

#include <string>
#include <vector>

namespace adi3::mpiexec {

// Naming contract with the shared-memory channel: every segment a job
// creates is /dev/shm/adi3-<PMI_JOBID>-<anything>. A rank killed by a
// signal (or the whole job stopped) cannot unlink its segments, so
// mpiexec calls this after every job, successful or not, to keep
// /dev/shm from filling up across test runs. Returns the names removed.
// dir is a parameter only so tests can point it elsewhere.
std::vector<std::string> remove_job_shm_files(const std::string& job_id, const std::string& dir = "/dev/shm");

}  // namespace adi3::mpiexec
