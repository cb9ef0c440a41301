/* MPI-4.1 buffers of buffered mode: MPI_BUFFER_AUTOMATIC, communicator and
 * session buffers and the lookup order (communicator, then session, then
 * process), flush and iflush (nonblocking: an iflush behind a rendezvous
 * message stays incomplete until the receiver takes it), a persistent bsend
 * looking its buffer up at each start, and a freed communicator's buffered
 * message still arriving. Rank 0 sends, rank 1 receives; others watch. */
#include <stdint.h>

#include "mpitest.h"

enum { kSmall = 1000, kBig = 1 << 20, kMany = 64 };

/* A buffer that holds n messages of bytes each. */
static int room(int n, int bytes) { return n * (bytes + MPI_BSEND_OVERHEAD); }

static void automatic(int rank) {
  /* More messages than any fixed buffer the program gave: heap space. */
  static char msg[kMany][kSmall];
  CHECK_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
  if (rank == 0) {
    for (int i = 0; i < kMany; ++i) {
      memset(msg[i], i, kSmall);
      CHECK_OK(MPI_Bsend(msg[i], kSmall, MPI_CHAR, 1, i, MPI_COMM_WORLD));
      memset(msg[i], 0xff, kSmall); /* the buffer holds the copy */
    }
  }
  MPI_Barrier(MPI_COMM_WORLD); /* every bsend returned before any receive */
  if (rank == 1) {
    char got[kSmall];
    for (int i = 0; i < kMany; ++i) {
      CHECK_OK(MPI_Recv(got, kSmall, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK_EQ(got[0], (char)i);
      CHECK_EQ(got[kSmall - 1], (char)i);
    }
  }
  void* addr = NULL;
  int size = -1;
  CHECK_OK(MPI_Buffer_detach(&addr, &size));
  CHECK(addr == MPI_BUFFER_AUTOMATIC);
}

/* Comm buffer before the process buffer; detached, the process one again. */
static void comm_first(int rank) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  static char tiny[2 * MPI_BSEND_OVERHEAD];
  char* own = malloc(room(2, kSmall));
  char msg[kSmall] = {1};
  CHECK_OK(MPI_Buffer_attach(tiny, sizeof tiny));
  CHECK_OK(MPI_Comm_attach_buffer(dup, own, room(2, kSmall)));
  CHECK_CLASS(MPI_Comm_attach_buffer(dup, own, room(2, kSmall)), MPI_ERR_BUFFER); /* one at a time */
  MPI_Request persistent;
  if (rank == 0) {
    CHECK_OK(MPI_Bsend_init(msg, kSmall, MPI_CHAR, 1, 7, dup, &persistent));
    CHECK_OK(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 5, dup));                               /* the comm's buffer */
    CHECK_CLASS(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 6, MPI_COMM_WORLD), MPI_ERR_BUFFER); /* the tiny one */
    CHECK_OK(MPI_Start(&persistent));
    CHECK_OK(MPI_Wait(&persistent, MPI_STATUS_IGNORE));
  }
  void* addr = NULL;
  int size = 0;
  CHECK_OK(MPI_Comm_detach_buffer(dup, &addr, &size)); /* waits until both left */
  CHECK(addr == own);
  CHECK_EQ(size, room(2, kSmall));
  if (rank == 0) {
    /* Looked up at each start: now the tiny process buffer. */
    CHECK_CLASS(MPI_Start(&persistent), MPI_ERR_BUFFER);
    MPI_Request_free(&persistent);
    CHECK_CLASS(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 6, dup), MPI_ERR_BUFFER);
  }
  if (rank == 1) {
    char got[kSmall];
    CHECK_OK(MPI_Recv(got, kSmall, MPI_CHAR, 0, 5, dup, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(got, kSmall, MPI_CHAR, 0, 7, dup, MPI_STATUS_IGNORE));
    CHECK_EQ(got[0], 1);
  }
  MPI_Buffer_detach(&addr, &size);
  CHECK(addr == tiny);
  MPI_Comm_free(&dup);
  free(own);
}

/* An iflush behind a rendezvous message completes only once the receiver
 * took it; flush and detach leave the buffer attached / detached. */
