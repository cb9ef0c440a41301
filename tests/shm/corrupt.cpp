// shm_corrupt: rank 1 of a 2-rank job writes garbage into its ring in rank
// 0's inbox, as a buggy or hostile process could; rank 0 must refuse it:
// its receive from rank 1 fails with ERR_PROC_FAILED saying the ring is
// corrupt, a send to rank 1 fails too, and nothing crashes.
//
//   mpiexec -n 2 shm_corrupt stamp|length|kind
//
// stamp:  every line of the ring gets a stamp no record can have;
// length: every line gets a well-stamped record (for the first lap) whose
//         payload is longer than the ring;
// kind:   the same with a record kind that does not exist.
// Prints "DETECTED: <message>" on rank 0 and exits 0 when all holds.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "adi3/process.hpp"
#include "channels/shm/inbox.hpp"
#include "find_inbox.hpp"

namespace {

void corrupt(const std::string& mode, int me) {
  char* base = shm_test::find_inbox(0);
  if (!base) {
    std::fprintf(stderr, "rank 1: rank 0's inbox is not mapped here\n");
    _exit(3);
  }
  const auto* h = reinterpret_cast<adi3::shm::InboxHeader*>(base);
  adi3::shm::InboxLayout layout(h->ranks, h->ring_bytes);
  char* data = layout.data(base, me);
  namespace fmt = adi3::shm::ring_format;
  for (std::size_t off = 0; off < h->ring_bytes; off += fmt::kLine) {
    fmt::Record* r = fmt::at(data, off);
    if (mode == "stamp") {
      r->stamp.store(0xdead0000beefull + off, std::memory_order_release);
      continue;
    }
    r->hdr_bytes = 48;
    r->payload_bytes = mode == "length" ? 0xfffffff0u : 0;
    r->kind = mode == "kind" ? 7 : fmt::kPacket;
    r->stamp.store(off + 1, std::memory_order_release);  // right for the first lap
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "stamp" && mode != "length" && mode != "kind") {
    std::fprintf(stderr, "usage: shm_corrupt stamp|length|kind\n");
    return 2;
  }
  auto dev = adi3::init_process();
  adi3::Device& d = *dev;
  if (d.size() != 2) {
    std::fprintf(stderr, "shm_corrupt needs 2 ranks\n");
    return 2;
  }
  const auto* byte = adi3::Datatype::byte();
  if (int e = d.barrier()) {
    std::fprintf(stderr, "rank %d: barrier: %s\n", d.rank(), d.errors().message(e).c_str());
    return 1;
  }
  int failures = 0;
  char b = 0;
  if (d.rank() == 1) {
    // Rank 0 has taken everything of ours once it says go.
    if (int e = d.recv(&b, 1, byte, 0, 4, d.world(), nullptr)) {
      std::fprintf(stderr, "rank 1: go: %s\n", d.errors().message(e).c_str());
      return 1;
    }
    corrupt(mode, 1);
    // Stay alive until rank 0 is done (so only the corruption can explain
    // what it sees); its exit ends this wait.
    d.recv(&b, 1, byte, 0, 5, d.world(), nullptr);
    _exit(0);
  }
  if (int e = d.send(&b, 1, byte, 1, 4, d.world())) {
    std::fprintf(stderr, "rank 0: go: %s\n", d.errors().message(e).c_str());
    return 1;
  }
  int e = d.recv(&b, 1, byte, 1, 5, d.world(), nullptr);
  std::string msg = e ? d.errors().message(e) : "";
  if (adi3::error_class_of(e) != adi3::ErrorClass::ProcFailed || msg.find("corrupt") == std::string::npos) {
    std::printf("FAIL: the receive from rank 1 returned %d: %s\n", e, e ? msg.c_str() : "success");
    ++failures;
  } else {
    std::printf("DETECTED: %s\n", msg.c_str());
  }
  e = d.send(&b, 1, byte, 1, 6, d.world());
  if (adi3::error_class_of(e) != adi3::ErrorClass::ProcFailed) {
    std::printf("FAIL: a send to rank 1 returned %d\n", e);
    ++failures;
  }
  std::fflush(stdout);
  // No finalize: its barrier needs rank 1.
  _exit(failures ? 1 : 0);
}
