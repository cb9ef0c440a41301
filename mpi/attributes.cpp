#include "mpi/attributes.hpp"

#include <algorithm>

#include "mpi/api.hpp"

namespace adi3::mpi {

namespace {

int call_delete(KeyvalObj* k, int object, void* value) {
  if (!k->delete_fn) return MPI_SUCCESS;
  if (k->kind == KeyvalKind::Type) {
    return reinterpret_cast<MPI_Type_delete_attr_function*>(k->delete_fn)(object, k->handle, value, k->extra_state);
  }
  return reinterpret_cast<MPI_Comm_delete_attr_function*>(k->delete_fn)(object, k->handle, value, k->extra_state);
}

int call_copy(KeyvalObj* k, int old, void* in, void** out, int* flag) {
  *flag = 0;
  if (!k->copy_fn) return MPI_SUCCESS;
  if (k->kind == KeyvalKind::Type) {
    return reinterpret_cast<MPI_Type_copy_attr_function*>(k->copy_fn)(old, k->handle, k->extra_state, in, out, flag);
  }
  return reinterpret_cast<MPI_Comm_copy_attr_function*>(k->copy_fn)(old, k->handle, k->extra_state, in, out, flag);
}

// Removes k's entry after its delete callback ran and drops the entry's
// keyval reference, once: a callback that set or deleted attributes of the
// same object moved or removed entries meanwhile.
void drop_entry(Runtime& rt, AttrList& list, KeyvalObj* k) {
  {
    std::lock_guard<std::mutex> g(rt.attr_lock);
    auto it = std::find_if(list.begin(), list.end(), [k](auto& a) { return a.first == k; });
    if (it == list.end()) return;
    list.erase(it);
  }
  release_keyval(rt, k);
}

const char* kind_name(KeyvalKind k) {
  return k == KeyvalKind::Comm ? "communicator" : k == KeyvalKind::Type ? "datatype" : "window";
}

}  // namespace

int get_keyval(Runtime& rt, int handle, KeyvalKind kind, KeyvalObj** out) {
  if (handle == MPI_KEYVAL_INVALID) return raise(ErrorClass::Keyval, "the keyval is MPI_KEYVAL_INVALID");
  if (is_kind(handle, Kind::Keyval, HandleClass::Builtin)) {
    return raise(ErrorClass::Keyval, "keyval 0x%x is predefined and cannot be changed", handle);
  }
  if (!is_kind(handle, Kind::Keyval, HandleClass::User)) return raise(ErrorClass::Keyval, "%d is not a keyval", handle);
  KeyvalObj** k = rt.keyvals.get(handle_index(handle));
  if (!k) return raise(ErrorClass::Keyval, "keyval 0x%x was freed or never created", handle);
  if ((*k)->kind != kind) {
    return raise(ErrorClass::Keyval, "keyval 0x%x is a %s keyval, not a %s one", handle, kind_name((*k)->kind),
                 kind_name(kind));
  }
  *out = *k;
  return 0;
}

void release_keyval(Runtime& rt, KeyvalObj* k) {
  if (k->refs.fetch_sub(1) == 1) {
    rt.keyvals.remove(handle_index(k->handle));
    delete k;
  }
}

void free_keyval_handle(Runtime& rt, KeyvalObj* k) {
  if (!k->handle_freed.exchange(true)) release_keyval(rt, k);
}

int set_attr(Runtime& rt, AttrList& list, KeyvalObj* k, void* value, int object) {
  std::unique_lock<std::mutex> g(rt.attr_lock);
  auto it = std::find_if(list.begin(), list.end(), [k](auto& a) { return a.first == k; });
  if (it != list.end()) {
    void* old = it->second;
    g.unlock();
    // Replacing a value deletes the old one first (its callback may fail).
    if (int e = call_delete(k, object, old)) return e;
    g.lock();
    it = std::find_if(list.begin(), list.end(), [k](auto& a) { return a.first == k; });
    if (it != list.end()) {
      // Set again, so last in setting order: MPI_Finalize deletes
      // MPI_COMM_SELF's attributes in reverse order of setting (MPI-3.1 8.7.1).
      list.erase(it);
      list.emplace_back(k, value);
      return 0;
    }
  }
  k->refs.fetch_add(1);
  list.emplace_back(k, value);
  return 0;
}

bool find_attr(Runtime& rt, const AttrList& list, const KeyvalObj* k, void** value) {
  std::lock_guard<std::mutex> g(rt.attr_lock);
  for (auto& a : list) {
    if (a.first == k) {
      *value = a.second;
      return true;
    }
  }
  return false;
}

int delete_attr(Runtime& rt, AttrList& list, KeyvalObj* k, int object) {
  void* value = nullptr;
  {
    std::lock_guard<std::mutex> g(rt.attr_lock);
    auto it = std::find_if(list.begin(), list.end(), [k](auto& a) { return a.first == k; });
    if (it == list.end()) return raise(ErrorClass::Keyval, "no attribute is set for keyval 0x%x", k->handle);
    value = it->second;
  }
  if (int e = call_delete(k, object, value)) return e;
  drop_entry(rt, list, k);
  return 0;
}

int delete_all_attrs(Runtime& rt, AttrList& list, int object) {
  for (;;) {
    KeyvalObj* k = nullptr;
    void* value;
    {
      std::lock_guard<std::mutex> g(rt.attr_lock);
      if (list.empty()) return 0;
      k = list.back().first;
      value = list.back().second;
    }
    if (int e = call_delete(k, object, value)) return e;
    // The callback may have set other attributes (now last) on the object.
    drop_entry(rt, list, k);
  }
}

int copy_attrs(Runtime& rt, const AttrList& from, int old, AttrList* to) {
  AttrList snapshot;
  {
    std::lock_guard<std::mutex> g(rt.attr_lock);
    snapshot = from;
  }
  for (auto& [k, value] : snapshot) {
    void* out = nullptr;
    int flag = 0;
    if (int e = call_copy(k, old, value, &out, &flag)) return e;
    if (flag) {
      k->refs.fetch_add(1);
      to->emplace_back(k, out);
    }
  }
  return 0;
}

}  // namespace adi3::mpi

