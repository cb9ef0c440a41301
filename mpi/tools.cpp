// MPI_T (MPI-4.1 chapter 15): initialization, control variables,
// categories, enumerations, sources and events. The control variables are
// the ADI3_* settings of the knob tables adi3_info prints (strings, as set
// in the environment or their defaults); the device reads them once when it
// starts, so a write is taken before MPI starts (it sets the environment the
// device then reads) and refused with MPI_T_ERR_CVAR_SET_NOT_NOW after.
// There are no enumerations and no events (every event query says so with
// the error the standard gives for an index or handle that does not exist);
// one source gives monotonic nanosecond timestamps.
#include <time.h>

#include <cerrno>
#include <memory>
#include <new>
#include <stdexcept>
#include <system_error>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <span>

#include "adi3/bootstrap/bootstrap.hpp"
#include "adi3/config.hpp"
#include "adi3/process.hpp"
#include "channels/loader.hpp"
#include "coll/tuning.hpp"
#include "mpi/runtime.hpp"
#include "mpi/tools.hpp"

using namespace adi3;
using namespace adi3::mpi;
using namespace adi3::mpi::tools;

namespace {

constexpr int kValueChars = 256;  // a control variable's buffer (count of MPI_CHAR)

struct Category {
  const char* name;
  const char* desc;
  std::span<const Knob> knobs;  // its control variables
  bool pvars;                   // all performance variables are here
};

const std::vector<Category>& categories() {
  static const std::vector<Category> c = {
      {"adi3_core", "settings of the device (ADI3_* read when MPI starts)", core_knobs(), false},
      {"adi3_process", "process start-up, the launcher's bootstrap and the channel plugin loader", {}, false},
      {"adi3_bootstrap", "the launcher connection (PMI)", bootstrap_knobs(), false},
      {"adi3_loader", "loading channel plugins", loader_knobs(), false},
      {"adi3_process_startup", "process start-up", process_knobs(), false},
      {"adi3_collectives", "collective algorithm selection", coll::coll_knobs(), false},
      {"adi3_queues", "queue depths and counts of the device", {}, true},
  };
  return c;
}

struct Cvar {
  const Knob* knob;
  int category;
};

const std::vector<Cvar>& cvars() {
  static const std::vector<Cvar> v = [] {
    std::vector<Cvar> out;
    const auto& cats = categories();
    for (std::size_t c = 0; c < cats.size(); ++c) {
      for (const Knob& k : cats[c].knobs) out.push_back({&k, static_cast<int>(c)});
    }
    return out;
  }();
  return v;
}

std::string value_of(const Knob& k) {
  const char* v = std::getenv(k.name);
  return v && *v ? v : k.default_text;
}

struct CvarHandle {
  int index;
};

bool bad_index(int i, std::size_t n) { return i < 0 || static_cast<std::size_t>(i) >= n; }

}  // namespace

State& adi3::mpi::tools::state() {
  static State s;
  return s;
}

int adi3::mpi::tools::check_init() {
  std::lock_guard g(state().lock);
  return state().inits > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
}

int adi3::mpi::tools::escaped() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return MPI_T_ERR_MEMORY;
  } catch (const std::length_error&) {
    return MPI_T_ERR_MEMORY;
  } catch (const std::system_error& e) {
    const int v = e.code().value();
    return v == ENOMEM || v == EAGAIN ? MPI_T_ERR_MEMORY : MPI_ERR_INTERN;
  } catch (...) {
    return MPI_ERR_INTERN;
  }
}

// ---- initialization ----

ADI3_T_API(init_thread, (int required, int* provided), (required, provided)) {
  if (!provided) return MPI_ERR_ARG;
  std::lock_guard g(state().lock);
  ++state().inits;
  *provided = std::min(required, MPI_THREAD_MULTIPLE);  // every call takes the lock
  return MPI_SUCCESS;
}

