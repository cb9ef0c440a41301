// PMIx as a Bootstrap, built as its own module (libadi3_boot_pmix.so) so
// that libadi3 never depends on libpmix: the core dlopens it only when a
// PMIx server started the process (Open MPI's mpirun, srun --mpi=pmix).
#include <pmix.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "adi3/bootstrap/common.hpp"
#include "adi3/bootstrap/wires.hpp"

namespace adi3 {
namespace {

std::runtime_error error(const std::string& what, pmix_status_t rc) {
  return std::runtime_error("PMIx: " + what + ": " + PMIx_Error_string(rc));
}

// Values we publish can hold any bytes (and can be large), so they
// travel as byte objects; the keys must fit PMIx's key limit.
constexpr std::size_t kMaxValue = 1u << 20;

class PmixBootstrap final : public BootstrapCommon {
 public:
  PmixBootstrap() {
    take_secret_from_environment();
    if (pmix_status_t rc = PMIx_Init(&me_, nullptr, 0); rc != PMIX_SUCCESS) {
      throw error("cannot connect to the PMIx server (PMIx_Init)", rc);
    }
    initialized_ = true;
    job_id_ = me_.nspace;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me_.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* v = nullptr;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v);
    if (rc != PMIX_SUCCESS || !v) throw error("the server gave no job size (PMIX_JOB_SIZE)", rc);
    uint32_t size = 0;
    bool ok = v->type == PMIX_UINT32 ? (size = v->data.uint32, true) : false;
    PMIX_VALUE_RELEASE(v);
    if (!ok || size < 1 || size > (1u << 24) || me_.rank >= size) {
      throw std::runtime_error("PMIx: invalid job size or rank (rank " + std::to_string(me_.rank) + ", size " +
                               std::to_string(size) + ")");
    }
    size_ = static_cast<int>(size);
  }
  ~PmixBootstrap() override {
    // A rank that unwinds without finalize() still lets go of the server.
    if (initialized_) PMIx_Finalize(nullptr, 0);
  }

  std::string_view wire() const override { return "pmix"; }
  int rank() const override { return static_cast<int>(me_.rank); }
  int size() const override { return size_; }
  const std::string& job_id() const override { return job_id_; }
  std::size_t max_key_length() const override { return PMIX_MAX_KEYLEN; }
  std::size_t max_value_length() const override { return kMaxValue; }

  void put(std::string_view key, std::string_view value) override {
    if (key.empty() || key.size() > PMIX_MAX_KEYLEN) {
      throw std::length_error("PMIx: key '" + std::string(key) + "' is empty or longer than " +
                              std::to_string(PMIX_MAX_KEYLEN) + " bytes");
    }
    if (value.size() > kMaxValue) {
      throw std::length_error("PMIx: value for key '" + std::string(key) + "' is " + std::to_string(value.size()) +
                              " bytes; the limit is " + std::to_string(kMaxValue));
    }
    std::string k(key);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = const_cast<char*>(value.data());
    v.data.bo.size = value.size();
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);  // copies the value
    if (rc != PMIX_SUCCESS) throw error("put of key '" + k + "' failed", rc);
  }

  void fence() override {
    if (pmix_status_t rc = PMIx_Commit(); rc != PMIX_SUCCESS) throw error("commit failed", rc);
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(nullptr, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) throw error("fence failed", rc);
  }

  std::optional<std::string> get_from(int owner, std::string_view key) override {
    if (key.empty() || key.size() > PMIX_MAX_KEYLEN) return std::nullopt;
    std::string k(key);
    if (owner >= 0) return owner < size_ ? fetch(owner, k) : std::nullopt;
    // No owner named: this server files keys per rank (it does not
    // search on PMIX_RANK_UNDEF), so look at each rank's, ours first.
    // After a collecting fence every lookup is local.
    if (auto v = fetch(rank(), k)) return v;
    for (int r = 0; r < size_; ++r) {
      if (r == rank()) continue;
      if (auto v = fetch(r, k)) return v;
    }
    return std::nullopt;
  }