using namespace adi3;
using namespace adi3::mpi;

extern "C" {
int adi3_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int adi3_comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int adi3_comm_null_delete_fn(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
int adi3_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int adi3_type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int adi3_type_null_delete_fn(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }
}

namespace {

int create_keyval(Runtime& rt, KeyvalKind kind, void* copy_fn, void* delete_fn, void* extra, int* out) {
  auto* k = new KeyvalObj;
  k->kind = kind;
  k->copy_fn = copy_fn;
  k->delete_fn = delete_fn;
  k->extra_state = extra;
  int i = rt.keyvals.add(k);
  if (i < 0) {
    delete k;
    return raise(ErrorClass::Intern, "too many keyvals");
  }
  k->handle = make_handle(HandleClass::User, Kind::Keyval, i);
  *out = k->handle;
  return 0;
}

int free_keyval(Runtime& rt, int* keyval, KeyvalKind kind) {
  if (!keyval) return raise(ErrorClass::Arg, "keyval is null");
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(rt, *keyval, kind, &k)) return e;
  *keyval = MPI_KEYVAL_INVALID;
  free_keyval_handle(rt, k);
  return 0;
}

// The predefined attributes every communicator answers for.
void* builtin_attr(Runtime& rt, int keyval) {
  switch (keyval) {
    case MPI_TAG_UB:
      return &rt.attr_tag_ub;
    case MPI_HOST:
      return &rt.attr_host;
    case MPI_IO:
      return &rt.attr_io;
    case MPI_WTIME_IS_GLOBAL:
      return &rt.attr_wtime_global;
    case MPI_UNIVERSE_SIZE:
      return &rt.attr_universe;
    case MPI_LASTUSEDCODE:
      return &rt.attr_lastusedcode;
    case MPI_APPNUM:
      return &rt.attr_appnum;
    default:
      return nullptr;
  }
}

// (The caller reports the error: its handler runs once.)
int comm_get_attr(Runtime& rt, MPI_Comm comm, int keyval, void* value, int* flag) {
  CommObj* c = nullptr;
  if (int e = get_comm(rt, comm, &c)) return e;
  if (!value || !flag) return raise(ErrorClass::Arg, "attribute_val or flag is null");
  if (is_kind(keyval, Kind::Keyval, HandleClass::Builtin)) {
    void* v = builtin_attr(rt, keyval);
    if (!v) return raise(ErrorClass::Keyval, "keyval 0x%x is not a communicator keyval", keyval);
    *flag = 1;
    *static_cast<void**>(value) = v;
    return 0;
  }
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(rt, keyval, KeyvalKind::Comm, &k)) return e;
  void* v;
  *flag = find_attr(rt, c->attrs, k, &v);
  if (*flag) *static_cast<void**>(value) = v;
  return 0;
}

}  // namespace

ADI3_MPI_API(int, Comm_create_keyval,
             (MPI_Comm_copy_attr_function * copy_fn, MPI_Comm_delete_attr_function* delete_fn, int* keyval,
              void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  ADI3_MPI_ENTER();
  if (!keyval) return world_error(raise(ErrorClass::Arg, "comm_keyval is null"), __func__);
  return world_error(create_keyval(*rt, KeyvalKind::Comm, reinterpret_cast<void*>(copy_fn),
                                   reinterpret_cast<void*>(delete_fn), extra_state, keyval),
                     __func__);
}

ADI3_MPI_API(int, Comm_free_keyval, (int* keyval), (keyval)) {
  ADI3_MPI_ENTER();
  return world_error(free_keyval(*rt, keyval, KeyvalKind::Comm), __func__);
}

ADI3_MPI_API(int, Comm_set_attr, (MPI_Comm comm, int keyval, void* attribute_val), (comm, keyval, attribute_val)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Comm, &k)) return comm_error(c, e, __func__);
  return comm_error(c, set_attr(*rt, c->attrs, k, attribute_val, comm), __func__);
}