ADI3_T_API(finalize, (void), ()) {
  std::lock_guard g(state().lock);
  if (state().inits == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (--state().inits == 0) {
    // Handles do not survive the last finalize.
    for (const void* h : state().cvar_handles) delete static_cast<const CvarHandle*>(h);
    state().cvar_handles.clear();
    drop_pvar_sessions();
  }
  return MPI_SUCCESS;
}

// ---- control variables ----

ADI3_T_NUMBER(cvar_get_num, cvars().size())

ADI3_T_API(cvar_get_info,
           (int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype, MPI_T_enum* enumtype,
            char* desc, int* desc_len, int* bind, int* scope),
           (cvar_index, name, name_len, verbosity, datatype, enumtype, desc, desc_len, bind, scope)) {
  ADI3_T_ENTER();
  if (bad_index(cvar_index, cvars().size())) return MPI_T_ERR_INVALID_INDEX;
  const Knob& k = *cvars()[static_cast<std::size_t>(cvar_index)].knob;
  put_string(k.name, name, name_len);
  std::string d = std::string(k.meaning) + " (default: " + k.default_text + ")";
  put_string(d.c_str(), desc, desc_len);
  if (verbosity) *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
  if (datatype) *datatype = MPI_CHAR;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope) *scope = MPI_T_SCOPE_LOCAL;
  return MPI_SUCCESS;
}

ADI3_T_API(cvar_get_index, (const char* name, int* cvar_index), (name, cvar_index)) {
  ADI3_T_ENTER();
  return find_index(cvars(), name, cvar_index, [](const Cvar& c) { return c.knob->name; });
}

ADI3_T_API(cvar_handle_alloc, (int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle, int* count),
           (cvar_index, obj_handle, handle, count)) {
  ADI3_T_ENTER();
  (void)obj_handle;  // bound to no object
  if (bad_index(cvar_index, cvars().size())) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_ERR_ARG;
  auto h = std::make_unique<CvarHandle>(CvarHandle{cvar_index});
  state().cvar_handles.insert(h.get());  // may throw: h is still owned here
  *handle = reinterpret_cast<MPI_T_cvar_handle>(h.release());
  *count = kValueChars;
  return MPI_SUCCESS;
}

namespace {

// The handle's object, or null (the caller holds the lock).
CvarHandle* cvar_of(MPI_T_cvar_handle h) {
  return state().cvar_handles.count(h) ? reinterpret_cast<CvarHandle*>(h) : nullptr;
}

}  // namespace

