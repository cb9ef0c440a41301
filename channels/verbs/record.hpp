// One eager-ring record: what a slot holds. The receiver checks every
// field against its own state before using it (the bytes come from
// another process).
#pragma once
#include <cstdint>

namespace adi3::verbs {

struct RecordHeader {
  uint32_t hdr_bytes;      // core header that follows
  uint32_t payload_bytes;  // payload after the core header
  uint32_t credits;        // slots of the sender's ring its peer may refill
  uint32_t flags;
  uint64_t offer_addr;  // kOffer: a buffer the receiver may RDMA-read...
  uint64_t offer_len;
  uint32_t offer_rkey;  // ...with this key
  uint32_t reserved;
};
static_assert(sizeof(RecordHeader) == 40);

enum RecordFlags : uint32_t { kOffer = 1 };

// The immediate of a write: the slot of a record, or returned credits.
inline constexpr uint32_t kImmCredits = 1u << 31;

}  // namespace adi3::verbs
