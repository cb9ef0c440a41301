// mpi.h from C++: extern "C" linkage, handles as constants (switch labels,
// constexpr), and a small exchange.
#include <mpi.h>

#include <cstdio>
#include <string_view>
#include <vector>

static_assert(sizeof(MPI_Aint) == sizeof(void*), "MPI_Aint is pointer-sized");
constexpr MPI_Comm kWorld = MPI_COMM_WORLD;

static const char* kind(MPI_Datatype t) {
  switch (t) {
    case MPI_INT:
      return "int";
    case MPI_DOUBLE:
      return "double";
    default:
      return "other";
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(kWorld, &rank);
  MPI_Comm_size(kWorld, &size);
  std::vector<int> all(static_cast<std::size_t>(size));
  MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, kWorld);
  int bad = 0;
  for (int i = 0; i < size; ++i) bad += all[static_cast<std::size_t>(i)] != i;
  bad += std::string_view(kind(MPI_INT)) != "int";
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, kWorld);
  if (rank == 0) std::printf(total ? " Found %d errors\n" : " No Errors\n", total);
  MPI_Finalize();
  return total != 0;
}