ADI3_MPI_API(int, Comm_get_attr, (MPI_Comm comm, int keyval, void* attribute_val, int* flag),
             (comm, keyval, attribute_val, flag)) {
  ADI3_MPI_ENTER();
  return comm_error(comm, comm_get_attr(*rt, comm, keyval, attribute_val, flag), __func__);
}

ADI3_MPI_API(int, Comm_delete_attr, (MPI_Comm comm, int keyval), (comm, keyval)) {
  ADI3_MPI_ENTER();
  CommObj* c = nullptr;
  if (int e = get_comm(*rt, comm, &c)) return world_error(e, __func__);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Comm, &k)) return comm_error(c, e, __func__);
  return comm_error(c, delete_attr(*rt, c->attrs, k, comm), __func__);
}

ADI3_MPI_API(int, Keyval_create,
             (MPI_Copy_function * copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
ADI3_MPI_API(int, Keyval_free, (int* keyval), (keyval)) { return PMPI_Comm_free_keyval(keyval); }
ADI3_MPI_API(int, Attr_put, (MPI_Comm comm, int keyval, void* value), (comm, keyval, value)) {
  return PMPI_Comm_set_attr(comm, keyval, value);
}
ADI3_MPI_API(int, Attr_get, (MPI_Comm comm, int keyval, void* value, int* flag), (comm, keyval, value, flag)) {
  return PMPI_Comm_get_attr(comm, keyval, value, flag);
}
ADI3_MPI_API(int, Attr_delete, (MPI_Comm comm, int keyval), (comm, keyval)) {
  return PMPI_Comm_delete_attr(comm, keyval);
}

ADI3_MPI_API(int, Type_create_keyval,
             (MPI_Type_copy_attr_function * copy_fn, MPI_Type_delete_attr_function* delete_fn, int* keyval,
              void* extra_state),
             (copy_fn, delete_fn, keyval, extra_state)) {
  ADI3_MPI_ENTER();
  if (!keyval) return world_error(raise(ErrorClass::Arg, "type_keyval is null"), __func__);
  return world_error(create_keyval(*rt, KeyvalKind::Type, reinterpret_cast<void*>(copy_fn),
                                   reinterpret_cast<void*>(delete_fn), extra_state, keyval),
                     __func__);
}

ADI3_MPI_API(int, Type_free_keyval, (int* keyval), (keyval)) {
  ADI3_MPI_ENTER();
  return world_error(free_keyval(*rt, keyval, KeyvalKind::Type), __func__);
}

ADI3_MPI_API(int, Type_set_attr, (MPI_Datatype type, int keyval, void* attribute_val), (type, keyval, attribute_val)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, type, &t)) return world_error(e, __func__);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Type, &k)) return world_error(e, __func__);
  AttrList* list;
  {
    std::lock_guard<std::mutex> g(rt->attr_lock);
    list = &rt->type_attrs[t];
  }
  return world_error(set_attr(*rt, *list, k, attribute_val, type), __func__);
}

ADI3_MPI_API(int, Type_get_attr, (MPI_Datatype type, int keyval, void* attribute_val, int* flag),
             (type, keyval, attribute_val, flag)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, type, &t)) return world_error(e, __func__);
  if (!attribute_val || !flag) return world_error(raise(ErrorClass::Arg, "attribute_val or flag is null"), __func__);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Type, &k)) return world_error(e, __func__);
  AttrList* list = nullptr;
  {
    std::lock_guard<std::mutex> g(rt->attr_lock);
    auto it = rt->type_attrs.find(t);
    if (it != rt->type_attrs.end()) list = &it->second;
  }
  void* v = nullptr;
  *flag = list && find_attr(*rt, *list, k, &v);
  if (*flag) *static_cast<void**>(attribute_val) = v;
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Type_delete_attr, (MPI_Datatype type, int keyval), (type, keyval)) {
  ADI3_MPI_ENTER();
  const Datatype* t = nullptr;
  if (int e = get_type(*rt, type, &t)) return world_error(e, __func__);
  KeyvalObj* k = nullptr;
  if (int e = get_keyval(*rt, keyval, KeyvalKind::Type, &k)) return world_error(e, __func__);
  AttrList* list;
  {
    std::lock_guard<std::mutex> g(rt->attr_lock);
    list = &rt->type_attrs[t];
  }
  return world_error(delete_attr(*rt, *list, k, type), __func__);
}
