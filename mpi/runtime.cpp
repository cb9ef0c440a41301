#include "mpi/runtime.hpp"

#include <algorithm>

#include "mpi/win.hpp"

namespace adi3::mpi {

Runtime* g_runtime = nullptr;
std::atomic<int> g_state{0};
std::atomic<int> g_world{0};

int GroupData::rank_of(int r) const {
  auto it = std::find(ranks.begin(), ranks.end(), r);
  return it == ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - ranks.begin());
}

void init_comm(CommObj& c, GroupPtr group, uint32_t ctx_index, int my_channel_rank) {
  Comm base;
  base.context = context_of(ctx_index);
  base.rank = group->rank_of(my_channel_rank);
  base.size = group->size();
  bool identity = true;
  for (int i = 0; i < base.size && identity; ++i) identity = group->ranks[static_cast<std::size_t>(i)] == i;
  if (!identity) base.peers = group->ranks;
  c.pt2pt = base;
  c.coll = base;
  c.coll.context += 1;
  c.internal = base;
  c.internal.context += 2;
  c.grouped = base;
  c.grouped.context += 3;
  init_buffers(c, group->session_buffer);
  c.group = std::move(group);
  c.ctx_index = ctx_index;
}

void init_buffers(CommObj& c, std::shared_ptr<BsendBuffer> session) {
  c.pt2pt.buffers = std::make_shared<const BsendChain>(BsendChain{std::make_shared<BsendBuffer>(), std::move(session)});
}

Runtime::Runtime(std::unique_ptr<Device> dev, int level) : thread_level(level), dev_(std::move(dev)) {
  main_thread = std::this_thread::get_id();
  // Below MPI_THREAD_MULTIPLE one thread at a time calls MPI: the handle
  // tables need no lock.
  bool threaded = level == MPI_THREAD_MULTIPLE;
  comms.set_threaded(threaded);
  groups.set_threaded(threaded);
  types.set_threaded(threaded);
  errhandlers.set_threaded(threaded);
  infos.set_threaded(threaded);
  keyvals.set_threaded(threaded);
  messages.set_threaded(threaded);
  ops.set_threaded(threaded);
  files.set_threaded(threaded);
  for (std::size_t b = 0; b < kNumBuiltins; ++b) {
    const Datatype* t = builtin_types[b] = Datatype::builtin(static_cast<Builtin>(b));
    if (t && t->is_predefined() && t->true_lb() == 0 && t->size() > 0 && t->is_contiguous()) {
      builtin_plain[b] = static_cast<uint32_t>(t->size());
    }
    builtin_atom[b] = rma::native::fast_elem_of(t);
  }
  int me = dev_->rank();
  auto all = std::make_shared<GroupData>();
  for (int i = 0; i < dev_->size(); ++i) all->ranks.push_back(i);
  init_comm(world, all, 0, me);
  world.handle = MPI_COMM_WORLD;
  world.name = "MPI_COMM_WORLD";
  auto one = std::make_shared<GroupData>();
  one->ranks.push_back(me);
  init_comm(self, one, 1, me);
  self.handle = MPI_COMM_SELF;
  self.name = "MPI_COMM_SELF";
  attr_tag_ub = kTagUb;
  attr_universe = dev_->size();
}

// MPI_Finalize: whatever the program did not free goes now, without
// callbacks (the standard runs them only for MPI_COMM_SELF, before this).
// Info objects stay: they may be used after finalization.
Runtime::~Runtime() {
  wins.for_each([](int, WinObj* w) { delete w; });
  comms.for_each([](int, CommObj* c) { delete c; });
  errhandlers.for_each([](int, ErrhandlerObj* e) { delete e; });
  keyvals.for_each([](int, KeyvalObj* k) { delete k; });
  types.for_each([](int, Datatype* t) { t->release(); });
}

}  // namespace adi3::mpi
