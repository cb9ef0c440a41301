#include "adi3/bootstrap/pmi_auth.hpp"

#include "adi3/job_auth.hpp"

namespace adi3::pmi_auth {
namespace {

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}

}  // namespace

std::string random_nonce() {
  unsigned char bytes[kNonceBytes];
  job_auth::random_bytes(bytes, sizeof bytes, "getrandom failed: cannot make a PMI challenge");
  return hex(bytes, sizeof bytes);
}

std::string proof(std::string_view secret, std::string_view role, std::string_view nonce, std::string_view cnonce,
                  int rank) {
  std::string msg;
  msg.append(role).append(" ").append(nonce).append(" ").append(cnonce).append(" ").append(std::to_string(rank));
  const job_auth::Mac mac = job_auth::hmac_sha256(secret, msg, "PMI authentication");
  return hex(mac.data(), mac.size());
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && job_auth::equal(a.data(), b.data(), a.size());
}

}  // namespace adi3::pmi_auth
