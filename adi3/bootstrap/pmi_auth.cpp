#include "adi3/bootstrap/pmi_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <stdexcept>

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
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) throw std::runtime_error("getrandom failed: cannot make a PMI challenge");
    got += static_cast<std::size_t>(n);
  }
  return hex(bytes, sizeof bytes);
}

std::string proof(std::string_view secret, std::string_view role, std::string_view nonce, std::string_view cnonce,
                  int rank) {
  std::string msg;
  msg.append(role).append(" ").append(nonce).append(" ").append(cnonce).append(" ").append(std::to_string(rank));
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac, &len)) {
    throw std::runtime_error("PMI authentication: HMAC-SHA256 failed (OpenSSL)");
  }
  return hex(mac, len);
}

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace adi3::pmi_auth
