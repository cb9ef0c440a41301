// Cartesian process topologies and MPI_Dims_create. Ranks are laid out in
// row-major order; reordering is never done (allowed by the standard).
#include <algorithm>
#include <cmath>
#include <functional>

#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

int get_cart(Runtime& rt, MPI_Comm comm, CommObj** c, const char* fn, int* err) {
  if (int e = get_comm(rt, comm, c)) {
    *err = world_error(e, fn);
    return 1;
  }
  if (!(*c)->cart) {
    *err = comm_error(*c, raise(ErrorClass::Topology, "the communicator has no Cartesian topology"), fn);
    return 1;
  }
  return 0;
}

void coords_of(const CartTopo& t, int rank, int* coords) {
  for (int d = static_cast<int>(t.dims.size()) - 1; d >= 0; --d) {
    int n = t.dims[static_cast<std::size_t>(d)];
    coords[d] = rank % n;
    rank /= n;
  }
}

// Row-major rank of coords (wrapped where periodic); -1 if outside.
int rank_of(const CartTopo& t, const int* coords) {
  int r = 0;
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    int n = t.dims[d], c = coords[d];
    if (t.periods[d]) {
      c = ((c % n) + n) % n;
    } else if (c < 0 || c >= n) {
      return -1;
    }
    r = r * n + c;
  }
  return r;
}

int check_dims(int ndims, const int* dims, long long* product) {
  if (ndims < 0) return raise(ErrorClass::Dims, "invalid ndims %d", ndims);
  if (ndims > 0 && !dims) return raise(ErrorClass::Arg, "dims is null");
  *product = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return raise(ErrorClass::Dims, "dimension %d has size %d", i, dims[i]);
    *product *= dims[i];
    if (*product > (1LL << 31)) return raise(ErrorClass::Dims, "the grid is too large");
  }
  return 0;
}

// Divisors of n in increasing order.
std::vector<int> divisors(int n) {
  std::vector<int> lo, hi;
  for (int d = 1; static_cast<long long>(d) * d <= n; ++d) {
    if (n % d) continue;
    lo.push_back(d);
    if (d != n / d) hi.push_back(n / d);
  }
  lo.insert(lo.end(), hi.rbegin(), hi.rend());
  return lo;
}

// Largest integer r with r^k <= n.
int floor_root(int n, int k) {
  int r = static_cast<int>(std::pow(static_cast<double>(n), 1.0 / k));
  auto pow_le = [&](long long x) {
    long long p = 1;
    for (int i = 0; i < k; ++i) {
      p *= x;
      if (p > n) return false;
    }
    return true;
  };
  while (r > 1 && !pow_le(r)) --r;
  while (pow_le(r + 1LL)) ++r;
  return std::max(r, 1);
}

// The most balanced way to write n as k factors: the smallest difference
// between the largest and the smallest factor (the standard's "as close to
// each other as possible"), ties going to the smaller largest factor, then
// the smaller second one, and so on. Depth-first over non-increasing
// factors; the first sequence found at a given spread is the tie winner.
struct Balancer {
  std::vector<int> divs, cur, best;
  int best_spread = 0;

  // Factors for positions pos.. of a product rem, each at most cap.
  void search(int rem, int pos, int cap) {
    int k = static_cast<int>(cur.size()) - pos;
    if (k == 1) {
      if (rem > cap) return;
      cur[static_cast<std::size_t>(pos)] = rem;
      int spread = cur[0] - rem;
      if (best.empty() || spread < best_spread) {
        best = cur;
        best_spread = spread;
      }
      return;
    }
    // This factor is the largest of the k left: at least rem^(1/k).
    int root = floor_root(rem, k);
    for (int d : divs) {
      if (d > cap || d > rem) break;
      if (d < root || rem % d) continue;
      // The last factor is at most the (k-1)-th root of rem/d, so the spread
      // is at least the first factor minus that; it only grows with d.
      int top = pos == 0 ? d : cur[0];
      if (!best.empty() && top - floor_root(rem / d, k - 1) >= best_spread) break;
      cur[static_cast<std::size_t>(pos)] = d;
      search(rem / d, pos + 1, d);
    }
  }
};

