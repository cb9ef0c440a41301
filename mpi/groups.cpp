// Process groups: the set operations and rank translation. A group is an
// immutable list of channel ranks shared by its handles and communicators.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "mpi/api.hpp"

using namespace adi3;
using namespace adi3::mpi;

int adi3::mpi::add_group(Runtime& rt, std::vector<int> ranks, MPI_Group* out) {
  if (ranks.empty()) {
    *out = MPI_GROUP_EMPTY;
    return 0;
  }
  auto g = std::make_shared<GroupData>();
  g->ranks = std::move(ranks);
  int i = rt.groups.add(std::move(g));
  if (i < 0) return raise(ErrorClass::Intern, "too many groups");
  *out = make_handle(HandleClass::User, Kind::Group, i);
  return 0;
}

namespace {

std::unordered_set<int> members(const GroupData& g) { return {g.ranks.begin(), g.ranks.end()}; }

int check_rank(const GroupData& g, int r) {
  if (r < 0 || r >= g.size()) return raise(ErrorClass::Rank, "rank %d is not in the group of %d", r, g.size());
  return 0;
}

// The ranks of (first, last, stride) triples, checked.
int expand_ranges(const GroupData& g, int n, int ranges[][3], std::vector<int>* out) {
  if (n < 0) return raise(ErrorClass::Arg, "invalid number of ranges %d", n);
  if (n > 0 && !ranges) return raise(ErrorClass::Arg, "ranges is null");
  std::vector<char> seen(static_cast<std::size_t>(g.size()), 0);
  for (int i = 0; i < n; ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return raise(ErrorClass::Arg, "range %d has stride 0", i);
    if (int e = check_rank(g, first)) return e;
    if (int e = check_rank(g, last)) return e;
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) continue;  // an empty range
    for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (seen[static_cast<std::size_t>(r)]) return raise(ErrorClass::Rank, "rank %lld appears twice in the ranges", r);
      seen[static_cast<std::size_t>(r)] = 1;
      out->push_back(static_cast<int>(r));
    }
  }
  return 0;
}

// Checked, distinct ranks of an incl/excl list.
int check_rank_list(const GroupData& g, int n, const int* ranks) {
  if (n < 0) return raise(ErrorClass::Arg, "invalid number of ranks %d", n);
  if (n > 0 && !ranks) return raise(ErrorClass::Arg, "ranks is null");
  std::vector<char> seen(static_cast<std::size_t>(g.size()), 0);
  for (int i = 0; i < n; ++i) {
    if (int e = check_rank(g, ranks[i])) return e;
    if (seen[static_cast<std::size_t>(ranks[i])]) return raise(ErrorClass::Rank, "rank %d appears twice", ranks[i]);
    seen[static_cast<std::size_t>(ranks[i])] = 1;
  }
  return 0;
}

std::vector<int> exclude(const GroupData& g, const std::vector<char>& drop) {
  std::vector<int> out;
  for (int i = 0; i < g.size(); ++i) {
    if (!drop[static_cast<std::size_t>(i)]) out.push_back(g.ranks[static_cast<std::size_t>(i)]);
  }
  return out;
}

}  // namespace

