// Info objects: ordered (key, value) string pairs.
#include <algorithm>
#include <cstring>

#include "mpi/api.hpp"

namespace adi3::mpi {

namespace {

struct InfoStore {
  HandleTable<InfoObj*> table;
  ~InfoStore() {
    table.for_each([](int, InfoObj* i) { delete i; });
  }
};

int add_entries(std::vector<std::pair<std::string, std::string>> entries, MPI_Info* out) {
  auto* obj = new InfoObj{std::move(entries)};
  int i = info_table().add(obj);
  if (i < 0) {
    delete obj;
    return raise(ErrorClass::Intern, "too many info objects");
  }
  *out = make_handle(HandleClass::User, Kind::Info, i);
  return 0;
}

}  // namespace

HandleTable<InfoObj*>& info_table() {
  static InfoStore store;
  return store.table;
}

int add_info(Runtime&, std::vector<std::pair<std::string, std::string>> entries, MPI_Info* out) {
  return add_entries(std::move(entries), out);
}

}  // namespace adi3::mpi

using namespace adi3;
using namespace adi3::mpi;

namespace {

// get_info without a Runtime: user info objects exist before MPI_Init;
// MPI_INFO_ENV is filled in by MPI_Init.
int lookup(MPI_Info h, InfoObj** out) {
  if (Runtime* rt = g_runtime) return get_info(*rt, h, out);
  if (h == MPI_INFO_ENV) return raise(ErrorClass::Info, "MPI_INFO_ENV is available between MPI_Init and MPI_Finalize");
  if (h == MPI_INFO_NULL) return raise(ErrorClass::Info, "the info object is MPI_INFO_NULL");
  if (is_kind(h, Kind::Info, HandleClass::User)) {
    if (InfoObj** i = info_table().get(handle_index(h))) {
      *out = *i;
      return 0;
    }
    return raise(ErrorClass::Info, "info handle 0x%x was freed or never created", h);
  }
  return raise(ErrorClass::Info, "0x%x is not an info handle", h);
}

}  // namespace

namespace {

int check_key(const char* key) {
  if (!key) return raise(ErrorClass::InfoKey, "the key is null");
  std::size_t n = std::strlen(key);
  if (n == 0) return raise(ErrorClass::InfoKey, "the key is empty");
  if (n > MPI_MAX_INFO_KEY)
    return raise(ErrorClass::InfoKey, "the key is %zu characters (at most %d)", n, MPI_MAX_INFO_KEY);
  return 0;
}

auto find(InfoObj& i, const char* key) {
  return std::find_if(i.entries.begin(), i.entries.end(), [key](auto& e) { return e.first == key; });
}

}  // namespace

ADI3_MPI_API(int, Info_create, (MPI_Info * info), (info)) {
  if (!info) return world_error(raise(ErrorClass::Arg, "info is null"), __func__);
  return world_error(add_entries({}, info), __func__);
}

ADI3_MPI_API(int, Info_set, (MPI_Info info, const char* key, const char* value), (info, key, value)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (info == MPI_INFO_ENV) return world_error(raise(ErrorClass::Info, "MPI_INFO_ENV cannot be changed"), __func__);
  if (int e = check_key(key)) return world_error(e, __func__);
  if (!value) return world_error(raise(ErrorClass::InfoValue, "the value is null"), __func__);
  std::size_t n = std::strlen(value);
  if (n > MPI_MAX_INFO_VAL) {
    return world_error(raise(ErrorClass::InfoValue, "the value is %zu characters (at most %d)", n, MPI_MAX_INFO_VAL),
                       __func__);
  }
  auto it = find(*i, key);
  if (it != i->entries.end()) {
    it->second = value;
  } else {
    i->entries.emplace_back(key, value);
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_get, (MPI_Info info, const char* key, int valuelen, char* value, int* flag),
             (info, key, valuelen, value, flag)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (int e = check_key(key)) return world_error(e, __func__);
  if (!flag || (!value && valuelen > 0)) return world_error(raise(ErrorClass::Arg, "value or flag is null"), __func__);
  if (valuelen < 0) return world_error(raise(ErrorClass::Arg, "invalid valuelen %d", valuelen), __func__);
  auto it = find(*i, key);
  *flag = it != i->entries.end();
  if (*flag && value) {
    // valuelen excludes the terminating null (C binding: value has valuelen + 1 bytes).
    std::size_t n = std::min<std::size_t>(it->second.size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_get_string, (MPI_Info info, const char* key, int* buflen, char* value, int* flag),
             (info, key, buflen, value, flag)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (int e = check_key(key)) return world_error(e, __func__);
  if (!flag || !buflen) return world_error(raise(ErrorClass::Arg, "buflen or flag is null"), __func__);
  auto it = find(*i, key);
  *flag = it != i->entries.end();
  if (!*flag) return MPI_SUCCESS;
  int have = *buflen;
  *buflen = static_cast<int>(it->second.size()) + 1;
  if (have > 0 && value) {
    std::size_t n = std::min<std::size_t>(it->second.size(), static_cast<std::size_t>(have - 1));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag),
             (info, key, valuelen, flag)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (int e = check_key(key)) return world_error(e, __func__);
  if (!valuelen || !flag) return world_error(raise(ErrorClass::Arg, "valuelen or flag is null"), __func__);
  auto it = find(*i, key);
  *flag = it != i->entries.end();
  if (*flag) *valuelen = static_cast<int>(it->second.size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_get_nkeys, (MPI_Info info, int* nkeys), (info, nkeys)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (!nkeys) return world_error(raise(ErrorClass::Arg, "nkeys is null"), __func__);
  *nkeys = static_cast<int>(i->entries.size());
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_get_nthkey, (MPI_Info info, int n, char* key), (info, n, key)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (!key) return world_error(raise(ErrorClass::Arg, "key is null"), __func__);
  if (n < 0 || n >= static_cast<int>(i->entries.size())) {
    return world_error(
        raise(ErrorClass::Arg, "key number %d does not exist (the info has %zu keys)", n, i->entries.size()), __func__);
  }
  const std::string& k = i->entries[static_cast<std::size_t>(n)].first;
  std::memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_delete, (MPI_Info info, const char* key), (info, key)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (info == MPI_INFO_ENV) return world_error(raise(ErrorClass::Info, "MPI_INFO_ENV cannot be changed"), __func__);
  if (int e = check_key(key)) return world_error(e, __func__);
  auto it = find(*i, key);
  if (it == i->entries.end()) return world_error(raise(ErrorClass::InfoNokey, "no key \"%s\"", key), __func__);
  i->entries.erase(it);
  return MPI_SUCCESS;
}

ADI3_MPI_API(int, Info_dup, (MPI_Info info, MPI_Info* newinfo), (info, newinfo)) {
  InfoObj* i = nullptr;
  if (int e = lookup(info, &i)) return world_error(e, __func__);
  if (!newinfo) return world_error(raise(ErrorClass::Arg, "newinfo is null"), __func__);
  return world_error(add_entries(i->entries, newinfo), __func__);
}

ADI3_MPI_API(int, Info_free, (MPI_Info * info), (info)) {
  if (!info) return world_error(raise(ErrorClass::Arg, "info is null"), __func__);
  InfoObj* i = nullptr;
  if (int e = lookup(*info, &i)) return world_error(e, __func__);
  if (*info == MPI_INFO_ENV) return world_error(raise(ErrorClass::Info, "MPI_INFO_ENV cannot be freed"), __func__);
  delete info_table().remove(handle_index(*info));
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
