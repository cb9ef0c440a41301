#include "shm_cleanup.hpp"

#include <filesystem>
#include <system_error>

namespace adi3::mpiexec {

std::vector<std::string> remove_job_shm_files(const std::string& job_id, const std::string& dir) {
  std::vector<std::string> removed;
  if (job_id.empty()) {
    return removed;  // an empty id would match every job's files
  }
  const std::string prefix = "adi3-" + job_id + "-";
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return removed;  // no /dev/shm here: nothing can have been left
  }
  // Collect first: unlinking while readdir() walks is unspecified.
  std::vector<std::filesystem::path> matches;
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().rfind(prefix, 0) == 0) {
      matches.push_back(it->path());
    }
  }
  for (const auto& path : matches) {
    std::error_code remove_ec;
    if (std::filesystem::remove(path, remove_ec)) {
      removed.push_back(path.filename().string());
    }
  }
  return removed;
}

}  // namespace adi3::mpiexec
