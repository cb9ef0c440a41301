// Window info keys (MPI-4.1 12.2.1 and 12.7): parsing MPI_Info strings into
// WinInfo and printing them back for MPI_Win_get_info.
#include <sstream>

#include "rma/window.hpp"

namespace adi3 {
namespace {

bool parse_bool(const std::string& v, bool* out) {
  if (v == "true") {
    *out = true;
  } else if (v == "false") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// "none", or a comma-separated subset of rar, raw, war, waw.
bool parse_ordering(const std::string& v, uint8_t* out) {
  if (v == "none") {
    *out = 0;
    return true;
  }
  uint8_t bits = 0;
  std::stringstream in(v);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "rar") {
      bits |= WinInfo::kRar;
    } else if (item == "raw") {
      bits |= WinInfo::kRaw;
    } else if (item == "war") {
      bits |= WinInfo::kWar;
    } else if (item == "waw") {
      bits |= WinInfo::kWaw;
    } else {
      return false;
    }
  }
  if (!bits) return false;
  *out = bits;
  return true;
}

std::string ordering_text(uint8_t bits) {
  if (!bits) return "none";
  static const char* const kNames[] = {"rar", "raw", "war", "waw"};
  std::string s;
  for (int i = 0; i < 4; ++i) {
    if (bits & (1u << i)) {
      if (!s.empty()) s += ',';
      s += kNames[i];
    }
  }
  return s;
}

// "all", "none", or a comma list of operation names: bits 1 << rma::Msg
// (Put, Acc, Get, GetAcc, Fop, Cas: the order of the names below).
bool parse_ops(const std::string& v, uint32_t* out) {
  static const char* const kNames[] = {"put",          "accumulate",      "get", "get_accumulate",
                                       "fetch_and_op", "compare_and_swap"};
  if (v == "none") {
    *out = 0;
    return true;
  }
  if (v == "all") {
    *out = 0x3f;
    return true;
  }
  uint32_t bits = 0;
  std::stringstream in(v);
  std::string item;
  while (std::getline(in, item, ',')) {
    bool found = false;
    for (int i = 0; i < 6; ++i) {
      if (item == kNames[i]) {
        bits |= 1u << i;
        found = true;
      }
    }
    if (!found) return false;
  }
  *out = bits;
  return true;
}

std::string ops_text(uint32_t bits) {
  static const char* const kNames[] = {"put",          "accumulate",      "get", "get_accumulate",
                                       "fetch_and_op", "compare_and_swap"};
  if (!bits) return "none";
  std::string s;
  for (int i = 0; i < 6; ++i) {
    if (bits & (1u << i)) {
      if (!s.empty()) s += ',';
      s += kNames[i];
    }
  }
  return s;
}

}  // namespace

bool WinInfo::set(const std::string& key, const std::string& value) {
  if (key == "no_locks") return parse_bool(value, &no_locks);
  if (key == "same_size") return parse_bool(value, &same_size);
  if (key == "same_disp_unit") return parse_bool(value, &same_disp_unit);
  if (key == "accumulate_ordering") return parse_ordering(value, &accumulate_ordering);
  if (key == "alloc_shared_noncontig") return parse_bool(value, &alloc_shared_noncontig);
  if (key == "adi3_emulate_ops") return parse_ops(value, &emulate_ops);
  if (key == "accumulate_ops") {
    if (value == "same_op_no_op") {
      accumulate_ops = AccOps::SameOpNoOp;
    } else if (value == "same_op") {
      accumulate_ops = AccOps::SameOp;
    } else {
      return false;
    }
    return true;
  }
  return true;  // not ours: ignored, as MPI allows
}

std::vector<std::pair<std::string, std::string>> WinInfo::pairs() const {
  std::vector<std::pair<std::string, std::string>> v = {
      {"no_locks", no_locks ? "true" : "false"},
      {"accumulate_ordering", ordering_text(accumulate_ordering)},
      {"accumulate_ops", accumulate_ops == AccOps::SameOp ? "same_op" : "same_op_no_op"},
      {"same_size", same_size ? "true" : "false"},
      {"same_disp_unit", same_disp_unit ? "true" : "false"},
      {"alloc_shared_noncontig", alloc_shared_noncontig ? "true" : "false"},
      {"adi3_emulate_ops", ops_text(emulate_ops)},
  };
  if (passive_progress >= 0) v.emplace_back("adi3_passive_progress", passive_progress ? "true" : "false");
  return v;
}

}  // namespace adi3
