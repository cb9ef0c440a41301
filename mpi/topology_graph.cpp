// Graph (MPI-1) and distributed graph (MPI-2.2) topologies. No reordering.
#include <algorithm>
#include <vector>

#include "mpi/agree.hpp"
#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

namespace {

constexpr int kTagEdges = 4;  // on the internal context

int get_topo(Runtime& rt, MPI_Comm comm, CommObj** c, bool dist, const char* fn, int* err) {
  if (int e = get_comm(rt, comm, c)) {
    *err = world_error(e, fn);
    return 1;
  }
  if (dist ? !(*c)->dist : !(*c)->graph) {
    *err = comm_error(
        *c, raise(ErrorClass::Topology, "the communicator has no %s topology", dist ? "distributed graph" : "graph"),
        fn);
    return 1;
  }
  return 0;
}

int check_graph(int nnodes, const int* index, const int* edges) {
  if (nnodes < 0) return raise(ErrorClass::Arg, "invalid nnodes %d", nnodes);
  if (nnodes > 0 && (!index || (index[nnodes - 1] > 0 && !edges)))
    return raise(ErrorClass::Arg, "index or edges is null");
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < (i ? index[i - 1] : 0)) return raise(ErrorClass::Arg, "index must not decrease (index[%d])", i);
  }
  for (int e = 0; nnodes > 0 && e < index[nnodes - 1]; ++e) {
    if (edges[e] < 0 || edges[e] >= nnodes) return raise(ErrorClass::Rank, "edge %d names node %d", e, edges[e]);
  }
  return 0;
}

int check_ranks(const CommObj& c, int n, const int* ranks, const char* what) {
  if (n < 0) return raise(ErrorClass::Arg, "invalid %s degree %d", what, n);
  if (n > 0 && !ranks) return raise(ErrorClass::Arg, "the %s array is null", what);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= c.size()) return raise(ErrorClass::Rank, "invalid %s rank %d", what, ranks[i]);
  }
  return 0;
}

// A new communicator over the same ranks carrying a distributed graph.
int attach_dist(Runtime& rt, CommObj& c, std::shared_ptr<DistGraphTopo> t, MPI_Comm* out) {
  if (int e = comm_split(rt, c, 0, c.rank(), out)) return e;
  comm_of(rt, *out)->dist = std::move(t);
  return 0;
}

bool unweighted(const int* w) { return w == MPI_UNWEIGHTED; }

// Edge weights are nonnegative integers (MPI-3.1 7.5.4); MPI_UNWEIGHTED and
// MPI_WEIGHTS_EMPTY are no arrays.
int check_weights(int n, const int* w, const char* what) {
  if (unweighted(w) || w == MPI_WEIGHTS_EMPTY || n <= 0) return 0;
  if (!w) return raise(ErrorClass::Arg, "the %s array is null", what);
  for (int i = 0; i < n; ++i) {
    if (w[i] < 0) return raise(ErrorClass::Arg, "%s[%d] is %d: weights are nonnegative", what, i, w[i]);
  }
  return 0;
}

}  // namespace

