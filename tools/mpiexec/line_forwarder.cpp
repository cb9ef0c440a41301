#include "line_forwarder.hpp"

namespace adi3::mpiexec {

std::string LineForwarder::feed(std::string_view data) {
  std::string out;
  while (!data.empty()) {
    auto newline = data.find('\n');
    std::string_view piece = data.substr(0, newline == std::string_view::npos ? data.size() : newline + 1);
    data.remove_prefix(piece.size());
    pending_ += piece;
    if (pending_.back() == '\n') {
      if (!mid_line_) {
        out += prefix_;
      }
      out += pending_;
      pending_.clear();
      mid_line_ = false;
    } else if (pending_.size() >= kMaxPending) {
      if (!mid_line_) {
        out += prefix_;
      }
      out += pending_;
      pending_.clear();
      mid_line_ = true;
    }
  }
  return out;
}

std::string LineForwarder::finish() {
  std::string out;
  if (!pending_.empty()) {
    if (!mid_line_) {
      out += prefix_;
    }
    out += pending_;
    if (!prefix_.empty()) {
      out += '\n';
    }
  } else if (mid_line_ && !prefix_.empty()) {
    out += '\n';
  }
  pending_.clear();
  mid_line_ = false;
  return out;
}

}  // namespace adi3::mpiexec
