/* What the parts of the soak program share: the rank, the plan's random
 * generator (the same sequence on every rank), the counters of what was
 * checked, and the call check. */
#ifndef ADI3_SOAK_H
#define ADI3_SOAK_H
#include <mpi.h>
#include <stdint.h>

extern int rank, size;
extern uint64_t ops, bytes_checked;

uint64_t next_rand(void);
void die(const char* what, int e);
#define CALL(x)          \
  do {                   \
    int e_ = (x);        \
    if (e_) die(#x, e_); \
  } while (0)

/* One-sided (soak_rma.c): windows made once, then rounds of fence, PSCW,
 * lock/unlock with flushes, accumulates and atomics. */
void rma_setup(void);
void rma_round(uint64_t round);
void rma_teardown(void);
extern uint64_t rma_ops;

#endif
