#include "channels/tcp/wire.hpp"

#include <cstring>

#include "adi3/job_auth.hpp"

namespace adi3::tcp {
namespace {

constexpr char kMagic[8] = {'A', 'D', 'I', '3', 'T', 'C', 'P', '1'};

void put_u16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v & 0xff);
  p[1] = static_cast<char>(v >> 8);
}
void put_u32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint16_t get_u16(const char* p) {
  return static_cast<uint16_t>(static_cast<unsigned char>(p[0]) | (static_cast<unsigned char>(p[1]) << 8));
}
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

bool check_rank(uint32_t raw, int size, const char* what, int* out, std::string* why) {
  if (raw >= static_cast<uint32_t>(size)) {
    if (why) *why = std::string(what) + " rank " + std::to_string(raw) + " is not in 0.." + std::to_string(size - 1);
    return false;
  }
  *out = static_cast<int>(raw);
  return true;
}

}  // namespace

FrameCheck decode_frame(const char* p, std::size_t n, const FrameLimits& limits, Frame* out, std::string* why) {
  if (n < kFrameHeaderBytes) return FrameCheck::NeedMore;
  Frame f;
  f.payload_bytes = get_u32(p);
  f.hdr_bytes = get_u16(p + 4);
  f.kind = get_u16(p + 6);
  auto bad = [&](std::string text) {
    if (why) *why = std::move(text);
    return FrameCheck::Bad;
  };
  if (f.kind == kFrameGoodbye) {
    if (f.hdr_bytes || f.payload_bytes) return bad("a goodbye frame carrying bytes");
  } else if (f.kind == kFramePacket) {
    if (f.hdr_bytes == 0 || f.hdr_bytes > limits.max_header) {
      return bad("a packet header of " + std::to_string(f.hdr_bytes) + " bytes (1 to " +
                 std::to_string(limits.max_header) + " allowed)");
    }
    if (f.payload_bytes > limits.max_payload) {
      return bad("a payload of " + std::to_string(f.payload_bytes) + " bytes (at most " +
                 std::to_string(limits.max_payload) + " allowed)");
    }
  } else {
    return bad("unknown frame kind " + std::to_string(f.kind));
  }
  *out = f;
  return n < f.total() ? FrameCheck::NeedMore : FrameCheck::Ok;
}

void encode_frame_header(char* out, uint16_t kind, std::size_t hdr_bytes, std::size_t payload_bytes) {
  put_u32(out, static_cast<uint32_t>(payload_bytes));
  put_u16(out + 4, static_cast<uint16_t>(hdr_bytes));
  put_u16(out + 6, kind);
}

void encode_hello(char* out, const Hello& h) {
  std::memcpy(out, kMagic, 8);
  put_u32(out + 8, static_cast<uint32_t>(h.from));
  put_u32(out + 12, static_cast<uint32_t>(h.to));
  std::memcpy(out + 16, h.nonce.data(), kNonceBytes);
}

void encode_challenge(char* out, const Challenge& c) {
  std::memcpy(out, kMagic, 8);
  put_u32(out + 8, static_cast<uint32_t>(c.rank));
  std::memcpy(out + 12, c.nonce.data(), kNonceBytes);
  std::memcpy(out + 12 + kNonceBytes, c.mac.data(), kMacBytes);
}

bool decode_hello(const char* p, int size, Hello* out, std::string* why) {
  if (std::memcmp(p, kMagic, 8) != 0) {
    if (why) *why = "not an adi3 tcp hello (wrong magic or version)";
    return false;
  }
  Hello h;
  if (!check_rank(get_u32(p + 8), size, "claimed", &h.from, why)) return false;
  if (!check_rank(get_u32(p + 12), size, "target", &h.to, why)) return false;
  std::memcpy(h.nonce.data(), p + 16, kNonceBytes);
  *out = h;
  return true;
}

bool decode_challenge(const char* p, int size, Challenge* out, std::string* why) {
  if (std::memcmp(p, kMagic, 8) != 0) {
    if (why) *why = "not an adi3 tcp challenge (wrong magic or version)";
    return false;
  }
  Challenge c;
  if (!check_rank(get_u32(p + 8), size, "answering", &c.rank, why)) return false;
  std::memcpy(c.nonce.data(), p + 12, kNonceBytes);
  std::memcpy(c.mac.data(), p + 12 + kNonceBytes, kMacBytes);
  *out = c;
  return true;
}

Mac handshake_mac(const Key& key, Role role, int from, int to, const Nonce& nonce_c, const Nonce& nonce_s) {
  // label | job length | job | from | to | nonce_c | nonce_s: lengths are
  // fixed or prefixed, so no two inputs share an encoding.
  std::string msg = role == Role::Server ? "adi3-tcp-s" : "adi3-tcp-c";
  char n[4];
  put_u32(n, static_cast<uint32_t>(key.job.size()));
  msg.append(n, 4).append(key.job);
  put_u32(n, static_cast<uint32_t>(from));
  msg.append(n, 4);
  put_u32(n, static_cast<uint32_t>(to));
  msg.append(n, 4);
  msg.append(reinterpret_cast<const char*>(nonce_c.data()), kNonceBytes);
  msg.append(reinterpret_cast<const char*>(nonce_s.data()), kNonceBytes);
  return job_auth::hmac_sha256(key.secret, msg, "tcp channel");
}

bool mac_equal(const Mac& a, const unsigned char* b) { return job_auth::equal(a.data(), b, kMacBytes); }

Nonce random_nonce() {
  Nonce n{};
  job_auth::random_bytes(n.data(), n.size(), "tcp channel: getrandom failed");
  return n;
}

}  // namespace adi3::tcp
