// Cuts one rank's output stream into whole lines so that lines of
// different ranks never interleave mid-line, optionally tagging each.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace adi3::mpiexec {

class LineForwarder {
 public:
  // prefix is prepended to every line (e.g. "[3] "), or empty.
  explicit LineForwarder(std::string prefix) : prefix_(std::move(prefix)) {}

  // Accepts a chunk of output; returns the complete lines it finished,
  // ready to write. A line longer than kMaxPending is passed on in
  // pieces rather than buffered without bound.
  std::string feed(std::string_view data);

  // End of stream: returns the unterminated tail (plus a newline when
  // tagging, so the next tagged line starts on its own line).
  std::string finish();

  static constexpr std::size_t kMaxPending = 64 * 1024;

 private:
  std::string prefix_;
  std::string pending_;    // bytes after the last newline
  bool mid_line_ = false;  // a long line was already partly emitted
};

}  // namespace adi3::mpiexec
