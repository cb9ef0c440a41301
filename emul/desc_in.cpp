// The target's side of a derived target datatype: its description arrives
// in TypeDesc packets (one, or several in order for a long one, each naming
// its offset and the total), is gathered, then rebuilt with the datatype
// constructors (rma/type_desc.*), which check every value. The operations
// that follow from that origin use it until the next description.
#include <new>
#include <string>
#include <vector>

#include "adi3/device.hpp"
#include "emul/emul.hpp"
#include "rma/type_desc.hpp"

namespace adi3::emul {

using rma::Header;
using rma::Origin;
using rma::WindowState;

namespace {

// True with the whole description in (*payload, *bytes) (this packet's, or
// the parts gathered in O.desc_part), false while parts are missing or
// when this one is refused (out of order, too long).
bool whole_desc(WindowState& w, int src, Origin& O, const Header& h, const void** payload, std::size_t* bytes) {
  if (h.first == 0 && h.len == h.total && h.len == *bytes && O.desc_part.empty()) return true;
  if (h.len != *bytes || h.total > rma::kMaxDescBytes || h.first != O.desc_part.size() || h.len > h.total - h.first ||
      h.len == 0) {
    refuse(w, src, h, ErrorClass::Type,
           "bad datatype description part: bytes %llu..+%llu of %llu (%zu in the packet, %zu gathered, at most %zu)",
           static_cast<unsigned long long>(h.first), static_cast<unsigned long long>(h.len),
           static_cast<unsigned long long>(h.total), *bytes, O.desc_part.size(), rma::kMaxDescBytes);
    std::vector<uint8_t>().swap(O.desc_part);
    return false;
  }
  const auto* p = static_cast<const uint8_t*>(*payload);
  try {
    O.desc_part.insert(O.desc_part.end(), p, p + *bytes);
  } catch (const std::bad_alloc&) {
    std::vector<uint8_t>().swap(O.desc_part);
    refuse(w, src, h, ErrorClass::NoMem, "out of memory gathering a datatype description of %llu bytes",
           static_cast<unsigned long long>(h.total));
    return false;
  }
  if (O.desc_part.size() < h.total) return false;
  *payload = O.desc_part.data();
  *bytes = O.desc_part.size();
  return true;
}

}  // namespace

void take_desc(WindowState& w, int src, const Header& h, const void* payload, std::size_t bytes) {
  Origin& O = w.origins[static_cast<std::size_t>(src)];
  if (O.desc) O.desc->release();
  O.desc = nullptr;
  if (!whole_desc(w, src, O, h, &payload, &bytes)) return;  // more to come, or refused
  std::string why;
  bool no_mem = false;
  try {
    O.desc = rma::decode_type(payload, bytes, &why);
    no_mem = !O.desc && why == rma::kOutOfMemory;
  } catch (const std::bad_alloc&) {
    no_mem = true;
  }
  if (no_mem) {
    // The operations that follow are refused: this rank's epoch must
    // not end as if they had landed.
    const int e = w.dev.errors().raise(ErrorClass::NoMem,
                                       "rank %d: out of memory allocating the target datatype of a one-sided "
                                       "operation from rank %d (%zu bytes of description): it was refused",
                                       w.comm.rank, src, bytes);
    if (!w.deferred_error) w.deferred_error = e;
    refuse(w, src, h, ErrorClass::NoMem, "out of memory allocating the target datatype (%zu bytes of description)",
           bytes);
  } else if (!O.desc) {
    refuse(w, src, h, ErrorClass::Type, "bad datatype description: %s", why.c_str());
  }
  std::vector<uint8_t>().swap(O.desc_part);  // (payload pointed into it)
}

}  // namespace adi3::emul
