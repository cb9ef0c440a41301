// Segment behaviour, MPI_Pack semantics, get_elements partial elements,
// and the shape of committed programs.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>

#include "segment/pack.hpp"
#include "segment/program.hpp"
#include "segment/segment.hpp"
#include "segment/stream_gather.hpp"
#include "segment/type_query.hpp"
#include "test_util.hpp"

namespace adi3::test {
namespace {

using detail::NodeKind;

TEST(Segment, ContiguousTypesNeedNoPacker) {
  TypeRef t;
  ASSERT_EQ(type_contiguous(5, B(Builtin::kInt), t.out()), ErrorClass::Success);
  EXPECT_TRUE(t->is_contiguous());
  TypeRef r;
  ASSERT_EQ(type_resized(B(Builtin::kInt), -8, 4, r.out()), ErrorClass::Success);
  EXPECT_TRUE(r->is_contiguous());  // data at 0 of each 4-byte element
  TypeRef v;
  ASSERT_EQ(type_vector(2, 1, 2, B(Builtin::kInt), v.out()), ErrorClass::Success);
  EXPECT_FALSE(v->is_contiguous());
  int bl[2] = {1, 1};
  std::ptrdiff_t d[2] = {4, 0};
  const Datatype* ts[2] = {B(Builtin::kInt), B(Builtin::kInt)};
  TypeRef swapped;
  ASSERT_EQ(type_struct(2, bl, d, ts, swapped.out()), ErrorClass::Success);
  EXPECT_FALSE(swapped->is_contiguous());  // dense but out of order
}

TEST(Segment, EmptyAndDegenerate) {
  Segment none;
  EXPECT_EQ(none.size(), 0u);
  char c;
  EXPECT_EQ(none.pack(0, 10, &c), 0u);
  TypeRef z;
  ASSERT_EQ(type_contiguous(0, B(Builtin::kInt), z.out()), ErrorClass::Success);
  z->commit();
  EXPECT_EQ(z->size(), 0u);
  EXPECT_EQ(z->extent(), 0);
  Segment s(nullptr, 10, z.get());
  EXPECT_EQ(s.size(), 0u);
  struct iovec iov[1];
  std::size_t n = 7;
  EXPECT_EQ(s.to_iov(0, 5, iov, 1, &n), 0u);
  EXPECT_EQ(n, 0u);
  int a[4] = {1, 2, 3, 4}, b[4] = {};
  Segment whole(a, 4, B(Builtin::kInt));
  EXPECT_EQ(whole.pack(4, 100, b), 12u);  // clipped to size()
  EXPECT_EQ(b[0], 2);
  EXPECT_EQ(whole.pack(16, 20, b), 0u);
}

TEST(Segment, IovMergesAndRespectsTheLimit) {
  TypeRef v;
  ASSERT_EQ(type_vector(10, 2, 3, B(Builtin::kInt), v.out()), ErrorClass::Success);
  v->commit();
  int a[30];
  Segment s(a, 1, v.get());
  struct iovec iov[4];
  std::size_t n = 0;
  EXPECT_EQ(s.to_iov(0, 80, iov, 4, &n), 32u);
  ASSERT_EQ(n, 4u);
  EXPECT_EQ(iov[0].iov_base, a);
  EXPECT_EQ(iov[1].iov_base, a + 3);
  EXPECT_EQ(iov[1].iov_len, 8u);
  EXPECT_EQ(s.to_iov(32, 36, iov, 4, &n), 4u);  // part of a block
  EXPECT_EQ(iov[0].iov_base, a + 12);
  // A resized type whose elements touch gives one entry for all of them.
  TypeRef r;
  ASSERT_EQ(type_resized(B(Builtin::kDouble), 0, 8, r.out()), ErrorClass::Success);
  r->commit();
  double d[6];
  Segment rs(d, 6, r.get());
  EXPECT_EQ(rs.to_iov(0, 48, iov, 1, &n), 48u);
  EXPECT_EQ(n, 1u);
  Segment ext(d, 6, r.get(), Representation::external32());
  EXPECT_EQ(ext.to_iov(0, 48, iov, 1, &n), 0u);  // memory is not the external32 stream
}

TEST(Segment, MpiPackPositions) {
  int ints[3] = {7, 8, 9};
  double dbl = 2.5;
  std::vector<unsigned char> buf(64);
  std::size_t pos = 0, sz = 0;
  ASSERT_EQ(pack_size(3, B(Builtin::kInt), &sz), ErrorClass::Success);
  EXPECT_EQ(sz, 12u);
  ASSERT_EQ(pack(ints, 3, B(Builtin::kInt), buf.data(), buf.size(), &pos), ErrorClass::Success);
  ASSERT_EQ(pack(&dbl, 1, B(Builtin::kDouble), buf.data(), buf.size(), &pos), ErrorClass::Success);
  EXPECT_EQ(pos, 20u);
  EXPECT_EQ(pack(ints, 3, B(Builtin::kInt), buf.data(), 30, &pos), ErrorClass::Truncate);
  EXPECT_EQ(pos, 20u);
  int back[3] = {};
  double dback = 0;
  std::size_t in = 0;
  ASSERT_EQ(unpack(buf.data(), 20, &in, back, 3, B(Builtin::kInt)), ErrorClass::Success);
  ASSERT_EQ(unpack(buf.data(), 20, &in, &dback, 1, B(Builtin::kDouble)), ErrorClass::Success);
  EXPECT_EQ(in, 20u);
  EXPECT_EQ(back[2], 9);
  EXPECT_EQ(dback, 2.5);
  EXPECT_EQ(unpack(buf.data(), 20, &in, &dback, 1, B(Builtin::kDouble)), ErrorClass::Truncate);
  EXPECT_EQ(pack(ints, 1, nullptr, buf.data(), 64, &pos), ErrorClass::Type);
}

// Runs of every fixed-size copy width (and odd ones between them),
// gathered and scattered: near (blocks of 8 doubles: 64 bytes at 128) and
// far apart (the prefetching loop), run counts that leave the unrolled
// loop a tail, one and several copies of the type (copies continue the
// strided batch). MPI_Pack/Unpack take the whole-stream pass, a Segment
// cut in three the cursor: both give the same bytes, and unpacking leaves
// the gaps untouched.
TEST(Segment, FixedWidthRunsPackAndUnpack) {
  for (int width : {1, 2, 4, 8, 16, 24, 32, 48, 64}) {
    for (int gap : {0, 1, 600}) {
      for (int blocks : {1, 5, 17, 70}) {
        for (std::size_t count : {1u, 3u}) {
          const std::ptrdiff_t stride = 2 * width + gap;
          TypeRef t;
          ASSERT_EQ(type_vector(blocks, width, stride, B(Builtin::kByte), t.out()), ErrorClass::Success);
          ASSERT_EQ(type_commit(t.get()), ErrorClass::Success);
          SCOPED_TRACE("width " + std::to_string(width) + " stride " + std::to_string(stride) + " blocks " +
                       std::to_string(blocks) + " count " + std::to_string(count));
          const auto ext = static_cast<std::size_t>(t->extent());
          std::vector<unsigned char> mem(ext * count), want, out(count * t->size());
          std::iota(mem.begin(), mem.end(), 0);
          std::vector<bool> data(mem.size(), false);
          for (std::size_t c = 0; c < count; ++c) {
            for (int b = 0; b < blocks; ++b) {
              for (int i = 0; i < width; ++i) {
                std::size_t at = c * ext + static_cast<std::size_t>(b * stride + i);
                want.push_back(mem[at]);
                data[at] = true;
              }
            }
          }
          std::size_t pos = 0;
          ASSERT_EQ(pack(mem.data(), count, t.get(), out.data(), out.size(), &pos), ErrorClass::Success);
          ASSERT_EQ(pos, out.size());
          ASSERT_EQ(out, want);
          std::vector<unsigned char> split(out.size(), 0);
          Segment seg(mem.data(), count, t.get());
          const std::size_t a = out.size() / 3, z = out.size() - out.size() / 5;
          ASSERT_EQ(seg.pack(0, a, split.data()), a);
          ASSERT_EQ(seg.pack(a, z, split.data() + a), z - a);
          ASSERT_EQ(seg.pack(z, out.size(), split.data() + z), out.size() - z);
          ASSERT_EQ(split, want);

          std::vector<unsigned char> back(mem.size(), 0xee), back_seg(mem.size(), 0xee);
          std::size_t in = 0;
          ASSERT_EQ(unpack(out.data(), out.size(), &in, back.data(), count, t.get()), ErrorClass::Success);
          ASSERT_EQ(in, out.size());
          Segment useg(back_seg.data(), count, t.get());
          ASSERT_EQ(useg.unpack(0, a, out.data()), a);
          ASSERT_EQ(useg.unpack(a, out.size(), out.data() + a), out.size() - a);
          for (std::size_t i = 0; i < back.size(); ++i) {
            ASSERT_EQ(back[i], data[i] ? mem[i] : 0xee) << "byte " << i;
            ASSERT_EQ(back_seg[i], back[i]) << "byte " << i;
          }
        }
      }
    }
  }
}

// Batches larger than L2 (input span plus output) pack with streaming
// stores (segment/stream_gather.hpp): every run shape it takes (one double
// of two, whole 16-byte lanes) and ones it leaves to the ordinary loop, at
// output positions 16-byte aligned, 8 bytes past, and odd; a byte before
// and after the packed bytes stays untouched.
TEST(Segment, LongBatchesPackLikeTheOrdinaryLoop) {
  const std::size_t budget = detail::stream_gather_min() + (64u << 10);
  for (int width : {8, 16, 32, 64, 24}) {
    for (std::size_t shift : {0u, 8u, 3u}) {
      const std::ptrdiff_t stride = 2 * width;
      const auto blocks = static_cast<int>(budget / static_cast<std::size_t>(stride + width) + 5);
      TypeRef t;
      ASSERT_EQ(type_vector(blocks, width, stride, B(Builtin::kByte), t.out()), ErrorClass::Success);
      ASSERT_EQ(type_commit(t.get()), ErrorClass::Success);
      SCOPED_TRACE("width " + std::to_string(width) + " shift " + std::to_string(shift));
      std::vector<unsigned char> mem(static_cast<std::size_t>(t->extent()));
      for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<unsigned char>(i * 7 + i / 251);
      std::vector<unsigned char> want;
      for (int b = 0; b < blocks; ++b) {
        const auto at = static_cast<std::size_t>(b) * static_cast<std::size_t>(stride);
        want.insert(want.end(), mem.begin() + static_cast<std::ptrdiff_t>(at),
                    mem.begin() + static_cast<std::ptrdiff_t>(at) + width);
      }
      // 16-byte aligned storage; the packed bytes start `shift` past it.
      std::vector<double> store((want.size() + shift + 1) / sizeof(double) + 2, 0.0);
      auto* base = reinterpret_cast<unsigned char*>(store.data());
      std::memset(base, 0xa5, store.size() * sizeof(double));
      std::size_t pos = shift;
      ASSERT_EQ(pack(mem.data(), 1, t.get(), base, want.size() + shift + 1, &pos), ErrorClass::Success);
      ASSERT_EQ(pos, want.size() + shift);
      ASSERT_EQ(std::memcmp(base + shift, want.data(), want.size()), 0);
      if (shift) {
        EXPECT_EQ(base[shift - 1], 0xa5);
      }
      EXPECT_EQ(base[shift + want.size()], 0xa5);
    }
  }
}

TEST(GetElements, PartialElements) {
  int bl[2] = {1, 1};
  std::ptrdiff_t d[2] = {0, 8};
  const Datatype* ts[2] = {B(Builtin::kInt), B(Builtin::kDouble)};
  TypeRef t;
  ASSERT_EQ(type_struct(2, bl, d, ts, t.out()), ErrorClass::Success);
  const std::pair<std::size_t, long long> cases[] = {{0, 0},  {4, 1},           {6, kUndefined}, {12, 2},
                                                     {16, 3}, {18, kUndefined}, {24, 4},         {3, kUndefined}};
  for (auto [bytes, want] : cases) {
    long long n = -1;
    ASSERT_EQ(type_get_elements(t.get(), bytes, &n), ErrorClass::Success);
    EXPECT_EQ(n, want) << bytes;
  }
  long long n = -1;
  ASSERT_EQ(type_get_elements(B(Builtin::kDoubleInt), 12, &n), ErrorClass::Success);
  EXPECT_EQ(n, 2);  // a pair is two basic elements
  ASSERT_EQ(type_get_elements(B(Builtin::kDoubleInt), 8, &n), ErrorClass::Success);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(type_get_elements(B(Builtin::kCDoubleComplex), 32, &n), ErrorClass::Success);
  EXPECT_EQ(n, 2);  // a complex number is one basic element
  ASSERT_EQ(type_get_elements(B(Builtin::kCDoubleComplex), 8, &n), ErrorClass::Success);
  EXPECT_EQ(n, kUndefined);
  ASSERT_EQ(type_get_elements(B(Builtin::kShort), 5, &n), ErrorClass::Success);
  EXPECT_EQ(n, kUndefined);
}

TEST(Segment, DeepNestingBeyondTheInlineFrames) {
  // 14 levels of 2 copies; gaps differing per level stop any folding.
  std::vector<TypeRef> levels;
  const Datatype* cur = B(Builtin::kShort);
  for (int k = 0; k < 14; ++k) {
    TypeRef t;
    ASSERT_EQ(type_hvector(2, 1, cur->extent() + 2 + k, cur, t.out()), ErrorClass::Success);
    cur = t.get();
    levels.push_back(std::move(t));
  }
  Datatype* top = levels.back().get();
  top->commit();
  EXPECT_GE(top->native_program().depth, 14u);
  const auto es = ref::replicate(ref::flatten(top), 2);
  std::vector<unsigned char> mem(static_cast<std::size_t>(2 * top->extent()));
  for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<unsigned char>(i * 31 + 7);
  const auto want = ref::pack(es, mem.data());
  Segment seg(mem.data(), 2, top);
  ASSERT_EQ(seg.size(), want.size());
  std::vector<unsigned char> got(want.size());
  for (std::size_t pos = 0; pos < got.size(); pos += 333) seg.pack(pos, pos + 333, got.data() + pos);
  EXPECT_EQ(got, want);
  std::vector<unsigned char> back(mem.size(), 0), expect(mem.size(), 0);
  ref::unpack(es, want.data(), expect.data());
  Segment useg(back.data(), 2, top);
  for (std::size_t pos = 0; pos < got.size(); pos += 77) useg.unpack(pos, pos + 77, want.data() + pos);
  EXPECT_EQ(back, expect);
}

// ---- the committed form ----

const detail::Node* root(Datatype* t) {
  t->commit();
  return t->native_program().root;
}

TEST(Commit, NestedContiguousIsOneRun) {
  TypeRef a, b, c;
  ASSERT_EQ(type_contiguous(3, B(Builtin::kInt), a.out()), ErrorClass::Success);
  ASSERT_EQ(type_contiguous(4, a.get(), b.out()), ErrorClass::Success);
  ASSERT_EQ(type_vector(2, 2, 2, b.get(), c.out()), ErrorClass::Success);  // tiles too
  const detail::Node* n = root(c.get());
  ASSERT_EQ(n->kind, NodeKind::kVecRuns);
  EXPECT_EQ(n->count, 1u);
  EXPECT_EQ(n->len, 4u * 48u);
}

TEST(Commit, VectorOfVectorsIsOneStridedLoop) {
  // A 2-d column: vector of a vector whose pattern continues.
  TypeRef inner, outer;
  ASSERT_EQ(type_vector(4, 1, 8, B(Builtin::kDouble), inner.out()), ErrorClass::Success);
  TypeRef rs;
  ASSERT_EQ(type_resized(inner.get(), 0, 4 * 64, rs.out()), ErrorClass::Success);
  ASSERT_EQ(type_contiguous(5, rs.get(), outer.out()), ErrorClass::Success);
  const detail::Node* n = root(outer.get());
  ASSERT_EQ(n->kind, NodeKind::kVecRuns);
  EXPECT_EQ(n->count, 20u);
  EXPECT_EQ(n->len, 8u);
  EXPECT_EQ(n->stride, 64);
  // The x-face of a cube as a subarray is the same single loop.
  int sizes[3] = {16, 16, 16}, sub[3] = {16, 16, 1}, st[3] = {0, 0, 5};
  TypeRef face;
  ASSERT_EQ(type_subarray(3, sizes, sub, st, kOrderC, B(Builtin::kDouble), face.out()), ErrorClass::Success);
  const detail::Node* f = root(face.get());
  ASSERT_EQ(f->kind, NodeKind::kVecRuns);
  EXPECT_EQ(f->count, 256u);
  EXPECT_EQ(f->stride, 16 * 8);
  EXPECT_EQ(f->disp0, 5 * 8);
}

TEST(Commit, StructOfAdjacentFieldsMerges) {
  int bl[3] = {1, 2, 1};
  std::ptrdiff_t d[3] = {0, 4, 12};
  const Datatype* ts[3] = {B(Builtin::kInt), B(Builtin::kFloat), B(Builtin::kDouble)};
  TypeRef t;
  ASSERT_EQ(type_struct(3, bl, d, ts, t.out()), ErrorClass::Success);
  const detail::Node* n = root(t.get());
  ASSERT_EQ(n->kind, NodeKind::kVecRuns);
  EXPECT_EQ(n->count, 1u);
  EXPECT_EQ(n->len, 20u);
  EXPECT_EQ(t->extent(), 24);
  // An external32 program keeps the fields apart (they convert differently).
  auto p = t->program_for(Representation::external32());
  EXPECT_EQ(p->size, 20u);
  EXPECT_EQ(p->root->kind, NodeKind::kRuns);
}

TEST(Commit, ResumingCostsOnlyTheNewBytes) {
  // 1 MiB of 8-byte runs packed 1000 bytes at a time: with a cursor this
  // is linear; restarting from 0 each time would take minutes under ASan.
  TypeRef v;
  ASSERT_EQ(type_vector(1 << 17, 1, 2, B(Builtin::kDouble), v.out()), ErrorClass::Success);
  v->commit();
  std::vector<double> a(2u << 17);
  std::iota(a.begin(), a.end(), 0.0);
  Segment s(a.data(), 1, v.get());
  std::vector<double> out(1 << 17);
  auto* o = reinterpret_cast<char*>(out.data());
  for (std::size_t pos = 0; pos < s.size(); pos += 1000) s.pack(pos, pos + 1000, o + pos);
  EXPECT_EQ(out[12345], 2.0 * 12345);
  EXPECT_EQ(out.back(), 2.0 * ((1 << 17) - 1));
}

}  // namespace
}  // namespace adi3::test
