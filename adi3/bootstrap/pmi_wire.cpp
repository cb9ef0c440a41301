#include "adi3/bootstrap/pmi_wire.hpp"

#include <charconv>
#include <stdexcept>

namespace adi3::pmi {
namespace {

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Characters no PMI server treats specially: not space, '=', ';' (PMI-2),
// '\\' (newer MPICH unescapes it) and not our own escape '%'.
bool is_plain_char(char c) {
  if (is_key_char(c)) {
    return true;
  }
  switch (c) {
    case '.':
    case ':':
    case ',':
    case '/':
    case '+':
    case '@':
    case '(':
    case ')':
    case '[':
    case ']':
      return true;
    default:
      return false;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void check_key(std::string_view key) {
  if (key.empty()) {
    throw std::invalid_argument("PMI wire: empty key");
  }
  for (char c : key) {
    if (!is_key_char(c)) {
      throw std::invalid_argument("PMI wire: invalid character in key '" + std::string(key) + "'");
    }
  }
}

void check_value(std::string_view value) {
  if (value.empty() || value.find_first_of(" \n") != std::string_view::npos) {
    throw std::invalid_argument("PMI wire: value '" + std::string(value) + "' is empty or contains a space or newline");
  }
}

}  // namespace

WireCommand::WireCommand(std::string name) : name_(std::move(name)) { check_value(name_); }

WireCommand& WireCommand::add(std::string key, std::string value) {
  check_key(key);
  check_value(value);
  args_.emplace_back(std::move(key), std::move(value));
  return *this;
}

WireCommand& WireCommand::add(std::string key, long long value) { return add(std::move(key), std::to_string(value)); }

std::optional<std::string_view> WireCommand::get(std::string_view key) const {
  for (const auto& [k, v] : args_) {
    if (k == key) {
      return std::string_view(v);
    }
  }
  return std::nullopt;
}

std::optional<long long> WireCommand::get_int(std::string_view key) const {
  auto text = get(key);
  if (!text) {
    return std::nullopt;
  }
  long long value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) {
    return std::nullopt;
  }
  return value;
}

std::string WireCommand::format() const {
  std::string line = "cmd=" + name_;
  for (const auto& [k, v] : args_) {
    line += ' ';
    line += k;
    line += '=';
    line += v;
  }
  line += '\n';
  return line;
}

WireCommand WireCommand::parse(std::string_view line) {
  if (!line.empty() && line.back() == '\n') {
    line.remove_suffix(1);
  }
  std::vector<std::pair<std::string_view, std::string_view>> tokens;
  std::size_t pos = 0;
  while (pos < line.size()) {
    if (line[pos] == ' ') {
      ++pos;
      continue;
    }
    std::size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) {
      end = line.size();
    }
    std::string_view token = line.substr(pos, end - pos);
    std::size_t eq = token.find('=');
    // A bare word is a key with no value (PMI allows it; we keep "").
    std::string_view key = token.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view() : token.substr(eq + 1);
    if (key.empty()) {
      throw std::runtime_error("PMI wire: token without a key in '" + std::string(line) + "'");
    }
    tokens.emplace_back(key, value);
    pos = end;
  }
  if (tokens.empty() || tokens.front().first != "cmd" || tokens.front().second.empty()) {
    throw std::runtime_error("PMI wire: expected 'cmd=NAME ...', got '" + std::string(line) + "'");
  }
  WireCommand cmd{std::string(tokens.front().second)};
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    // Bypass add()'s checks: parsing must accept what peers send.
    cmd.args_.emplace_back(std::string(tokens[i].first), std::string(tokens[i].second));
  }
  return cmd;
}

std::string encode_token(std::string_view raw) {
  if (raw.empty()) {
    return "%";
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (is_plain_char(c)) {
      out += c;
    } else {
      auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

std::string decode_token(std::string_view wire) {
  if (wire == "%") {
    return {};
  }
  std::string out;
  out.reserve(wire.size());
  for (std::size_t i = 0; i < wire.size(); ++i) {
    if (wire[i] == '%' && i + 2 < wire.size() && hex_value(wire[i + 1]) >= 0 && hex_value(wire[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(wire[i + 1]) * 16 + hex_value(wire[i + 2]));
      i += 2;
    } else {
      out += wire[i];
    }
  }
  return out;
}

}  // namespace adi3::pmi
