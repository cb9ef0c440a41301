// The concrete wires behind make_bootstrap() (internal to libadi3, except
// the PMIx module's entry point, which the module exports).
#pragma once

#include <memory>

#include "adi3/bootstrap/bootstrap.hpp"

namespace adi3 {

std::unique_ptr<Bootstrap> make_singleton_bootstrap();
std::unique_ptr<Bootstrap> make_pmi1_bootstrap();
std::unique_ptr<Bootstrap> make_pmi2_bootstrap();
// dlopens libadi3_boot_pmix.so from the plugin search path.
std::unique_ptr<Bootstrap> make_pmix_bootstrap();

}  // namespace adi3

// The PMIx module exports this; it returns a Bootstrap made with new, or
// nullptr with a message in error[0..error_bytes). The version guards
// against a module built from another tree.
#define ADI3_BOOT_PMIX_ENTRY_NAME "adi3_boot_pmix_v1"
inline constexpr unsigned kAdi3BootModuleVersion = 1;
extern "C" {
typedef adi3::Bootstrap* (*adi3_boot_pmix_entry)(unsigned version, char* error, std::size_t error_bytes);
}
