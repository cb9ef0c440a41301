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

}  // namespace

bool WinInfo::set(const std::string& key, const std::string& value) {
  if (key == "no_locks") return parse_bool(value, &no_locks);
  if (key == "same_size") return parse_bool(value, &same_size);
  if (key == "same_disp_unit") return parse_bool(value, &same_disp_unit);
  if (key == "accumulate_ordering") return parse_ordering(value, &accumulate_ordering);
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
  return {
      {"no_locks", no_locks ? "true" : "false"},
      {"accumulate_ordering", ordering_text(accumulate_ordering)},
      {"accumulate_ops", accumulate_ops == AccOps::SameOp ? "same_op" : "same_op_no_op"},
      {"same_size", same_size ? "true" : "false"},
      {"same_disp_unit", same_disp_unit ? "true" : "false"},
  };
}

}  // namespace adi3
