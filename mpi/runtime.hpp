// The MPI layer's one process-wide object: created by MPI_Init, destroyed by
// MPI_Finalize. It owns the Device and every table of handles; the C API
// reaches it through the single pointer g_runtime.
#pragma once
#include <array>
#include <atomic>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <mpi.h>

#include "adi3/device.hpp"
#include "mpi/context_ids.hpp"
#include "mpi/handle_table.hpp"
#include "rma/fast_elem.hpp"
#include "segment/builtin.hpp"

namespace adi3::mpi {

// Members of a group as channel ranks (= MPI_COMM_WORLD ranks: no dynamic
// processes), in group-rank order.
struct GroupData {
  std::vector<int> ranks;
  int size() const { return static_cast<int>(ranks.size()); }
  // Group rank of channel rank r, or MPI_UNDEFINED.
  int rank_of(int r) const;
  // A session's process set: its communicators use the session's buffer
  // for buffered mode (MPI-4.1). Null in the World Model.
  std::shared_ptr<BsendBuffer> session_buffer;
};
using GroupPtr = std::shared_ptr<const GroupData>;

// An error handler; user handles and the communicators using it hold
// references. The handle slot is freed when the last one goes.
struct ErrhandlerObj {
  std::atomic<int> refs{1};
  int handle = MPI_ERRHANDLER_NULL;
  MPI_Comm_errhandler_function* fn = nullptr;
  // Made by MPI_Win_create_errhandler: fn is really an
  // MPI_Win_errhandler_function and goes on windows only.
  bool for_win = false;
  // Made by MPI_File_create_errhandler: goes on MPI_FILE_NULL only.
  bool for_file = false;
};

// A key for attributes; stays valid while attributes use it.
enum class KeyvalKind : int { Comm, Type, Win };
struct KeyvalObj {
  std::atomic<int> refs{1};
  std::atomic<bool> handle_freed{false};  // MPI_*_free_keyval dropped its reference
  int handle = MPI_KEYVAL_INVALID;
  KeyvalKind kind = KeyvalKind::Comm;
  void* copy_fn = nullptr;    // MPI_{Comm,Type}_copy_attr_function*
  void* delete_fn = nullptr;  // MPI_{Comm,Type}_delete_attr_function*
  void* extra_state = nullptr;
};

// Attributes of one object: keyval handle -> (keyval, value), in the order
// they were set.
using AttrList = std::vector<std::pair<KeyvalObj*, void*>>;

// Process topologies attached to a communicator.
struct CartTopo {
  std::vector<int> dims, periods;
};
struct GraphTopo {
  std::vector<int> index, edges;  // as given to MPI_Graph_create
};
struct DistGraphTopo {
  std::vector<int> sources, source_weights, destinations, dest_weights;
  bool weighted = false;
};

struct CommObj {
  // Four core communicators over the same ranks: user point-to-point,
  // collectives, this layer's own traffic (context agreement, split), and
  // Comm_create_group's agreement over a subset.
  Comm pt2pt, coll, internal, grouped;
  GroupPtr group;
  uint32_t ctx_index = 0;
  int handle = MPI_COMM_NULL;
  ErrhandlerObj* errh = nullptr;  // nullptr: MPI_ERRORS_ARE_FATAL
  int errh_builtin = MPI_ERRORS_ARE_FATAL;
  std::string name;
  AttrList attrs;
  std::vector<std::pair<std::string, std::string>> info;
  std::shared_ptr<void> nbc;  // coll::Sequence of nonblocking collectives
  // The collectives' express path (mpi/coll_express.hpp): set once a
  // collective found the shared segment ready; _off once it never will be.
  std::shared_ptr<void> coll_express;
  bool coll_express_off = false;
  std::shared_ptr<const CartTopo> cart;
  std::shared_ptr<const GraphTopo> graph;
  std::shared_ptr<const DistGraphTopo> dist;
  // Intercommunicators: point-to-point and collective Comms address the
  // remote group; `internal` spans both groups in union order; `grouped`
  // is the local group alone.
  bool inter = false;
  GroupPtr remote;
  int rank() const { return pt2pt.rank; }
  int size() const { return group->size(); }  // the local group
};

struct WinObj;   // mpi/win.hpp
struct FileObj;  // mpi/io_file.hpp

struct InfoObj {
  std::vector<std::pair<std::string, std::string>> entries;  // insertion order
};

// Info objects outlive MPI_Init..MPI_Finalize: MPI-4 lets programs create
// and use them before initialization and after finalization, so their table
// belongs to the process (made on first use, emptied at exit), not to the
// Runtime.
HandleTable<InfoObj*>& info_table();

// A user-defined reduction (coll/ gets it through the binding).
struct OpObj {
  MPI_User_function* fn = nullptr;
  bool commute = true;
  MPI_User_function_c* fn_c = nullptr;  // MPI_Op_create_c: takes an MPI_Count length
};

// What an MPI_Request names: a core request and the communicator whose
// handler reports its errors (kept in the request: Request::handle_comm).
struct ReqSlot {
  Request* req = nullptr;
  MPI_Comm comm = MPI_COMM_WORLD;
};

class Runtime {
 public:
  Runtime(std::unique_ptr<Device> dev, int thread_level);
  ~Runtime();

