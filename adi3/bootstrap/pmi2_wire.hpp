// PMI-2 wire format (MPICH's PMI-2 as Hydra and Slurm's mpi/pmi2 serve
// it): after a PMI-1 style "cmd=init pmi_version=2" line, every message is
// a 6-character decimal length, space padded, then that many bytes of
// "cmd=NAME;key=value;...;". A ';' inside a value is sent as ";;".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adi3::pmi2 {

// Longest message body either side accepts (the length field has 6 digits).
inline constexpr std::size_t kMaxMessage = 999999;
// PMI-2's limits (PMI2_MAX_KEYLEN / PMI2_MAX_VALLEN), NUL included.
inline constexpr std::size_t kKeyMax = 64;
inline constexpr std::size_t kValueMax = 1024;

struct Message {
  std::string cmd;
  std::vector<std::pair<std::string, std::string>> args;

  Message& add(std::string key, std::string value) {
    args.emplace_back(std::move(key), std::move(value));
    return *this;
  }
  std::optional<std::string_view> get(std::string_view key) const;
  std::optional<long long> get_int(std::string_view key) const;
  bool get_bool(std::string_view key) const { return get(key) == "TRUE"; }
};

// Length header plus body.
std::string frame(const Message& m);
// Parses a body (without the header). Throws std::runtime_error when it
// is not "cmd=NAME;..." with key=value fields.
Message parse(std::string_view body);

}  // namespace adi3::pmi2
