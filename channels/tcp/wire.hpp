// The TCP channel's wire: frames on an authenticated byte stream, and the
// handshake that authenticates a connection. Pure functions over bytes (no
// sockets), so they are unit-tested and fuzzed on their own. Every byte
// read from a socket is untrusted: decoders check sizes and kinds against
// local limits before anything uses them. Integers are little-endian.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace adi3::tcp {

// ---- frames ----
inline constexpr uint16_t kFramePacket = 1;   // header + payload for the core
inline constexpr uint16_t kFrameGoodbye = 2;  // the coming end of stream is no death
inline constexpr std::size_t kFrameHeaderBytes = 8;

struct FrameLimits {
  std::size_t max_header;   // largest packet header accepted
  std::size_t max_payload;  // largest payload accepted
};

struct Frame {
  uint16_t kind = 0;
  std::size_t hdr_bytes = 0;
  std::size_t payload_bytes = 0;
  std::size_t total() const { return kFrameHeaderBytes + hdr_bytes + payload_bytes; }
};

enum class FrameCheck { Ok, NeedMore, Bad };

// Looks at the bytes [p, p+n): Ok when a whole valid frame starts there
// (*out describes it), NeedMore when its frame header is valid but bytes are
// missing (*out says how many it needs), Bad (with *why) for a frame no
// honest peer sends: unknown kind, a header of 0 or more than max_header
// bytes, a payload beyond max_payload, a goodbye that carries bytes.
FrameCheck decode_frame(const char* p, std::size_t n, const FrameLimits& limits, Frame* out, std::string* why);
void encode_frame_header(char* out, uint16_t kind, std::size_t hdr_bytes, std::size_t payload_bytes);

// ---- handshake ----
// connector -> acceptor  Hello:     magic, from rank, to rank, nonce_c
// acceptor -> connector  Challenge: magic, acceptor rank, nonce_s, mac_s
// connector -> acceptor  Proof:     mac_c
// acceptor -> connector  Verdict:   'A' (use this connection) or 'R' (the
//                                   other one, dialled by the lower rank)
// mac_s = HMAC-SHA256(secret, "adi3-tcp-s" job from to nonce_c nonce_s),
// mac_c the same with "adi3-tcp-c": each side proves it holds the job's
// secret, bound to both fresh nonces and both ranks; the secret never
// crosses the wire.
inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kMacBytes = 32;
inline constexpr std::size_t kHelloBytes = 8 + 4 + 4 + kNonceBytes;
inline constexpr std::size_t kChallengeBytes = 8 + 4 + kNonceBytes + kMacBytes;
inline constexpr std::size_t kProofBytes = kMacBytes;
inline constexpr char kAccept = 'A', kReject = 'R';

using Nonce = std::array<unsigned char, kNonceBytes>;
using Mac = std::array<unsigned char, kMacBytes>;

struct Hello {
  int from = -1, to = -1;
  Nonce nonce{};
};
struct Challenge {
  int rank = -1;
  Nonce nonce{};
  Mac mac{};
};

void encode_hello(char* out, const Hello& h);
void encode_challenge(char* out, const Challenge& c);
// False (with *why) on a wrong magic or a rank outside [0, size).
bool decode_hello(const char* p, int size, Hello* out, std::string* why);
bool decode_challenge(const char* p, int size, Challenge* out, std::string* why);

// The job's key: what both sides MAC with.
struct Key {
  std::string secret;  // the job secret's bytes
  std::string job;     // the job id, bound into every MAC
};
enum class Role { Server, Client };
Mac handshake_mac(const Key& key, Role role, int from, int to, const Nonce& nonce_c, const Nonce& nonce_s);
// Constant time.
bool mac_equal(const Mac& a, const unsigned char* b);
// Fresh random bytes (getrandom); throws std::runtime_error on failure.
Nonce random_nonce();

}  // namespace adi3::tcp
