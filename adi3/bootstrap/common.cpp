#include "adi3/bootstrap/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

namespace adi3 {
namespace {

// Node ids beyond this are not a real machine count: reject the mapping.
constexpr long kMaxNodeId = 1 << 24;

// A tiny cursor over the mapping text, skipping blanks.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  void blanks() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    blanks();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool word(std::string_view w) {
    blanks();
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  std::optional<long> number() {
    blanks();
    long v = 0;
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v <= kMaxNodeId)
      v = v * 10 + (s[i++] - '0');
    if (i == start || v > kMaxNodeId) return std::nullopt;
    return v;
  }
};

std::string read_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

std::vector<int> NodeMap::ranks_on(int node) const {
  std::vector<int> out;
  for (std::size_t r = 0; r < node_of.size(); ++r) {
    if (node_of[r] == node) out.push_back(static_cast<int>(r));
  }
  return out;
}

int Bootstrap::local_rank() const {
  auto local = local_ranks();
  auto it = std::find(local.begin(), local.end(), rank());
  return static_cast<int>(it - local.begin());
}

std::optional<NodeMap> parse_process_mapping(std::string_view text, int size, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<NodeMap> {
    if (why) *why = "PMI_process_mapping '" + std::string(text) + "': " + reason;
    return std::nullopt;
  };
  struct Block {
    long node, nodes, ppn;
  };
  std::vector<Block> blocks;
  Cursor c{text};
  if (!c.eat('(') || !c.word("vector")) return fail("does not start with '(vector'");
  while (c.eat(',')) {
    Block b{};
    auto n0 = (c.eat('(') ? c.number() : std::nullopt);
    auto n1 = (n0 && c.eat(',')) ? c.number() : std::nullopt;
    auto n2 = (n1 && c.eat(',')) ? c.number() : std::nullopt;
    if (!n2 || !c.eat(')')) return fail("expected a block '(node,nodes,ranks_per_node)'");
    b = {*n0, *n1, *n2};
    if (b.node + b.nodes > kMaxNodeId) return fail("node ids out of range");
    blocks.push_back(b);
  }
  if (!c.eat(')')) return fail("expected ')' at the end");
  c.blanks();
  if (c.i != text.size()) return fail("trailing text");
  if (blocks.empty()) return fail("no blocks");

  std::vector<long> ids(static_cast<std::size_t>(size));
  std::size_t r = 0;
  while (r < ids.size()) {
    std::size_t before = r;
    for (const Block& b : blocks) {
      for (long n = b.node; n < b.node + b.nodes && r < ids.size(); ++n) {
        for (long k = 0; k < b.ppn && r < ids.size(); ++k) ids[r++] = n;
      }
    }
    if (r == before) return fail("places no rank");
  }
  // Dense indices in node-id order.
  std::vector<long> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  NodeMap map;
  map.nodes = static_cast<int>(sorted.size());
  map.source = "PMI_process_mapping";
  for (long id : ids) {
    map.node_of.push_back(static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), id) - sorted.begin()));
  }
  return map;
}

std::string host_identity() {
  std::string forced = env_string("ADI3_HOST_ID", "");
  if (!forced.empty()) return forced;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  return std::string(host) + ":" + read_boot_id();
}

void BootstrapCommon::learn_layout(std::optional<NodeMap> from_launcher) {
  std::size_t n = static_cast<std::size_t>(size());
  bool exchange = env_string("ADI3_NODE_MAP", "launcher") == "exchange";
  if (from_launcher && from_launcher->node_of.size() == n && !exchange) {
    map_ = std::move(*from_launcher);
    return;
  }
  if (n == 1) {
    map_ = NodeMap{{0}, 1, "singleton"};
    return;
  }
  // Each rank publishes its host; equal ids share a node, numbered in
  // order of their lowest rank. A rank whose id is missing is its own node.
  std::string key_prefix = "adi3.host.";
  put(key_prefix + std::to_string(rank()), host_identity());
  fence();
  std::map<std::string, int> index;
  NodeMap map;
  map.source = "host ids";
  for (std::size_t r = 0; r < n; ++r) {
    std::string id = get_from(static_cast<int>(r), key_prefix + std::to_string(r))
                         .value_or("(missing rank " + std::to_string(r) + ")");
    auto [it, added] = index.emplace(id, static_cast<int>(index.size()));
    map.node_of.push_back(it->second);
  }
  map.nodes = static_cast<int>(index.size());
  map_ = std::move(map);
}

void BootstrapCommon::take_secret_from_environment() {
  if (const char* s = std::getenv("ADI3_JOB_SECRET"); s && *s) {
    secret_ = std::string(s);
    unsetenv("ADI3_JOB_SECRET");
  }
}

}  // namespace adi3
