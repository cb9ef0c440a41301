// The primitives both job-secret handshakes use: the tcp channel's
// (channels/tcp/wire.*) and the PMI port's (adi3/bootstrap/pmi_auth.*).
// One implementation so the two cannot drift apart; each handshake keeps
// its own message layout and wire encoding.
#pragma once
#include <array>
#include <cstddef>
#include <string_view>

namespace adi3::job_auth {

inline constexpr std::size_t kMacBytes = 32;
using Mac = std::array<unsigned char, kMacBytes>;

// HMAC-SHA256(secret, msg). Throws std::runtime_error("<who>: HMAC-SHA256
// failed (OpenSSL)").
Mac hmac_sha256(std::string_view secret, std::string_view msg, std::string_view who);
// Fills [out, out+n) from getrandom; throws std::runtime_error(failure).
void random_bytes(unsigned char* out, std::size_t n, const char* failure);
// Constant-time comparison of n bytes.
bool equal(const void* a, const void* b, std::size_t n);

}  // namespace adi3::job_auth