  Device& dev() { return *dev_; }
  int thread_level = MPI_THREAD_SINGLE;
  std::thread::id main_thread;

  CommObj world, self;
  // Datatype::builtin(b) by index, read by every point-to-point call.
  std::array<const Datatype*, kNumBuiltins> builtin_types{};
  // By the same index: the size of a predefined type that is one contiguous
  // run from its address (true_lb 0), else 0: the one-sided fast paths'
  // datatype check in one load (mpi/win_ops.cpp fast_copy).
  std::array<uint32_t, kNumBuiltins> builtin_plain{};
  // By the same index: what the native fast atomics may do with its
  // elements (rma/fast_elem.hpp): accumulate, fetch_and_op and
  // compare_and_swap's type and op checks in one load (mpi/win_ops.hpp fast_elem).
  std::array<rma::native::FastElem, kNumBuiltins> builtin_atom{};
  HandleTable<CommObj*> comms;
  HandleTable<GroupPtr> groups;
  HandleTable<Datatype*> types;
  HandleTable<ErrhandlerObj*> errhandlers;
  HandleTable<InfoObj*>& infos = info_table();
  HandleTable<KeyvalObj*> keyvals;
  HandleTable<Request*> messages;
  HandleTable<OpObj> ops;
  HandleTable<WinObj*> wins;
  ContextIds contexts;
  InfoObj env_info;
  HandleTable<FileObj*> files;  // open MPI-IO files (mpi/io_file.cpp)
  // MPI_FILE_NULL's error handler (MPI_File_set_errhandler): the handler
  // new files start with (MPI 3.1 13.7).
  struct FileDefault {
    ErrhandlerObj* errh = nullptr;
    int errh_builtin = MPI_ERRORS_RETURN;
  } file_default;
  // The next data tag of a partitioned send (partitioned.cpp).
  std::atomic<uint32_t> partition_tags{0};

  // Handles of derived datatypes by object (for user reduction functions).
  std::mutex type_lock;
  std::map<const Datatype*, MPI_Datatype> type_handles;
  // MPI_Type_create_f90_*: one handle per (combiner, p, r), a duplicate of
  // the C type that matches, predefined to the program (MPI 3.1 17.2.5).
  std::map<std::array<int, 3>, MPI_Datatype> f90_types;
  std::map<MPI_Datatype, std::array<int, 3>> f90_params;

  // Attributes of datatypes, and names given to predefined ones.
  std::mutex attr_lock;
  std::map<const Datatype*, AttrList> type_attrs;
  std::map<int, std::string> builtin_type_names;