ADI3_MPI_API(int, Graph_create,
             (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* comm_graph),
             (comm_old, nnodes, index, edges, reorder, comm_graph)) {
  ADI3_MPI_ENTER();
  (void)reorder;
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm_old, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, "MPI_Graph_create")) return comm_error(c, e, __func__);
  int bad = !comm_graph ? raise(ErrorClass::Arg, "comm_graph is null") : check_graph(nnodes, index, edges);
  if (!bad && nnodes > c->size()) bad = raise(ErrorClass::Arg, "nnodes %d exceeds the communicator", nnodes);
  if (bad) {
    // Still take part in the split, which then fails at every member.
    MPI_Comm none = MPI_COMM_NULL;
    return comm_error(c, comm_split(*rt, *c, MPI_UNDEFINED, 0, &none, bad), __func__);
  }
  int color = c->rank() < nnodes ? 0 : MPI_UNDEFINED;
  if (int e = comm_split(*rt, *c, color, c->rank(), comm_graph)) return comm_error(c, e, __func__);
  if (*comm_graph != MPI_COMM_NULL) {
    auto t = std::make_shared<GraphTopo>();
    t->index.assign(index, index + nnodes);
    t->edges.assign(edges, edges + (nnodes ? index[nnodes - 1] : 0));
    comm_of(*rt, *comm_graph)->graph = std::move(t);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges), (comm, nnodes, nedges)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_topo(*rt, comm, &c, false, __func__, &err)) return err;
  if (!nnodes || !nedges) return comm_error(c, raise(ErrorClass::Arg, "nnodes or nedges is null"), __func__);
  *nnodes = static_cast<int>(c->graph->index.size());
  *nedges = static_cast<int>(c->graph->edges.size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]),
             (comm, maxindex, maxedges, index, edges)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_topo(*rt, comm, &c, false, __func__, &err)) return err;
  const GraphTopo& t = *c->graph;
  int ni = std::min(maxindex, static_cast<int>(t.index.size()));
  int ne = std::min(maxedges, static_cast<int>(t.edges.size()));
  if ((ni > 0 && !index) || (ne > 0 && !edges))
    return comm_error(c, raise(ErrorClass::Arg, "index or edges is null"), __func__);
  std::copy(t.index.begin(), t.index.begin() + std::max(ni, 0), index);
  std::copy(t.edges.begin(), t.edges.begin() + std::max(ne, 0), edges);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int* nneighbors), (comm, rank, nneighbors)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_topo(*rt, comm, &c, false, __func__, &err)) return err;
  const GraphTopo& t = *c->graph;
  if (rank < 0 || rank >= static_cast<int>(t.index.size())) {
    return comm_error(c, raise(ErrorClass::Rank, "invalid rank %d", rank), __func__);
  }
  if (!nneighbors) return comm_error(c, raise(ErrorClass::Arg, "nneighbors is null"), __func__);
  auto r = static_cast<std::size_t>(rank);
  *nneighbors = t.index[r] - (rank ? t.index[r - 1] : 0);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]),
             (comm, rank, maxneighbors, neighbors)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_topo(*rt, comm, &c, false, __func__, &err)) return err;
  const GraphTopo& t = *c->graph;
  if (rank < 0 || rank >= static_cast<int>(t.index.size())) {
    return comm_error(c, raise(ErrorClass::Rank, "invalid rank %d", rank), __func__);
  }
  auto r = static_cast<std::size_t>(rank);
  int first = rank ? t.index[r - 1] : 0, n = std::min(maxneighbors, t.index[r] - first);
  if (n > 0 && !neighbors) return comm_error(c, raise(ErrorClass::Arg, "neighbors is null"), __func__);
  for (int i = 0; i < n; ++i) neighbors[i] = t.edges[static_cast<std::size_t>(first + i)];
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank),
             (comm, nnodes, index, edges, newrank)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (int e = check_graph(nnodes, index, edges)) return comm_error(c, e, __func__);
  if (!newrank) return comm_error(c, raise(ErrorClass::Arg, "newrank is null"), __func__);
  *newrank = c->rank() < nnodes ? c->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Dist_graph_create_adjacent,
             (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree,
              const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph),
             (comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder,
              comm_dist_graph)) {
  ADI3_MPI_ENTER();
  (void)info, (void)reorder;
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm_old, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, "MPI_Dist_graph_create_adjacent")) return comm_error(c, e, __func__);
  int e = !comm_dist_graph ? raise(ErrorClass::Arg, "comm_dist_graph is null")
                           : check_ranks(*c, indegree, sources, "source");
  if (!e) e = check_ranks(*c, outdegree, destinations, "destination");
  if (!e) e = check_weights(indegree, sourceweights, "sourceweights");
  if (!e) e = check_weights(outdegree, destweights, "destweights");
  if (e) {
    // Still take part in the split, which then fails at every member.
    MPI_Comm none = MPI_COMM_NULL;
    return comm_error(c, comm_split(*rt, *c, MPI_UNDEFINED, 0, &none, e), __func__);
  }
  auto t = std::make_shared<DistGraphTopo>();
  t->sources.assign(sources, sources + indegree);
  t->destinations.assign(destinations, destinations + outdegree);
  t->weighted = !unweighted(sourceweights) && !unweighted(destweights);
  if (t->weighted) {
    if (indegree > 0 && sourceweights != MPI_WEIGHTS_EMPTY)
      t->source_weights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0 && destweights != MPI_WEIGHTS_EMPTY) t->dest_weights.assign(destweights, destweights + outdegree);
  }
  return comm_error(c, attach_dist(*rt, *c, std::move(t), comm_dist_graph), __func__);
}

