#include "hosts.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "options.hpp"

namespace adi3::mpiexec {
namespace {

int parse_slots(const std::string& text, const std::string& entry) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || n < 1 || n > 100000) {
    throw UsageError("host entry '" + entry + "': slots must be a number from 1 to 100000");
  }
  return n;
}

Host parse_entry(const std::string& entry) {
  Host h;
  auto colon = entry.find(':');
  h.name = entry.substr(0, colon);
  if (colon != std::string::npos) h.slots = parse_slots(entry.substr(colon + 1), entry);
  if (h.name.empty() || h.name.find_first_of(" \t/") != std::string::npos) {
    throw UsageError("host entry '" + entry + "': not a host name");
  }
  return h;
}

}  // namespace

std::vector<Host> parse_host_list(const std::string& text) {
  std::vector<Host> hosts;
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    if (entry.empty()) continue;
    hosts.push_back(parse_entry(entry));
  }
  if (hosts.empty()) throw UsageError("--hosts needs at least one host");
  return hosts;
}

std::vector<Host> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--hostfile " + path + ": cannot be read");
  std::vector<Host> hosts;
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::stringstream words(line);
    std::string name, extra;
    if (!(words >> name)) continue;
    Host h = parse_entry(name);
    if (words >> extra) {
      if (extra.rfind("slots=", 0) != 0) throw UsageError("--hostfile " + path + ": cannot read '" + line + "'");
      h.slots = parse_slots(extra.substr(6), line);
    }
    hosts.push_back(h);
  }
  if (hosts.empty()) throw UsageError("--hostfile " + path + ": no hosts in it");
  return hosts;
}

Placement place_ranks(int nprocs, const std::vector<Host>& hosts) {
  Placement p;
  std::vector<int> count(hosts.size(), 0);
  for (int r = 0; r < nprocs;) {
    for (std::size_t h = 0; h < hosts.size() && r < nprocs; ++h) {
      for (int s = 0; s < hosts[h].slots && r < nprocs; ++s, ++r) {
        p.host_of.push_back(static_cast<int>(h));
        p.local_rank.push_back(count[h]++);
      }
    }
  }
  for (int r = 0; r < nprocs; ++r)
    p.local_size.push_back(count[static_cast<std::size_t>(p.host_of[static_cast<std::size_t>(r)])]);
  // One block per host, repeated by the reader until every rank is placed:
  // exactly the fill order above.
  p.process_mapping = "(vector";
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    p.process_mapping += ",(" + std::to_string(h) + ",1," + std::to_string(hosts[h].slots) + ")";
  }
  p.process_mapping += ")";
  return p;
}

bool is_this_host(const std::string& name) {
  if (name == "localhost" || name == "127.0.0.1") return true;
  char me[256] = {};
  return gethostname(me, sizeof me - 1) == 0 && name == me;
}

}  // namespace adi3::mpiexec
