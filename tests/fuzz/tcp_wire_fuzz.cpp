// libFuzzer target: the TCP channel's wire decoders on arbitrary bytes,
// as a connection would deliver them. The first byte picks what the
// bytes are read as: a stream of frames (decoded as poll() does, with the
// channel's limits), a hello, or a challenge. Every outcome must be Ok,
// NeedMore or a refusal, never a read past the input or a frame whose
// sizes break the limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "channels/tcp/wire.hpp"

using namespace adi3::tcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const char* p = reinterpret_cast<const char*>(data + 1);
  const std::size_t n = size - 1;
  const FrameLimits limits{128, 256 * 1024};
  std::string why;
  switch (data[0] % 3) {
    case 0: {
      std::size_t at = 0;
      for (;;) {
        Frame f;
        FrameCheck c = decode_frame(p + at, n - at, limits, &f, &why);
        if (c != FrameCheck::Ok) break;
        if (f.total() > n - at || f.hdr_bytes > limits.max_header || f.payload_bytes > limits.max_payload) abort();
        if (f.kind == kFramePacket && f.hdr_bytes == 0) abort();
        at += f.total();
      }
      break;
    }
    case 1:
      if (n >= kHelloBytes) {
        Hello h;
        if (decode_hello(p, 4, &h, &why) && (h.from < 0 || h.from >= 4 || h.to < 0 || h.to >= 4)) abort();
      }
      break;
    default:
      if (n >= kChallengeBytes) {
        Challenge c;
        if (decode_challenge(p, 4, &c, &why) && (c.rank < 0 || c.rank >= 4)) abort();
      }
      break;
  }
  return 0;
}
