// The core's scratch allocator (ADI3_SANITIZED comes from the build).
#pragma once
#include <cstddef>
#include <cstdlib>

#include <tbb/scalable_allocator.h>

namespace adi3 {

// Scratch memory of the core (unexpected eager data, packed copies): TBB's
// scalable allocator, but plain malloc in sanitized builds, where the
// sanitizers must see every allocation (tbbmalloc is not instrumented: ASan
// puts no redzones around its blocks, and TSan reports the reuse of a block
// freed by another thread as a data race).
inline void* scratch_alloc(std::size_t bytes) {
#if ADI3_SANITIZED
  return std::malloc(bytes);
#else
  return scalable_malloc(bytes);
#endif
}
inline void scratch_free(void* p) {
#if ADI3_SANITIZED
  std::free(p);
#else
  scalable_free(p);
#endif
}

}  // namespace adi3
