// Point-to-point with noncontiguous datatypes: vectors and structs at eager
// and rendezvous sizes (packed straight into packets, pipelined through
// Segment on both sides), receiving with a different type of the same
// signature, and truncation with partial elements (get_count/get_elements).
#include "harness.hpp"
#include "segment/type_create.hpp"
#include "segment/type_query.hpp"

namespace {

using namespace core_test;
using adi3::Builtin;
using adi3::Datatype;
using adi3::ErrorClass;
using adi3::Request;
using adi3::Status;

class Datatypes : public CoreTest {};

const Datatype* dbl() { return Datatype::builtin(Builtin::kDouble); }

// A committed type the test owns; freed at scope end.
struct Owned {
  Datatype* t = nullptr;
  ~Owned() {
    if (t) (void)adi3::type_free(&t);
  }
};

// Every second double: vector(n, 1, 2).
void make_strided(int n, Owned* o) {
  ASSERT_EQ(adi3::type_vector(n, 1, 2, dbl(), &o->t), ErrorClass::Success);
  ASSERT_EQ(adi3::type_commit(o->t), ErrorClass::Success);
}

TEST_P(Datatypes, StridedVectorToContiguous) {
  run(2, [](Device& dev) {
    // Eager, just over the eager limit, and large enough to pipeline.
    for (int n : {1, 7, static_cast<int>(dev.eager_limit() / 8) + 3, 1 << 18}) {
      SCOPED_TRACE("doubles " + std::to_string(n));
      Owned strided;
      make_strided(n, &strided);
      if (dev.rank() == 0) {
        std::vector<double> src(2 * static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = i % 2 ? -1.0 : static_cast<double>(i / 2);
        ASSERT_OK(dev, dev.send(src.data(), 1, strided.t, 1, 3, dev.world()));
      } else {
        std::vector<double> dst(static_cast<std::size_t>(n), -7.0);
        Status st;
        ASSERT_OK(dev, dev.recv(dst.data(), static_cast<std::size_t>(n), dbl(), 0, 3, dev.world(), &st));
        EXPECT_EQ(st.bytes, static_cast<std::size_t>(n) * sizeof(double));
        for (int i = 0; i < n; ++i) ASSERT_EQ(dst[static_cast<std::size_t>(i)], i) << "element " << i;
      }
    }
  });
}

TEST_P(Datatypes, ContiguousToStridedVectorLeavesGaps) {
  run(2, [](Device& dev) {
    for (int n : {5, static_cast<int>(dev.eager_limit() / 8) + 1, 1 << 17}) {
      SCOPED_TRACE("doubles " + std::to_string(n));
      Owned strided;
      make_strided(n, &strided);
      if (dev.rank() == 0) {
        std::vector<double> src(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) src[static_cast<std::size_t>(i)] = i + 0.5;
        Request* r = nullptr;
        ASSERT_OK(dev, dev.isend(src.data(), src.size(), dbl(), 1, 4, dev.world(), adi3::SendMode::Standard, &r));
        ASSERT_OK(dev, dev.wait(&r, nullptr));
      } else {
        std::vector<double> dst(2 * static_cast<std::size_t>(n), -7.0);
        Request* r = nullptr;
        ASSERT_OK(dev, dev.irecv(dst.data(), 1, strided.t, 0, 4, dev.world(), &r));
        Status st;
        ASSERT_OK(dev, dev.wait(&r, &st));
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(dst[2 * static_cast<std::size_t>(i)], i + 0.5) << "element " << i;
          ASSERT_EQ(dst[2 * static_cast<std::size_t>(i) + 1], -7.0) << "gap " << i << " written";
        }
      }
    }
  });
}

// A struct {int; double} with padding, sent as structs, received as pairs
// of (int, double) described by another struct type of the same signature.
TEST_P(Datatypes, StructsWithPaddingBothSidesUnexpectedToo) {
  struct Item {
    int i;
    double d;
  };
  run(2, [](Device& dev) {
    const int blocks[2] = {1, 1};
    const std::ptrdiff_t disps[2] = {offsetof(Item, i), offsetof(Item, d)};
    const Datatype* types[2] = {Datatype::builtin(Builtin::kInt), dbl()};
    Owned item;
    ASSERT_EQ(adi3::type_struct(2, blocks, disps, types, &item.t), ErrorClass::Success);
    ASSERT_EQ(adi3::type_commit(item.t), ErrorClass::Success);
    const std::size_t n = 50000;  // 600 KB of data: rendezvous
    adi3::Comm ctl = ctl_comm(dev);
    if (dev.rank() == 0) {
      std::vector<Item> src(n);
      for (std::size_t k = 0; k < n; ++k) src[k] = {static_cast<int>(k), k * 0.25};
      ASSERT_OK(dev, dev.send(src.data(), n, item.t, 1, 5, dev.world()));
      ASSERT_OK(dev, dev.send(src.data(), 3, item.t, 1, 6, dev.world()));  // eager, arrives unexpected
      notify(dev, ctl, 1, 1);
    } else {
      // The packed form is int, double, int, double...: receive it as a
      // byte-tight layout described by a different type.
      const std::ptrdiff_t tight[2] = {0, sizeof(int)};
      Owned packed_pair;
      ASSERT_EQ(adi3::type_struct(2, blocks, tight, types, &packed_pair.t), ErrorClass::Success);
      Owned resized;
      ASSERT_EQ(adi3::type_resized(packed_pair.t, 0, sizeof(int) + sizeof(double), &resized.t), ErrorClass::Success);
      ASSERT_EQ(adi3::type_commit(resized.t), ErrorClass::Success);
      std::vector<char> dst(n * 12, 0);
      Status st;
      ASSERT_OK(dev, dev.recv(dst.data(), n, resized.t, 0, 5, dev.world(), &st));
      EXPECT_EQ(st.bytes, n * 12);
      for (std::size_t k = 0; k < n; k += 997) {
        int i;
        double d;
        std::memcpy(&i, dst.data() + k * 12, 4);
        std::memcpy(&d, dst.data() + k * 12 + 4, 8);
        ASSERT_EQ(i, static_cast<int>(k));
        ASSERT_EQ(d, k * 0.25);
      }
      await(dev, ctl, 0, 1);
      std::vector<Item> back(3, Item{-1, -1});
      ASSERT_OK(dev, dev.recv(back.data(), 3, item.t, 0, 6, dev.world(), &st));
      for (int k = 0; k < 3; ++k) EXPECT_EQ(back[static_cast<std::size_t>(k)].i, k);
    }
  });
}

// Truncation mid-element: get_count is UNDEFINED, get_elements counts the
// whole basic elements that arrived.
TEST_P(Datatypes, TruncationWithPartialElements) {
  run(2, [](Device& dev) {
    for (std::size_t doubles : {std::size_t{10}, dev.eager_limit() / 8 + 100}) {
      SCOPED_TRACE("doubles " + std::to_string(doubles));
      if (dev.rank() == 0) {
        std::vector<double> src(doubles, 1.5);
        ASSERT_OK(dev, dev.send(src.data(), doubles, dbl(), 1, 7, dev.world()));
      } else {
        // Room for doubles/2 pairs of (double, int): the byte count that
        // fits ends inside an element.
        Owned pair;
        const int blocks[2] = {1, 1};
        const std::ptrdiff_t disps[2] = {0, 8};
        const Datatype* types[2] = {dbl(), Datatype::builtin(Builtin::kInt)};
        ASSERT_EQ(adi3::type_struct(2, blocks, disps, types, &pair.t), ErrorClass::Success);
        ASSERT_EQ(adi3::type_commit(pair.t), ErrorClass::Success);
        std::size_t cap_elems = doubles / 2;
        std::vector<char> dst(cap_elems * 16 + 16, 0);
        Status st;
        int e = dev.recv(dst.data(), cap_elems, pair.t, 0, 7, dev.world(), &st);
        EXPECT_EQ(adi3::error_class_of(e), ErrorClass::Truncate);
        EXPECT_EQ(st.bytes, cap_elems * 12);  // every byte that fits
        long long count = 0, elements = 0;
        ASSERT_EQ(adi3::type_get_count(pair.t, st.bytes, &count), ErrorClass::Success);
        EXPECT_EQ(count, static_cast<long long>(cap_elems));
        ASSERT_EQ(adi3::type_get_elements(pair.t, st.bytes, &elements), ErrorClass::Success);
        EXPECT_EQ(elements, static_cast<long long>(2 * cap_elems));
        // 20 bytes = one (double, int) pair and one more double: no whole
        // count, but three basic elements.
        ASSERT_EQ(adi3::type_get_count(pair.t, 20, &count), ErrorClass::Success);
        EXPECT_EQ(count, adi3::kUndefined);
        ASSERT_EQ(adi3::type_get_elements(pair.t, 20, &elements), ErrorClass::Success);
        EXPECT_EQ(elements, 3);
      }
    }
  });
}

CORE_INSTANTIATE(Datatypes);

}  // namespace