ADI3_MPI_API(int, Group_size, (MPI_Group group, int* size), (group, size)) {
  ADI3_MPI_ENTER();
  GroupPtr g;
  if (int e = get_group(*rt, group, &g)) return world_error(e, __func__);
  if (!size) return world_error(raise(ErrorClass::Arg, "size is null"), __func__);
  *size = g->size();
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Group_rank, (MPI_Group group, int* rank), (group, rank)) {
  ADI3_MPI_ENTER();
  GroupPtr g;
  if (int e = get_group(*rt, group, &g)) return world_error(e, __func__);
  if (!rank) return world_error(raise(ErrorClass::Arg, "rank is null"), __func__);
  *rank = g->rank_of(rt->dev().rank());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]),
             (group1, n, ranks1, group2, ranks2)) {
  ADI3_MPI_ENTER();
  GroupPtr g1, g2;
  if (int e = get_group(*rt, group1, &g1)) return world_error(e, __func__);
  if (int e = get_group(*rt, group2, &g2)) return world_error(e, __func__);
  if (n < 0) return world_error(raise(ErrorClass::Arg, "invalid number of ranks %d", n), __func__);
  if (n > 0 && (!ranks1 || !ranks2)) return world_error(raise(ErrorClass::Arg, "ranks1 or ranks2 is null"), __func__);
  std::unordered_map<int, int> where;
  for (int i = 0; i < g2->size(); ++i) where[g2->ranks[static_cast<std::size_t>(i)]] = i;
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) continue;
    if (int e = check_rank(*g1, ranks1[i])) return world_error(e, __func__);
  }
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    auto it = where.find(g1->ranks[static_cast<std::size_t>(ranks1[i])]);
    ranks2[i] = it == where.end() ? MPI_UNDEFINED : it->second;
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result), (group1, group2, result)) {
  ADI3_MPI_ENTER();
  GroupPtr g1, g2;
  if (int e = get_group(*rt, group1, &g1)) return world_error(e, __func__);
  if (int e = get_group(*rt, group2, &g2)) return world_error(e, __func__);
  if (!result) return world_error(raise(ErrorClass::Arg, "result is null"), __func__);
  if (g1->ranks == g2->ranks) {
    *result = MPI_IDENT;
  } else if (g1->size() == g2->size() && members(*g1) == members(*g2)) {
    *result = MPI_SIMILAR;
  } else {
    *result = MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup), (group1, group2, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g1, g2;
  if (int e = get_group(*rt, group1, &g1)) return world_error(e, __func__);
  if (int e = get_group(*rt, group2, &g2)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  std::vector<int> out = g1->ranks;
  auto in1 = members(*g1);
  for (int r : g2->ranks) {
    if (!in1.count(r)) out.push_back(r);
  }
  return world_error(add_group(*rt, std::move(out), newgroup), __func__);
}

ADI3_MPI_API(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup),
             (group1, group2, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g1, g2;
  if (int e = get_group(*rt, group1, &g1)) return world_error(e, __func__);
  if (int e = get_group(*rt, group2, &g2)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  std::vector<int> out;
  auto in2 = members(*g2);
  for (int r : g1->ranks) {
    if (in2.count(r)) out.push_back(r);
  }
  return world_error(add_group(*rt, std::move(out), newgroup), __func__);
}

ADI3_MPI_API(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup),
             (group1, group2, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g1, g2;
  if (int e = get_group(*rt, group1, &g1)) return world_error(e, __func__);
  if (int e = get_group(*rt, group2, &g2)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  std::vector<int> out;
  auto in2 = members(*g2);
  for (int r : g1->ranks) {
    if (!in2.count(r)) out.push_back(r);
  }
  return world_error(add_group(*rt, std::move(out), newgroup), __func__);
}

ADI3_MPI_API(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup),
             (group, n, ranks, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g;
  if (int e = get_group(*rt, group, &g)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  if (int e = check_rank_list(*g, n, ranks)) return world_error(e, __func__);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(g->ranks[static_cast<std::size_t>(ranks[i])]);
  return world_error(add_group(*rt, std::move(out), newgroup), __func__);
}

ADI3_MPI_API(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup),
             (group, n, ranks, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g;
  if (int e = get_group(*rt, group, &g)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  if (int e = check_rank_list(*g, n, ranks)) return world_error(e, __func__);
  std::vector<char> drop(static_cast<std::size_t>(g->size()), 0);
  for (int i = 0; i < n; ++i) drop[static_cast<std::size_t>(ranks[i])] = 1;
  return world_error(add_group(*rt, exclude(*g, drop), newgroup), __func__);
}

ADI3_MPI_API(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup),
             (group, n, ranges, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g;
  if (int e = get_group(*rt, group, &g)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  std::vector<int> picked;
  if (int e = expand_ranges(*g, n, ranges, &picked)) return world_error(e, __func__);
  std::vector<int> out;
  for (int r : picked) out.push_back(g->ranks[static_cast<std::size_t>(r)]);
  return world_error(add_group(*rt, std::move(out), newgroup), __func__);
}

ADI3_MPI_API(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup),
             (group, n, ranges, newgroup)) {
  ADI3_MPI_ENTER();
  GroupPtr g;
  if (int e = get_group(*rt, group, &g)) return world_error(e, __func__);
  if (!newgroup) return world_error(raise(ErrorClass::Arg, "newgroup is null"), __func__);
  std::vector<int> picked;
  if (int e = expand_ranges(*g, n, ranges, &picked)) return world_error(e, __func__);
  std::vector<char> drop(static_cast<std::size_t>(g->size()), 0);
  for (int r : picked) drop[static_cast<std::size_t>(r)] = 1;
  return world_error(add_group(*rt, exclude(*g, drop), newgroup), __func__);
}

ADI3_MPI_API(int, Group_free, (MPI_Group * group), (group)) {
  ADI3_MPI_ENTER();
  if (!group) return world_error(raise(ErrorClass::Arg, "group is null"), __func__);
  if (*group == MPI_GROUP_EMPTY) {  // predefined: nothing to release
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  }
  GroupPtr g;
  if (int e = get_group(*rt, *group, &g)) return world_error(e, __func__);
  rt->groups.remove(handle_index(*group));
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Comm_group, (MPI_Comm comm, MPI_Group* group), (comm, group)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  if (!group) return comm_error(c, raise(ErrorClass::Arg, "group is null"), __func__);
  return comm_error(c, add_group(*rt, c->group->ranks, group), __func__);
}