  void barrier() override {
    if (pmix_status_t rc = PMIx_Fence(nullptr, 0, nullptr, 0); rc != PMIX_SUCCESS) throw error("barrier failed", rc);
  }

  [[noreturn]] void abort(int code, std::string_view msg) override {
    std::string m(msg);
    std::fprintf(stderr, "adi3: rank %u aborting with code %d: %s\n", me_.rank, code, m.c_str());
    std::fflush(stderr);
    if (initialized_) {
      PMIx_Abort(code, m.c_str(), nullptr, 0);
      // Let the launcher kill us as it stops the job: Open MPI 4.1's mpirun
      // can hang when the aborting rank exits before the others are killed
      // (seen with ranks waiting in a fence). Exit anyway after 2 s.
      for (int i = 0; i < 20; ++i) usleep(100000);
    }
    int status = code & 0xff;
    std::_Exit(status == 0 ? 1 : status);
  }

  void finalize() override {
    if (!initialized_) return;
    initialized_ = false;
    if (pmix_status_t rc = PMIx_Finalize(nullptr, 0); rc != PMIX_SUCCESS) throw error("finalize failed", rc);
  }

  // Node of every rank from PMIX_NODEID; nullopt if the server lacks it.
  std::optional<NodeMap> launcher_layout() {
    NodeMap map;
    map.source = "PMIx node ids";
    std::vector<uint32_t> ids;
    for (int r = 0; r < size_; ++r) {
      pmix_proc_t p;
      PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(r));
      pmix_value_t* v = nullptr;
      pmix_info_t info;
      PMIX_INFO_CONSTRUCT(&info);
      bool optional = true;
      PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
      pmix_status_t rc = PMIx_Get(&p, PMIX_NODEID, &info, 1, &v);
      PMIX_INFO_DESTRUCT(&info);
      if (rc != PMIX_SUCCESS || !v) return std::nullopt;
      bool ok = v->type == PMIX_UINT32;
      if (ok) ids.push_back(v->data.uint32);
      PMIX_VALUE_RELEASE(v);
      if (!ok) return std::nullopt;
    }
    std::vector<uint32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (uint32_t id : ids) {
      map.node_of.push_back(static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), id) - sorted.begin()));
    }
    map.nodes = static_cast<int>(sorted.size());
    return map;
  }

 private:
  std::optional<std::string> fetch(int owner, const std::string& key) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, me_.nspace, static_cast<pmix_rank_t>(owner));
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool optional = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    pmix_value_t* v = nullptr;
    pmix_status_t rc = PMIx_Get(&proc, key.c_str(), &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || !v) return std::nullopt;
    std::optional<std::string> out;
    if (v->type == PMIX_BYTE_OBJECT) {
      out = std::string(v->data.bo.bytes ? v->data.bo.bytes : "", v->data.bo.size);
    } else if (v->type == PMIX_STRING && v->data.string) {
      out = std::string(v->data.string);
    }
    PMIX_VALUE_RELEASE(v);
    return out;
  }

  pmix_proc_t me_{};
  bool initialized_ = false;
  int size_ = 1;
  std::string job_id_;
};

}  // namespace
}  // namespace adi3

extern "C" __attribute__((visibility("default"))) adi3::Bootstrap* adi3_boot_pmix_v1(unsigned version, char* error,
                                                                                     std::size_t error_bytes) {
  auto say = [&](const std::string& msg) {
    if (error && error_bytes) std::snprintf(error, error_bytes, "%s", msg.c_str());
  };
  if (version != kAdi3BootModuleVersion) {
    say("libadi3_boot_pmix.so was built for another libadi3 (module version " + std::to_string(kAdi3BootModuleVersion) +
        ", asked for " + std::to_string(version) + "); rebuild it");
    return nullptr;
  }
  try {
    auto b = std::make_unique<adi3::PmixBootstrap>();
    b->learn_layout(b->launcher_layout());
    return b.release();
  } catch (const std::exception& e) {
    say(e.what());
    return nullptr;
  }
}
