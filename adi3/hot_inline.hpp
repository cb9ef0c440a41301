// ADI3_HOT_INLINE: a small function of the per-message path, forced into
// its callers. GCC may leave such a header function out of line once a
// unity batch's inline budget is spent (s14: Device::release,
// RequestPool::get, EagerCredits::take and the posted queue's find became
// calls, through the PLT from libmpi and between libmpi and libadi3:
// callgrind send 1077 -> 1139, rate 1187 -> 1267 instructions a message).
// Forced only when optimising: at -O0 (the asan preset) GCC folds less of
// an inlined body and warns on branches it would have dropped.
#pragma once

#if defined(__OPTIMIZE__)
#define ADI3_HOT_INLINE [[gnu::always_inline]]
#else
#define ADI3_HOT_INLINE
#endif
