// An asymmetric fence between processes (membarrier(2)): senders on the
// hot path order their published records against their look at the
// receiver's sleeper count with a compiler barrier only, and the receiver,
// about to sleep, pays for both with one system call that runs a full
// barrier on every CPU executing a registered process. A fence per send
// (mfence) waited for the record's cache line to arrive from the
// receiver's core before the sender could go on: one line transfer per
// message, which set the small-message stream rate.
#pragma once

namespace adi3::shm {

// Registers this process for process_fence() barriers; false when the
// kernel (or a seccomp filter) does not offer them. Idempotent.
bool process_fence_register();
// A memory barrier on every running thread of every registered process
// before it returns; false when the call failed (then nothing is known).
bool process_fence();

}  // namespace adi3::shm
