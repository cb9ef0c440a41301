// Handle lookups, argument checks and status conversion shared by all
// entry points.
#include "mpi/api.hpp"

#include <climits>
#include <cstdio>
#include <new>

#include "adi3/sizes.hpp"
#include "segment/builtin.hpp"

namespace adi3::mpi {

int raise(ErrorClass c, const char* fmt, ...) {
  Runtime* rt = g_runtime;
  if (!rt) return static_cast<int>(c);
  va_list ap;
  va_start(ap, fmt);
  int code = rt->dev().errors().vraise(c, fmt, ap);
  va_end(ap);
  return code;
}

int get_comm_slow(Runtime& rt, MPI_Comm h, CommObj** out) {
  if (h == MPI_COMM_WORLD) {
    *out = &rt.world;
    return 0;
  }
  if (h == MPI_COMM_SELF) {
    *out = &rt.self;
    return 0;
  }
  if (h == MPI_COMM_NULL) return raise(ErrorClass::Comm, "the communicator is MPI_COMM_NULL");
  if (is_kind(h, Kind::Comm, HandleClass::User)) {
    if (CommObj** c = rt.comms.get(handle_index(h))) {
      *out = *c;
      return 0;
    }
    return raise(ErrorClass::Comm, "communicator handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Comm, "0x%x is not a communicator handle", h);
}

int get_group(Runtime& rt, MPI_Group h, GroupPtr* out) {
  static const GroupPtr empty = std::make_shared<GroupData>();
  if (h == MPI_GROUP_EMPTY) {
    *out = empty;
    return 0;
  }
  if (h == MPI_GROUP_NULL) return raise(ErrorClass::Group, "the group is MPI_GROUP_NULL");
  if (is_kind(h, Kind::Group, HandleClass::User)) {
    if (GroupPtr* g = rt.groups.get(handle_index(h))) {
      *out = *g;
      return 0;
    }
    return raise(ErrorClass::Group, "group handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Group, "0x%x is not a group handle", h);
}

int get_type(Runtime& rt, MPI_Datatype h, const Datatype** out) {
  if (is_kind(h, Kind::Datatype, HandleClass::Builtin) && handle_index(h) < static_cast<int>(kNumBuiltins)) {
    *out = Datatype::builtin(static_cast<Builtin>(handle_index(h)));
    return 0;
  }
  if (h == MPI_DATATYPE_NULL) return raise(ErrorClass::Type, "the datatype is MPI_DATATYPE_NULL");
  if (is_kind(h, Kind::Datatype, HandleClass::User)) {
    if (Datatype** t = rt.types.get(handle_index(h))) {
      *out = *t;
      return 0;
    }
    return raise(ErrorClass::Type, "datatype handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Type, "0x%x is not a datatype handle", h);
}

int get_comm_type_slow(Runtime& rt, MPI_Datatype h, const Datatype** out) {
  if (int e = get_type(rt, h, out)) return e;
  if (!(*out)->is_committed()) return raise(ErrorClass::Type, "datatype 0x%x is not committed (MPI_Type_commit)", h);
  return 0;
}

int get_info(Runtime& rt, MPI_Info h, InfoObj** out) {
  if (h == MPI_INFO_ENV) {
    *out = &rt.env_info;
    return 0;
  }
  if (h == MPI_INFO_NULL) return raise(ErrorClass::Info, "the info object is MPI_INFO_NULL");
  if (is_kind(h, Kind::Info, HandleClass::User)) {
    if (InfoObj** i = rt.infos.get(handle_index(h))) {
      *out = *i;
      return 0;
    }
    return raise(ErrorClass::Info, "info handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Info, "0x%x is not an info handle", h);
}

int info_entries(Runtime& rt, MPI_Info info, std::vector<std::pair<std::string, std::string>>* out) {
  if (info == MPI_INFO_NULL) return 0;
  InfoObj* i = nullptr;
  if (int e = get_info(rt, info, &i)) return e;
  *out = i->entries;
  return 0;
}

MPI_Datatype type_handle(Runtime& rt, const Datatype* t) {
  Builtin b;
  if (t->builtin_id(&b)) return make_handle(HandleClass::Builtin, Kind::Datatype, static_cast<int>(b));
  std::lock_guard<std::mutex> g(rt.type_lock);
  auto it = rt.type_handles.find(t);
  return it == rt.type_handles.end() ? MPI_DATATYPE_NULL : it->second;
}

int add_type(Runtime& rt, Datatype* t, MPI_Datatype* out) {
  // t is ours until the handle is out: a table or map that cannot grow
  // (std::bad_alloc, ERR_NO_MEM at the entry point) frees it.
  struct Drop {
    const Datatype* t;
    ~Drop() {
      if (t) t->release();
    }
  } drop{t};
  int i = rt.types.add(t);
  if (i < 0) return raise(ErrorClass::Intern, "too many datatypes");
  MPI_Datatype h = make_handle(HandleClass::User, Kind::Datatype, i);
  try {
    std::lock_guard<std::mutex> g(rt.type_lock);
    rt.type_handles[t] = h;
  } catch (...) {
    rt.types.remove(i);
    throw;
  }
  drop.t = nullptr;
  *out = h;
  return 0;
}

int check_count_slow(MPI_Count count, const char* what) {
  if (count < 0) return raise(ErrorClass::Count, "invalid %s %lld: must be non-negative", what, count);
  return 0;
}

int check_total(long long total, const char* what) {
  if (total > INT_MAX) {
    return raise(ErrorClass::Count, "%s add up to %lld elements: more than an int counts (%d)", what, total, INT_MAX);
  }
  return 0;
}

int check_extent(MPI_Count count, const Datatype* t) {
  if (count <= 0) return 0;
  std::size_t bytes = 0;
  if (!checked_bytes(static_cast<std::size_t>(count), t->size(), &bytes)) {
    return raise(ErrorClass::Count, "count %lld of a %zu-byte datatype overflows: a buffer holds at most %td bytes",
                 count, t->size(), PTRDIFF_MAX);
  }
  std::ptrdiff_t span = 0;
  if (!checked_span(static_cast<std::size_t>(count), t->extent(), t->true_extent(), &span)) {
    return raise(ErrorClass::Count,
                 "count %lld of a datatype of extent %td overflows: the buffer would span more than %td bytes", count,
                 t->extent(), PTRDIFF_MAX);
  }
  return 0;
}

int check_buffer_slow(const void* buf, MPI_Count count, const Datatype* t) {
  if (int e = check_extent(count, t)) return e;
  if (!buf && count > 0 && t->size() > 0 && t->true_lb() == 0) {
    return raise(ErrorClass::Buffer, "null buffer for %lld elements of %zu bytes", count, t->size());
  }
  return 0;
}

int check_root(const CommObj& c, int root) {
  if (root < 0 || root >= c.size()) {
    return raise(ErrorClass::Root, "invalid root %d: the communicator has %d ranks", root, c.size());
  }
  return 0;
}

void set_status_bytes(MPI_Status* s, std::size_t bytes) {
  auto b = static_cast<uint64_t>(bytes);
  s->adi3_count_lo = static_cast<int>(static_cast<uint32_t>(b));
  s->adi3_count_hi = static_cast<int>(static_cast<uint32_t>(b >> 32));
}

std::size_t status_bytes(const MPI_Status* s) {
  return static_cast<std::size_t>(static_cast<uint64_t>(static_cast<uint32_t>(s->adi3_count_lo)) |
                                  static_cast<uint64_t>(static_cast<uint32_t>(s->adi3_count_hi)) << 32);
}

void to_mpi(const Status& s, MPI_Status* out, bool with_error) {
  if (ignored(out)) return;
  out->MPI_SOURCE = s.source;
  out->MPI_TAG = s.tag;
  if (with_error) out->MPI_ERROR = s.error;
  set_status_bytes(out, s.bytes);
  out->adi3_cancelled = s.cancelled ? 1 : 0;
}

void empty_status(MPI_Status* out, bool with_error) { to_mpi(Status{}, out, with_error); }

}  // namespace adi3::mpi