  // Predefined attribute values (their addresses are what get_attr gives).
  int attr_tag_ub = 0, attr_host = MPI_PROC_NULL, attr_io = MPI_ANY_SOURCE, attr_wtime_global = 0;
  int attr_universe = 0, attr_appnum = 0, attr_lastusedcode = MPI_ERR_LASTCODE;

  // MPI_Add_error_class/code/string.
  std::mutex error_lock;
  int next_class = MPI_ERR_LASTCODE;
  int user_codes = 0;
  std::map<int, std::string> error_strings;
  std::map<int, int> codes_of_class;  // user codes per class (MPI_Remove_error_class)
  std::set<int> removed_errors;       // MPI_Remove_error_class/code: no longer valid
  // The first error the program was handed back (note_returned): its call
  // (a static name) and code. The peers may be waiting for this rank in it.
  std::atomic<const char*> returned_fn{nullptr};
  std::atomic<int> returned_code{0};
  // Errors after which no peer waits in their calls (no_peer_waits()), one
  // per slot of the device's ErrorLog (a code names its slot): threads
  // failing at once each find their own code when it is handed back.
  static constexpr unsigned kNoWaitSlots = 256;
  std::array<std::atomic<int>, kNoWaitSlots> no_wait_codes{};
  // And each marking thread's last such code, until it is handed back
  // (a slot's mark is lost once 256 newer marked errors took it). Error
  // paths only, hence the lock.
  std::mutex no_wait_lock;
  std::map<std::thread::id, int> no_wait_threads;

  // MPI_Intercomm_create: how many leader meetings this rank had with each
  // remote leader (by channel rank). Both leaders count each meeting, also
  // one a leader refused, and every leader message carries the count: a
  // message of a meeting that ended without it is told from the current
  // one's. Key -1: the refusals whose remote leader this rank could not tell.
  std::mutex leader_lock;
  std::map<int, uint32_t> leader_meetings;
  // MPI_Comm_create_group calls this rank made with a bad group handle
  // (agree.cpp): the members' answers to its marks echo the number, so one
  // to an earlier such call is told from the current one's.
  std::atomic<uint32_t> bad_group_calls{0};

  // Extension objects without a free call (MPIX_Grequest_class): owned
  // here, released at MPI_Finalize.
  std::mutex extension_lock;
  std::vector<std::shared_ptr<void>> extensions;

 private:
  std::unique_ptr<Device> dev_;
};

// Null before MPI_Init and after MPI_Finalize.
extern Runtime* g_runtime;
// The runtime (started by MPI_Init or the first MPI_Session_init): 0 before,
// 1 while it runs, 2 after it ended.
extern std::atomic<int> g_state;
// The World Model: 0 before MPI_Init, 1 until MPI_Finalize, 2 after it
// (what MPI_Initialized/MPI_Finalized report; sessions do not count).
extern std::atomic<int> g_world;
// env.cpp: starts the runtime (g_state 0 -> 1) or ends it (1 -> 2).
int start_runtime(int required, int* provided);
int stop_runtime(const char* fn);
// session.cpp: with sessions still live, the last MPI_Session_finalize
// ends the runtime instead of MPI_Finalize (true: it will).
bool sessions_keep_runtime();

// Sets up a CommObj's four core communicators from its group, the caller's
// channel rank and a context index.
void init_comm(CommObj& c, GroupPtr group, uint32_t ctx_index, int my_channel_rank);
// Buffered mode's buffers of c (MPI-4.1): one of its own, then session's
// (null: the World Model's communicators have none).
void init_buffers(CommObj& c, std::shared_ptr<BsendBuffer> session);
inline std::shared_ptr<BsendBuffer> session_buffer(const CommObj& c) {
  return c.pt2pt.buffers ? c.pt2pt.buffers->session : nullptr;
}

}  // namespace adi3::mpi
