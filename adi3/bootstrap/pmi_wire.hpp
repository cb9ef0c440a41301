// PMI-1 "simple" wire format, shared by the client (libadi3) and the
// server inside our mpiexec.
//
// A command is one line: "cmd=NAME key=value key=value\n". Tokens are
// separated by spaces; a value runs to the next space or newline. The
// protocol has no portable escaping (Hydra 4.0 passes values through
// verbatim, newer MPICH unescapes backslashes), so user keys and values
// are encoded with encode_token() into a conservative alphabet that every
// server stores unchanged.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adi3::pmi {

// Defaults Hydra reports in "cmd=maxes"; both sides include the NUL
// terminator of C PMI, so the usable length is one less.
inline constexpr std::size_t kDefaultKvsnameMax = 256;
inline constexpr std::size_t kDefaultKeyMax = 64;
inline constexpr std::size_t kDefaultValueMax = 1024;

// Longest line either side accepts; guards against a peer that never
// sends a newline.
inline constexpr std::size_t kMaxLineLength = 64 * 1024;

// One parsed or to-be-sent command.
class WireCommand {
 public:
  explicit WireCommand(std::string name);

  // Appends "key=value"; value must already be wire-safe (no space or
  // newline), keys must match [A-Za-z0-9_-]+.
  WireCommand& add(std::string key, std::string value);
  WireCommand& add(std::string key, long long value);

  const std::string& name() const { return name_; }
  const std::vector<std::pair<std::string, std::string>>& args() const { return args_; }

  // First value for key, if present.
  std::optional<std::string_view> get(std::string_view key) const;
  // Integer value for key; nullopt when absent or not an integer.
  std::optional<long long> get_int(std::string_view key) const;

  // The line including its trailing '\n'.
  std::string format() const;

  // Parses one line (with or without the trailing newline). Throws
  // std::runtime_error when the line is not a "cmd=..." command.
  static WireCommand parse(std::string_view line);

 private:
  std::string name_;
  std::vector<std::pair<std::string, std::string>> args_;
};

// Encodes arbitrary bytes into [A-Za-z0-9] plus "-_.:,/+@()[]" and
// %XX escapes. The empty string becomes a lone "%", because servers
// reject "value=" with nothing after it.
std::string encode_token(std::string_view raw);

// Inverse of encode_token(). Lenient: text that did not come from
// encode_token (e.g. Hydra's PMI_process_mapping) passes through
// unchanged, including a '%' not followed by two hex digits.
std::string decode_token(std::string_view wire);

}  // namespace adi3::pmi
