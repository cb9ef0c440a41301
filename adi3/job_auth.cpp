#include "adi3/job_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <stdexcept>
#include <string>

namespace adi3::job_auth {

Mac hmac_sha256(std::string_view secret, std::string_view msg, std::string_view who) {
  Mac mac{};
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac.data(), &len) ||
      len != kMacBytes) {
    throw std::runtime_error(std::string(who) + ": HMAC-SHA256 failed (OpenSSL)");
  }
  return mac;
}

void random_bytes(unsigned char* out, std::size_t n, const char* failure) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(out + got, n - got, 0);
    if (r < 0) throw std::runtime_error(failure);
    got += static_cast<std::size_t>(r);
  }
}

bool equal(const void* a, const void* b, std::size_t n) { return CRYPTO_memcmp(a, b, n) == 0; }

}  // namespace adi3::job_auth
