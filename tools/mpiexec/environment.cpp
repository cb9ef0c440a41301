#include "environment.hpp"

#include <cstdio>
#include <random>

#include <sys/random.h>
#include <unistd.h>

#include <stdexcept>

namespace adi3::mpiexec {

std::vector<std::string> inherited_environment(const char* const* envp) {
  std::vector<std::string> env;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    std::string_view entry(*envp);
    if (entry.rfind("PMI_", 0) == 0) {
      continue;
    }
    env.emplace_back(entry);
  }
  return env;
}

namespace {

// Whether entry is "NAME=...".
bool names(std::string_view entry, std::string_view name) {
  return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=';
}

}  // namespace

void set_env(std::vector<std::string>& env, std::string_view name, std::string_view value) {
  std::string entry = std::string(name) + "=" + std::string(value);
  for (auto& existing : env) {
    if (names(existing, name)) {
      existing = std::move(entry);
      return;
    }
  }
  env.push_back(std::move(entry));
}

std::string env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& e : env) {
    if (names(e, name)) {
      return e.substr(name.size() + 1);
    }
  }
  return {};
}

void drop_env(std::vector<std::string>& env, std::string_view name) {
  std::erase_if(env, [&](const std::string& e) { return names(e, name); });
}

std::string make_job_id() {
  // The pid keeps concurrent jobs apart; the random part keeps a
  // recycled pid from matching files a dead earlier job left behind.
  std::random_device device;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld-%08x", static_cast<long>(::getpid()), static_cast<unsigned>(device()));
  return buf;
}

}  // namespace adi3::mpiexec

namespace adi3::mpiexec {

std::string make_job_secret() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      throw std::runtime_error("getrandom failed: cannot make the job secret");
    }
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace adi3::mpiexec