std::vector<int> balanced_factors(int n, int k) {
  Balancer b;
  b.divs = divisors(n);
  b.cur.assign(static_cast<std::size_t>(k), 1);
  b.search(n, 0, n);
  return b.best;
}

}  // namespace

ADI3_MPI_API(int, Dims_create, (int nnodes, int ndims, int dims[]), (nnodes, ndims, dims)) {
  ADI3_MPI_ENTER();
  if (nnodes <= 0) return world_error(raise(ErrorClass::Arg, "invalid nnodes %d", nnodes), __func__);
  if (ndims < 0 || (ndims > 0 && !dims))
    return world_error(raise(ErrorClass::Dims, "invalid ndims %d", ndims), __func__);
  long long fixed = 1;
  int free_slots = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return world_error(raise(ErrorClass::Dims, "dims[%d] is negative", i), __func__);
    if (dims[i] == 0)
      ++free_slots;
    else
      fixed *= dims[i];
  }
  if (nnodes % fixed) {
    return world_error(raise(ErrorClass::Dims, "%d nodes cannot be divided by the given dimensions", nnodes), __func__);
  }
  int rest = static_cast<int>(nnodes / fixed);
  if (free_slots == 0) {
    if (rest != 1)
      return world_error(raise(ErrorClass::Dims, "the dimensions do not multiply to %d", nnodes), __func__);
    return MPI_SUCCESS;
  }
  std::vector<int> sizes = balanced_factors(rest, free_slots);
  std::sort(sizes.begin(), sizes.end(), std::greater<int>());
  std::size_t k = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] == 0) dims[i] = sizes[k++];
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_create,
             (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* comm_cart),
             (comm_old, ndims, dims, periods, reorder, comm_cart)) {
  ADI3_MPI_ENTER();
  (void)reorder;
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm_old, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, "MPI_Cart_create")) return comm_error(c, e, __func__);
  long long product = 0;
  int bad = 0;
  if (!comm_cart || (ndims > 0 && !periods)) {
    bad = raise(ErrorClass::Arg, "comm_cart or periods is null");
  } else if (int e = check_dims(ndims, dims, &product)) {
    bad = e;
  } else if (product > c->size()) {
    bad = raise(ErrorClass::Arg, "the grid has %lld processes but the communicator %d", product, c->size());
  }
  if (bad) {
    // Still take part in the split, which then fails at every member.
    MPI_Comm none = MPI_COMM_NULL;
    return comm_error(c, comm_split(*rt, *c, MPI_UNDEFINED, 0, &none, bad), __func__);
  }
  int color = c->rank() < product ? 0 : MPI_UNDEFINED;
  if (int e = comm_split(*rt, *c, color, c->rank(), comm_cart)) return comm_error(c, e, __func__);
  if (*comm_cart != MPI_COMM_NULL) {
    auto t = std::make_shared<CartTopo>();
    t->dims.assign(dims, dims + ndims);
    for (int i = 0; i < ndims; ++i) t->periods.push_back(periods[i] ? 1 : 0);
    comm_of(*rt, *comm_cart)->cart = std::move(t);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cartdim_get, (MPI_Comm comm, int* ndims), (comm, ndims)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_cart(*rt, comm, &c, __func__, &err)) return err;
  if (!ndims) return comm_error(c, raise(ErrorClass::Arg, "ndims is null"), __func__);
  *ndims = static_cast<int>(c->cart->dims.size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]),
             (comm, maxdims, dims, periods, coords)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_cart(*rt, comm, &c, __func__, &err)) return err;
  const CartTopo& t = *c->cart;
  int n = static_cast<int>(t.dims.size());
  if (maxdims < n) return comm_error(c, raise(ErrorClass::Arg, "maxdims %d is less than %d", maxdims, n), __func__);
  if (n > 0 && (!dims || !periods || !coords))
    return comm_error(c, raise(ErrorClass::Arg, "an array is null"), __func__);
  for (int i = 0; i < n; ++i) {
    dims[i] = t.dims[static_cast<std::size_t>(i)];
    periods[i] = t.periods[static_cast<std::size_t>(i)];
  }
  if (n > 0) coords_of(t, c->rank(), coords);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank), (comm, coords, rank)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_cart(*rt, comm, &c, __func__, &err)) return err;
  if (!rank || (!coords && !c->cart->dims.empty()))
    return comm_error(c, raise(ErrorClass::Arg, "coords or rank is null"), __func__);
  int r = rank_of(*c->cart, coords);
  if (r < 0) return comm_error(c, raise(ErrorClass::Arg, "coordinates outside a non-periodic dimension"), __func__);
  *rank = r;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]), (comm, rank, maxdims, coords)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_cart(*rt, comm, &c, __func__, &err)) return err;
  int n = static_cast<int>(c->cart->dims.size());
  if (rank < 0 || rank >= c->size()) return comm_error(c, raise(ErrorClass::Rank, "invalid rank %d", rank), __func__);
  if (maxdims < n || (n > 0 && !coords))
    return comm_error(c, raise(ErrorClass::Arg, "maxdims %d is less than %d", maxdims, n), __func__);
  if (n > 0) coords_of(*c->cart, rank, coords);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest),
             (comm, direction, disp, rank_source, rank_dest)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_cart(*rt, comm, &c, __func__, &err)) return err;
  const CartTopo& t = *c->cart;
  if (direction < 0 || direction >= static_cast<int>(t.dims.size())) {
    return comm_error(c, raise(ErrorClass::Arg, "invalid direction %d", direction), __func__);
  }
  if (!rank_source || !rank_dest)
    return comm_error(c, raise(ErrorClass::Arg, "rank_source or rank_dest is null"), __func__);
  std::vector<int> coords(t.dims.size());
  coords_of(t, c->rank(), coords.data());
  int mine = coords[static_cast<std::size_t>(direction)];
  coords[static_cast<std::size_t>(direction)] = mine + disp;
  int d = rank_of(t, coords.data());
  coords[static_cast<std::size_t>(direction)] = mine - disp;
  int s = rank_of(t, coords.data());
  *rank_dest = d < 0 ? MPI_PROC_NULL : d;
  *rank_source = s < 0 ? MPI_PROC_NULL : s;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm), (comm, remain_dims, newcomm)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_cart(*rt, comm, &c, __func__, &err)) return err;
  const CartTopo t = *c->cart;
  if (!newcomm || (!remain_dims && !t.dims.empty())) {
    // Still take part in the split, which then fails at every member.
    MPI_Comm none = MPI_COMM_NULL;
    return comm_error(c, comm_split(*rt, *c, MPI_UNDEFINED, 0, &none, raise(ErrorClass::Arg, "an argument is null")),
                      __func__);
  }
  std::vector<int> coords(t.dims.size());
  coords_of(t, c->rank(), coords.data());
  // Processes that agree on the dropped coordinates form one sub-grid.
  int color = 0, key = 0;
  auto sub = std::make_shared<CartTopo>();
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    if (remain_dims[d]) {
      key = key * t.dims[d] + coords[d];
      sub->dims.push_back(t.dims[d]);
      sub->periods.push_back(t.periods[d]);
    } else {
      color = color * t.dims[d] + coords[d];
    }
  }
  if (int e = comm_split(*rt, *c, color, key, newcomm)) return comm_error(c, e, __func__);
  comm_of(*rt, *newcomm)->cart = std::move(sub);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank),
             (comm, ndims, dims, periods, newrank)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  (void)periods;
  long long product = 0;
  if (int e = check_dims(ndims, dims, &product)) return comm_error(c, e, __func__);
  if (!newrank) return comm_error(c, raise(ErrorClass::Arg, "newrank is null"), __func__);
  if (product > c->size())
    return comm_error(c, raise(ErrorClass::Arg, "the grid is larger than the communicator"), __func__);
  *newrank = c->rank() < product ? c->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
