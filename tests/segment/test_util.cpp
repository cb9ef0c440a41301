#include "test_util.hpp"

#include "segment/segment.hpp"

namespace adi3::test {

std::vector<unsigned char> pack_all(const void* buf, std::size_t count, const Datatype* t) {
  Segment seg(const_cast<void*>(buf), count, t);
  std::vector<unsigned char> out(seg.size());
  EXPECT_EQ(seg.pack(0, seg.size(), out.data()), seg.size());
  return out;
}

}  // namespace adi3::test
