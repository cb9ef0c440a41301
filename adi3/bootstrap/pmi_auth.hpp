// Authentication of a rank that reaches our mpiexec's PMI server over TCP
// (`mpiexec --launcher ssh`: a rank on another host cannot inherit the PMI
// socket). Shared by the server (tools/mpiexec/pmi_port.*) and the client
// (adi3/bootstrap/pmi_client.cpp); the secret is the job's (ADI3_JOB_SECRET)
// and never travels on the connection:
//
//   server -> cmd=adi3_challenge nonce=N            (32 random bytes, hex)
//   client -> cmd=adi3_auth rank=R cnonce=C proof=P  P = HMAC(secret, "adi3-pmi client" N C R)
//   server -> cmd=adi3_auth_ok proof=Q               Q = HMAC(secret, "adi3-pmi server" N C R)
//
// after which the connection carries PMI-1 for rank R. The server closes
// (and logs) a connection whose rank is out of range or already
// connected, whose proof is wrong, or that does not answer in time; the
// client refuses a server whose proof is wrong (not our mpiexec).
#pragma once
#include <string>
#include <string_view>

namespace adi3::pmi_auth {

inline constexpr std::size_t kNonceBytes = 32;

// kNonceBytes random bytes as lower-case hex (getrandom).
std::string random_nonce();
// HMAC-SHA256(secret, role | nonce | cnonce | rank) as lower-case hex.
std::string proof(std::string_view secret, std::string_view role, std::string_view nonce, std::string_view cnonce,
                  int rank);
// Constant-time comparison of two proofs (false when the sizes differ).
bool same(std::string_view a, std::string_view b);

inline constexpr std::string_view kClient = "adi3-pmi client";
inline constexpr std::string_view kServer = "adi3-pmi server";

}  // namespace adi3::pmi_auth