ADI3_MPI_API(int, Dist_graph_create,
             (MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
              const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph),
             (comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph)) {
  ADI3_MPI_ENTER();
  (void)info, (void)reorder;
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm_old, &c)) return world_error(e, __func__);
  if (int e = need_intra(*c, __func__ + 1)) return comm_error(c, e, __func__);
  int e = !comm_dist_graph ? raise(ErrorClass::Arg, "comm_dist_graph is null") : check_ranks(*c, n, sources, "source");
  if (!e && n > 0 && !degrees) e = raise(ErrorClass::Arg, "degrees is null");
  // My edges as (source, destination, weight) triples.
  std::vector<int> mine;
  for (int i = 0, k = 0; !e && i < n; ++i) {
    if (degrees[i] < 0) e = raise(ErrorClass::Arg, "invalid degree %d", degrees[i]);
    if (!e) e = check_ranks(*c, degrees[i], destinations + k, "destination");
    if (!e && degrees[i] > 0 && !weights) e = raise(ErrorClass::Arg, "weights is null (MPI_UNWEIGHTED for none)");
    for (int j = 0; !e && j < degrees[i]; ++j, ++k) {
      mine.insert(mine.end(),
                  {sources[i], destinations[k], unweighted(weights) || weights == MPI_WEIGHTS_EMPTY ? 1 : weights[k]});
    }
  }
  if (!e) e = check_weights(static_cast<int>(mine.size() / 3), weights, "weights");
  // Everyone learns every edge: counts first, then equal-sized blocks. A
  // rank with bad arguments still sends its count (-1), so every rank fails
  // instead of waiting for it.
  const auto p = static_cast<std::size_t>(c->size());
  int count = e ? -1 : static_cast<int>(mine.size());
  std::vector<int> counts(p);
  if (int err = allgather_bytes(rt->dev(), c->internal, &count, sizeof count, counts.data(), kTagEdges)) {
    return comm_error(c, e ? e : err, __func__);
  }
  if (e) return comm_error(c, no_peer_waits(e), __func__);
  for (std::size_t r = 0; r < p; ++r) {
    if (counts[r] < 0) {
      return comm_error(
          c,
          no_peer_waits(raise(ErrorClass::Arg, "the call failed at rank %d (its arguments), so at every rank",
                              static_cast<int>(r))),
          __func__);
    }
  }
  int most = *std::max_element(counts.begin(), counts.end());
  mine.resize(static_cast<std::size_t>(most));
  std::vector<int> all(p * static_cast<std::size_t>(most));
  if (most > 0) {
    if (int err =
            allgather_bytes(rt->dev(), c->internal, mine.data(), mine.size() * sizeof(int), all.data(), kTagEdges)) {
      return comm_error(c, err, __func__);
    }
  }
  auto t = std::make_shared<DistGraphTopo>();
  t->weighted = !unweighted(weights);
  int me = c->rank();
  for (std::size_t r = 0; r < p; ++r) {
    for (int k = 0; k + 2 < counts[r]; k += 3) {
      const int* edge = &all[r * static_cast<std::size_t>(most) + static_cast<std::size_t>(k)];
      if (edge[1] == me) {
        t->sources.push_back(edge[0]);
        t->source_weights.push_back(edge[2]);
      }
      if (edge[0] == me) {
        t->destinations.push_back(edge[1]);
        t->dest_weights.push_back(edge[2]);
      }
    }
  }
  if (!t->weighted) {
    t->source_weights.clear();
    t->dest_weights.clear();
  }
  return comm_error(c, attach_dist(*rt, *c, std::move(t), comm_dist_graph), __func__);
}

ADI3_MPI_API(int, Dist_graph_neighbors_count, (MPI_Comm comm, int* indegree, int* outdegree, int* weighted),
             (comm, indegree, outdegree, weighted)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_topo(*rt, comm, &c, true, __func__, &err)) return err;
  if (!indegree || !outdegree || !weighted) return comm_error(c, raise(ErrorClass::Arg, "an output is null"), __func__);
  *indegree = static_cast<int>(c->dist->sources.size());
  *outdegree = static_cast<int>(c->dist->destinations.size());
  *weighted = c->dist->weighted;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Dist_graph_neighbors,
             (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[],
              int destweights[]),
             (comm, maxindegree, sources, sourceweights, maxoutdegree, destinations, destweights)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  int err = 0;
  if (get_topo(*rt, comm, &c, true, __func__, &err)) return err;
  const DistGraphTopo& t = *c->dist;
  int in = std::min(maxindegree, static_cast<int>(t.sources.size()));
  int out = std::min(maxoutdegree, static_cast<int>(t.destinations.size()));
  for (int i = 0; i < in; ++i) {
    sources[i] = t.sources[static_cast<std::size_t>(i)];
    if (t.weighted && !unweighted(sourceweights) && i < static_cast<int>(t.source_weights.size())) {
      sourceweights[i] = t.source_weights[static_cast<std::size_t>(i)];
    }
  }
  for (int i = 0; i < out; ++i) {
    destinations[i] = t.destinations[static_cast<std::size_t>(i)];
    if (t.weighted && !unweighted(destweights) && i < static_cast<int>(t.dest_weights.size())) {
      destweights[i] = t.dest_weights[static_cast<std::size_t>(i)];
    }
  }
  return MPI_SUCCESS;
}
