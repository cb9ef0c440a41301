// Internal: the committed, compact form of a datatype that the Segment walks.
//
// A program is a small tree. Leaves are lists of runs (contiguous memory
// holding `len` elements of one format); inner nodes repeat a child at
// displacements. Commit merges adjacent runs, flattens nested contiguous
// types and folds vectors of vectors, so most types end up as one or two
// levels whose innermost loop is a strided copy.
//
// In a native ("raw") program every element is one byte. A typed program
// (for external32 and other representations) keeps the basic type of each
// run so it can be converted, and lengths count elements.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "segment/builtin.hpp"

namespace adi3 {
class Datatype;
class Representation;
}  // namespace adi3

namespace adi3::detail {

// The format of the elements of a run.
struct Elem {
  Builtin type = Builtin::kByte;  // basic type (typed programs)
  std::uint32_t msz = 1;          // bytes in memory
  std::uint32_t ssz = 1;          // bytes in the packed stream
  bool operator==(const Elem&) const = default;
};

enum class NodeKind : std::uint8_t {
  kVecRuns,  // leaf: count runs of len elements at disp0 + i*stride
  kRuns,     // leaf: count runs of lens[i] elements (format elems[i]) at disps[i]
  kRepRuns,  // leaf: count copies, at disp0 + i*stride, of the run list `child` (a kRuns)
  kVec,      // count blocks at disp0 + i*stride, each blocklen children spaced cext
  kIdx,      // count blocks at disps[i], lens[i] children spaced cext
  kStruct,   // count blocks at disps[i], lens[i] children kids[i] spaced cexts[i]
};

struct Node {
  NodeKind kind = NodeKind::kVecRuns;
  Elem elem;                          // kVecRuns
  std::size_t count = 0;              // runs or blocks (never 0 in a program)
  std::size_t len = 0;                // kVecRuns: elements per run; kVec: children per block
  std::ptrdiff_t disp0 = 0;           // kVecRuns / kRepRuns / kVec
  std::ptrdiff_t stride = 0;          // kVecRuns / kRepRuns / kVec
  std::ptrdiff_t cext = 0;            // kVec / kIdx
  std::size_t size = 0;               // stream bytes of one instance
  std::vector<std::ptrdiff_t> disps;  // kRuns / kIdx / kStruct
  std::vector<std::size_t> lens;      // kRuns: elements; kIdx/kStruct: children
  std::vector<Elem> elems;            // kRuns (one per run)
  std::vector<std::size_t> starts;    // kRuns/kIdx/kStruct: stream offset of each entry, count+1
  const Node* child = nullptr;        // kVec / kIdx / kRepRuns
  std::vector<const Node*> kids;      // kStruct: one per block
  std::vector<std::ptrdiff_t> cexts;  // kStruct

  bool leaf() const { return kind <= NodeKind::kRepRuns; }
  const Node* kid(std::size_t i) const { return kind == NodeKind::kStruct ? kids[i] : child; }
  std::ptrdiff_t kid_extent(std::size_t i) const { return kind == NodeKind::kStruct ? cexts[i] : cext; }
  std::size_t block_len(std::size_t i) const { return kind == NodeKind::kVec ? len : lens[i]; }
  std::ptrdiff_t block_disp(std::size_t i) const {
    return kind == NodeKind::kVec ? disp0 + static_cast<std::ptrdiff_t>(i) * stride : disps[i];
  }
};

struct Program {
  std::vector<std::unique_ptr<Node>> arena;
  const Node* root = nullptr;           // null when the type has no data
  std::size_t size = 0;                 // stream bytes per element of the type
  std::size_t depth = 0;                // nodes on the longest root-to-leaf path
  bool raw = true;                      // native bytes (no conversion)
  const Representation* rep = nullptr;  // typed programs
  std::ptrdiff_t extent = 0;            // the type's extent (element spacing)
};

// Compiles t for rep (nullptr: the native, raw program).
std::shared_ptr<const Program> compile(const Datatype& t, const Representation* rep);

}  // namespace adi3::detail
