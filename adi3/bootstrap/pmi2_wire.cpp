#include "adi3/bootstrap/pmi2_wire.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace adi3::pmi2 {
namespace {

void append_escaped(std::string& out, std::string_view v) {
  for (char c : v) {
    out += c;
    if (c == ';') out += ';';
  }
}

}  // namespace

std::optional<std::string_view> Message::get(std::string_view key) const {
  for (const auto& [k, v] : args) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<long long> Message::get_int(std::string_view key) const {
  auto v = get(key);
  if (!v) return std::nullopt;
  long long out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size() || v->empty()) return std::nullopt;
  return out;
}

std::string frame(const Message& m) {
  std::string body = "cmd=" + m.cmd + ";";
  for (const auto& [k, v] : m.args) {
    body += k;
    body += '=';
    append_escaped(body, v);
    body += ';';
  }
  if (body.size() > kMaxMessage) throw std::length_error("PMI-2: message longer than 999999 bytes");
  char header[8];
  std::snprintf(header, sizeof header, "%-6zu", body.size());
  return std::string(header, 6) + body;
}

Message parse(std::string_view body) {
  // Split into fields at single ';' (";;" is an escaped ';').
  std::vector<std::string> fields;
  std::string cur;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == ';') {
      if (i + 1 < body.size() && body[i + 1] == ';') {
        cur += ';';
        ++i;
        continue;
      }
      fields.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += body[i];
    }
  }
  if (!cur.empty()) fields.push_back(std::move(cur));
  Message m;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto eq = fields[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::runtime_error("PMI-2: malformed field '" + fields[i] + "' in '" + std::string(body.substr(0, 200)) +
                               "'");
    }
    std::string key = fields[i].substr(0, eq), value = fields[i].substr(eq + 1);
    if (i == 0) {
      if (key != "cmd" || value.empty()) throw std::runtime_error("PMI-2: message does not start with cmd=");
      m.cmd = std::move(value);
    } else {
      m.args.emplace_back(std::move(key), std::move(value));
    }
  }
  if (m.cmd.empty()) throw std::runtime_error("PMI-2: empty message");
  return m;
}

}  // namespace adi3::pmi2
