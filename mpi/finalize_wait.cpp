// Which errors handed back to the program arm MPI_Finalize's wait for the
// other ranks (ADI3_FINALIZE_TIMEOUT, env.cpp): those after which a peer may
// still wait for this rank in the failed call.
#include <cctype>
#include <string>
#include <string_view>

#include "mpi/api.hpp"

namespace adi3::mpi {

namespace {

// The calls in which a peer may be left waiting when this rank's part fails:
// collectives (communicator, window and file ones) and the matching calls
// (a message it does not send or receive). MPI_ and _c, the I of a
// nonblocking collective, _init, _begin and _end are taken off first.
// clang-format off
constexpr std::string_view kPeersWait[] = {
    "Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Alltoallw", "Barrier", "Bcast", "Bsend",
    "Cart_create", "Cart_sub", "Comm_accept", "Comm_connect", "Comm_create", "Comm_create_from_group",
    "Comm_create_group", "Comm_disconnect", "Comm_dup", "Comm_dup_with_info", "Comm_idup", "Comm_idup_with_info",
    "Comm_join", "Comm_spawn", "Comm_spawn_multiple", "Comm_split", "Comm_split_type", "Dist_graph_create",
    "Dist_graph_create_adjacent", "Exscan", "File_close", "File_open", "File_preallocate", "File_read_all",
    "File_read_at_all", "File_read_ordered", "File_seek_shared", "File_set_atomicity", "File_set_info",
    "File_set_size", "File_set_view", "File_sync", "File_write_all", "File_write_at_all", "File_write_ordered",
    "Gather", "Gatherv", "Graph_create", "Intercomm_create", "Intercomm_create_from_groups", "Intercomm_merge",
    "Iprobe", "Irecv", "Isend", "Isendrecv", "Isendrecv_replace", "Issend", "Irsend", "Improbe", "Imrecv", "Ibsend",
    "Mprobe", "Mrecv", "Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
    "Neighbor_alltoallw", "Precv", "Pready", "Pready_list", "Pready_range", "Probe", "Psend", "Recv",
    "Reduce", "Reduce_scatter", "Reduce_scatter_block", "Rsend", "Scan", "Scatter",
    "Scatterv", "Send", "Sendrecv", "Sendrecv_replace", "Ssend", "Start", "Startall",
    "Win_allocate", "Win_allocate_shared", "Win_complete", "Win_create", "Win_create_dynamic", "Win_fence",
    "Win_free", "Win_post", "Win_start", "Win_wait"};
// clang-format on

// Where no_peer_waits() marks a code: its ErrorLog slot (the bits above the
// class; the log has as many slots), compared by the whole code, which also
// carries the slot's generation. A slot's mark is lost once 256 newer errors
// took it (threads failing fast while this one is descheduled), so the
// marking thread's own last code is kept too (Runtime::no_wait_threads); the
// slot serves where the progress engine finished the call on another thread
// (an idup's agreement).
std::atomic<int>& no_wait_slot(Runtime& rt, int code) {
  return rt.no_wait_codes[(static_cast<unsigned>(code) >> kErrorClassBits) % Runtime::kNoWaitSlots];
}

// Whether code is this thread's last marked code (which it then forgets).
bool thread_marked(Runtime& rt, int code) {
  std::lock_guard<std::mutex> g(rt.no_wait_lock);
  auto it = rt.no_wait_threads.find(std::this_thread::get_id());
  if (it == rt.no_wait_threads.end() || it->second != code) return false;
  rt.no_wait_threads.erase(it);
  return true;
}

bool strip_suffix(std::string_view& s, std::string_view end) {
  if (s.size() <= end.size() || s.substr(s.size() - end.size()) != end) return false;
  s.remove_suffix(end.size());
  return true;
}

bool listed(std::string_view s) {
  for (std::string_view n : kPeersWait) {
    if (n == s) return true;
  }
  return false;
}

// Whether an error handed back from fn (an entry point's name) may leave a
// peer waiting for this rank: not from a local call (an attribute, a type,
// MPI_Comm_call_errhandler, a put refused with ERR_RMA_RANGE), not a
// truncated message (it was matched and taken), not an error after which
// this rank's part of the call was done (no_peer_waits()).
bool peers_may_wait(Runtime& rt, int code, const char* fn) {
  const ErrorClass cls = error_class_of(code);
  // A dead peer: the job cannot end cleanly whatever the call was.
  if (cls == ErrorClass::ProcFailed || cls == ErrorClass::ProcAborted) return true;
  if (cls == ErrorClass::Truncate) return false;
  if (thread_marked(rt, code) || code == no_wait_slot(rt, code).load(std::memory_order_relaxed)) return false;
  std::string_view s = fn[0] == 'P' ? fn + 1 : fn;  // (PMPI_X)
  if (s.substr(0, 4) != "MPI_") return false;
  s.remove_prefix(4);
  strip_suffix(s, "_c");
  if (!strip_suffix(s, "_init")) {
    if (!strip_suffix(s, "_begin")) strip_suffix(s, "_end");
  }
  if (listed(s)) return true;
  // A nonblocking collective or file call (MPI_Ibcast, MPI_File_iread_all).
  std::string rest;
  if (s.size() > 1 && s[0] == 'I') {
    rest = s.substr(1);
    rest[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
  } else if (s.substr(0, 6) == "File_i") {
    rest = "File_" + std::string(s.substr(6));
  }
  return !rest.empty() && listed(rest);
}

}  // namespace

int no_peer_waits(int code) {
  if (Runtime* rt = g_runtime; rt && code) {
    no_wait_slot(*rt, code).store(code, std::memory_order_relaxed);
    std::lock_guard<std::mutex> g(rt->no_wait_lock);
    rt->no_wait_threads[std::this_thread::get_id()] = code;
  }
  return code;
}

void note_returned(int code, const char* fn) {
  Runtime* rt = g_runtime;
  if (!rt || !peers_may_wait(*rt, code, fn)) return;
  const char* none = nullptr;
  if (rt->returned_fn.compare_exchange_strong(none, fn[0] == 'P' ? fn + 1 : fn)) rt->returned_code.store(code);
}

}  // namespace adi3::mpi