static void flushes(int rank) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  char* own = malloc(room(1, kBig));
  char* big = malloc(kBig);
  CHECK_OK(MPI_Comm_attach_buffer_c(dup, own, room(1, kBig)));
  if (rank == 0) {
    memset(big, 3, kBig);
    CHECK_OK(MPI_Bsend(big, kBig, MPI_CHAR, 1, 1, dup));
    memset(big, 0, kBig);
    MPI_Request flush;
    int done = 1;
    CHECK_OK(MPI_Comm_iflush_buffer(dup, &flush));
    for (int i = 0; i < 20; ++i) MPI_Test(&flush, &done, MPI_STATUS_IGNORE);
    CHECK(!done); /* the receiver has not asked for it yet */
    MPI_Send(NULL, 0, MPI_CHAR, 1, 2, dup);
    CHECK_OK(MPI_Wait(&flush, MPI_STATUS_IGNORE));
    /* Blocking flush with nothing in flight; the buffer stays attached. */
    CHECK_OK(MPI_Comm_flush_buffer(dup));
    CHECK_OK(MPI_Bsend(big, 1, MPI_CHAR, 1, 3, dup));
    CHECK_OK(MPI_Buffer_flush()); /* the process buffer: none attached, nothing to do */
    MPI_Request r;
    CHECK_OK(MPI_Buffer_iflush(&r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  } else if (rank == 1) {
    MPI_Recv(NULL, 0, MPI_CHAR, 0, 2, dup, MPI_STATUS_IGNORE);
    CHECK_OK(MPI_Recv(big, kBig, MPI_CHAR, 0, 1, dup, MPI_STATUS_IGNORE));
    CHECK_EQ(big[0], 3);
    CHECK_EQ(big[kBig - 1], 3);
    CHECK_OK(MPI_Recv(big, 1, MPI_CHAR, 0, 3, dup, MPI_STATUS_IGNORE));
  }
  void* addr = NULL;
  MPI_Count size = 0;
  CHECK_OK(MPI_Comm_detach_buffer_c(dup, &addr, &size));
  CHECK(addr == own);
  CHECK_EQ(size, room(1, kBig));
  free(own);

  /* Freeing a communicator flushes its buffer: the message arrives, and
   * the memory is the program's again once MPI_Comm_free returns. */
  char* again = malloc(room(1, kBig));
  CHECK_OK(MPI_Comm_attach_buffer(dup, again, room(1, kBig)));
  if (rank == 0) {
    memset(big, 9, kBig);
    CHECK_OK(MPI_Bsend(big, kBig, MPI_CHAR, 1, 4, dup));
  } else if (rank == 1) {
    CHECK_OK(MPI_Recv(big, kBig, MPI_CHAR, 0, 4, dup, MPI_STATUS_IGNORE));
    CHECK_EQ(big[kBig / 2], 9);
  }
  MPI_Comm_free(&dup);
  memset(again, 0, room(1, kBig));
  free(again);
  free(big);
}

/* A session's buffer serves its communicators (and those made from them)
 * unless they have their own. */
static void session_buffer(int rank) {
  MPI_Session s;
  MPI_Group g;
  MPI_Comm comm, dup;
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
  CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  CHECK_OK(MPI_Comm_create_from_group(g, "org.adi3.bsend", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
  MPI_Group_free(&g);
  CHECK_OK(MPI_Comm_dup(comm, &dup));
  char* mem = malloc(room(2, kSmall));
  char msg[kSmall] = {5};
  CHECK_OK(MPI_Session_attach_buffer(s, mem, room(2, kSmall)));
  CHECK_CLASS(MPI_Session_attach_buffer_c(s, mem, room(2, kSmall)), MPI_ERR_BUFFER);
  static char tiny[2 * MPI_BSEND_OVERHEAD];
  if (rank == 0) {
    CHECK_OK(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 1, comm));
    CHECK_OK(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 2, dup));
    CHECK_CLASS(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 3, MPI_COMM_WORLD), MPI_ERR_BUFFER); /* no process buffer */
    CHECK_OK(MPI_Session_flush_buffer(s));
    MPI_Request r;
    CHECK_OK(MPI_Session_iflush_buffer(s, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* The communicator's own buffer comes first. */
    CHECK_OK(MPI_Comm_attach_buffer(dup, tiny, sizeof tiny));
    CHECK_CLASS(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 4, dup), MPI_ERR_BUFFER);
    void* addr;
    int size;
    CHECK_OK(MPI_Comm_detach_buffer(dup, &addr, &size));
    CHECK(addr == tiny);
  } else if (rank == 1) {
    char got[kSmall];
    CHECK_OK(MPI_Recv(got, kSmall, MPI_CHAR, 0, 1, comm, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(got, kSmall, MPI_CHAR, 0, 2, dup, MPI_STATUS_IGNORE));
    CHECK_EQ(got[0], 5);
  }
  void* addr = NULL;
  int size = 0;
  CHECK_OK(MPI_Session_detach_buffer(s, &addr, &size));
  CHECK(addr == mem);
  CHECK_EQ(size, room(2, kSmall));
  CHECK_OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
  if (rank == 0) CHECK_OK(MPI_Bsend(msg, kSmall, MPI_CHAR, 1, 5, comm));
  if (rank == 1) CHECK_OK(MPI_Recv(msg, kSmall, MPI_CHAR, 0, 5, comm, MPI_STATUS_IGNORE));
  MPI_Comm_free(&dup);
  MPI_Comm_free(&comm);
  CHECK_OK(MPI_Session_finalize(&s)); /* flushes and drops the automatic buffer */
  free(mem);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    printf("needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  automatic(rank);
  comm_first(rank);
  flushes(rank);
  session_buffer(rank);
  return mt_finish();
}