ADI3_T_API(cvar_handle_free, (MPI_T_cvar_handle * handle), (handle)) {
  ADI3_T_ENTER();
  if (!handle) return MPI_ERR_ARG;
  CvarHandle* h = cvar_of(*handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  state().cvar_handles.erase(h);
  delete h;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

ADI3_T_API(cvar_read, (MPI_T_cvar_handle handle, void* buf), (handle, buf)) {
  ADI3_T_ENTER();
  CvarHandle* h = cvar_of(handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_ERR_ARG;
  std::string v = value_of(*cvars()[static_cast<std::size_t>(h->index)].knob);
  int len = kValueChars;
  put_string(v.c_str(), static_cast<char*>(buf), &len);
  return MPI_SUCCESS;
}

ADI3_T_API(cvar_write, (MPI_T_cvar_handle handle, const void* buf), (handle, buf)) {
  ADI3_T_ENTER();
  CvarHandle* h = cvar_of(handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_ERR_ARG;
  // The device has read it (or will never again).
  if (g_state.load() == 1) return MPI_T_ERR_CVAR_SET_NOT_NOW;
  if (g_state.load() == 2) return MPI_T_ERR_CVAR_SET_NEVER;
  const char* v = static_cast<const char*>(buf);
  if (strnlen(v, kValueChars) >= static_cast<std::size_t>(kValueChars)) return MPI_T_ERR_INVALID;
  if (setenv(cvars()[static_cast<std::size_t>(h->index)].knob->name, v, 1) != 0) return MPI_T_ERR_MEMORY;
  return MPI_SUCCESS;
}

// ---- enumerations: none exist ----

ADI3_T_API(enum_get_info, (MPI_T_enum enumtype, int* num, char* name, int* name_len), (enumtype, num, name, name_len)) {
  ADI3_T_ENTER();
  (void)enumtype, (void)num, (void)name, (void)name_len;
  return MPI_T_ERR_INVALID_HANDLE;
}

ADI3_T_API(enum_get_item, (MPI_T_enum enumtype, int indx, int* value, char* name, int* name_len),
           (enumtype, indx, value, name, name_len)) {
  ADI3_T_ENTER();
  (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
  return MPI_T_ERR_INVALID_HANDLE;
}

// ---- categories ----

ADI3_T_NUMBER(category_get_num, categories().size())

ADI3_T_API(category_get_info,
           (int cat_index, char* name, int* name_len, char* desc, int* desc_len, int* num_cvars, int* num_pvars,
            int* num_categories),
           (cat_index, name, name_len, desc, desc_len, num_cvars, num_pvars, num_categories)) {
  ADI3_T_ENTER();
  if (bad_index(cat_index, categories().size())) return MPI_T_ERR_INVALID_INDEX;
  const Category& c = categories()[static_cast<std::size_t>(cat_index)];
  put_string(c.name, name, name_len);
  put_string(c.desc, desc, desc_len);
  if (num_cvars) *num_cvars = static_cast<int>(c.knobs.size());
  if (num_pvars) *num_pvars = c.pvars ? static_cast<int>(pvars().size()) : 0;
  // adi3_process holds the three start-up categories.
  if (num_categories) *num_categories = cat_index == 1 ? 3 : 0;
  return MPI_SUCCESS;
}

ADI3_T_API(category_get_num_events, (int cat_index, int* num_events), (cat_index, num_events)) {
  ADI3_T_ENTER();
  if (bad_index(cat_index, categories().size())) return MPI_T_ERR_INVALID_INDEX;
  if (!num_events) return MPI_ERR_ARG;
  *num_events = 0;
  return MPI_SUCCESS;
}

ADI3_T_API(category_get_index, (const char* name, int* cat_index), (name, cat_index)) {
  ADI3_T_ENTER();
  return find_index(categories(), name, cat_index, [](const Category& c) { return c.name; });
}

namespace {

// Fills indices[0..len) with the first members of a category's list.
int list(int cat_index, int len, int indices[], int (*member)(int cat, int k)) {
  if (bad_index(cat_index, categories().size())) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_ERR_ARG;
  for (int k = 0; k < len; ++k) {
    int m = member(cat_index, k);
    if (m < 0) break;
    indices[k] = m;
  }
  return MPI_SUCCESS;
}

int cvar_member(int cat, int k) {
  const auto& v = cvars();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].category == cat && k-- == 0) return static_cast<int>(i);
  }
  return -1;
}

int pvar_member(int cat, int k) {
  return categories()[static_cast<std::size_t>(cat)].pvars && static_cast<std::size_t>(k) < pvars().size() ? k : -1;
}

int category_member(int cat, int k) { return cat == 1 && k < 3 ? 2 + k : -1; }

int no_member(int, int) { return -1; }

}  // namespace

// MPI_T_category_get_<what>: the first len members of that list.
#define ADI3_T_CATEGORY_LIST(what, member)                                                              \
  ADI3_T_API(category_get_##what, (int cat_index, int len, int indices[]), (cat_index, len, indices)) { \
    ADI3_T_ENTER();                                                                                     \
    return list(cat_index, len, indices, member);                                                       \
  }
ADI3_T_CATEGORY_LIST(cvars, cvar_member)
ADI3_T_CATEGORY_LIST(pvars, pvar_member)
ADI3_T_CATEGORY_LIST(categories, category_member)
ADI3_T_CATEGORY_LIST(events, no_member)

ADI3_T_NUMBER(category_changed, 0)  // the tables never change

// ---- sources: one monotonic clock ----

ADI3_T_NUMBER(source_get_num, 1)

ADI3_T_API(source_get_info,
           (int source_index, char* name, int* name_len, char* desc, int* desc_len, MPI_T_source_order* ordering,
            MPI_Count* ticks_per_second, MPI_Count* max_ticks, MPI_Info* info),
           (source_index, name, name_len, desc, desc_len, ordering, ticks_per_second, max_ticks, info)) {
  ADI3_T_ENTER();
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  put_string("adi3_clock", name, name_len);
  put_string("CLOCK_MONOTONIC in nanoseconds", desc, desc_len);
  if (ordering) *ordering = MPI_T_SOURCE_ORDERED;
  if (ticks_per_second) *ticks_per_second = 1000000000;
  if (max_ticks) *max_ticks = LLONG_MAX;
  if (info) *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

ADI3_T_API(source_get_timestamp, (int source_index, MPI_Count* timestamp), (source_index, timestamp)) {
  ADI3_T_ENTER();
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (!timestamp) return MPI_ERR_ARG;
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  *timestamp = static_cast<MPI_Count>(t.tv_sec) * 1000000000 + t.tv_nsec;
  return MPI_SUCCESS;
}

// ---- events: none exist, so no registration or instance does either ----

ADI3_T_NUMBER(event_get_num, 0)

ADI3_T_API_NOTHROW(event_get_info, (int, char*, int*, int*, MPI_Datatype*, MPI_Aint*, int*, MPI_T_enum*, MPI_Info*,
                                    char*, int*, int*)) {
  ADI3_T_ENTER();
  return MPI_T_ERR_INVALID_INDEX;
}

ADI3_T_API_NOTHROW(event_get_index, (const char*, int*)) {
  ADI3_T_ENTER();
  return MPI_T_ERR_INVALID_NAME;
}

ADI3_T_API_NOTHROW(event_handle_alloc, (int, void*, MPI_Info, MPI_T_event_registration*)) {
  ADI3_T_ENTER();
  return MPI_T_ERR_INVALID_INDEX;
}

// Calls on a registration or an instance: none can exist.
#define ADI3_T_NO_HANDLE(name, params) \
  ADI3_T_API_NOTHROW(name, params) {   \
    ADI3_T_ENTER();                    \
    return MPI_T_ERR_INVALID_HANDLE;   \
  }
ADI3_T_NO_HANDLE(event_handle_set_info, (MPI_T_event_registration, MPI_Info))
ADI3_T_NO_HANDLE(event_handle_get_info, (MPI_T_event_registration, MPI_Info*))
ADI3_T_NO_HANDLE(event_register_callback,
                 (MPI_T_event_registration, MPI_T_cb_safety, MPI_Info, void*, MPI_T_event_cb_function*))
ADI3_T_NO_HANDLE(event_callback_set_info, (MPI_T_event_registration, MPI_T_cb_safety, MPI_Info))
ADI3_T_NO_HANDLE(event_callback_get_info, (MPI_T_event_registration, MPI_T_cb_safety, MPI_Info*))
ADI3_T_NO_HANDLE(event_handle_free, (MPI_T_event_registration, void*, MPI_T_event_free_cb_function*))
ADI3_T_NO_HANDLE(event_set_dropped_handler, (MPI_T_event_registration, MPI_T_event_dropped_cb_function*))
ADI3_T_NO_HANDLE(event_read, (MPI_T_event_instance, int, void*))
ADI3_T_NO_HANDLE(event_copy, (MPI_T_event_instance, void*))
ADI3_T_NO_HANDLE(event_get_timestamp, (MPI_T_event_instance, MPI_Count*))
ADI3_T_NO_HANDLE(event_get_source, (MPI_T_event_instance, int*))
#undef ADI3_T_NO_HANDLE
