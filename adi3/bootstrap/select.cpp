// Choosing the wire from the environment, the singleton, and loading the
// PMIx module (kept out of libadi3 so the core never needs libpmix).
#include <dlfcn.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "adi3/bootstrap/common.hpp"
#include "adi3/bootstrap/wires.hpp"
#include "channels/loader.hpp"

namespace adi3 {
namespace {

constexpr Knob kBootstrapKnobs[] = {
    {"ADI3_PMI", "auto",
     "Launcher wire: pmi1, pmi2, pmix or singleton. auto: pmix when PMIX_RANK and PMIX_NAMESPACE are set "
     "(Open MPI's mpirun, srun --mpi=pmix); pmi2 when SLURM_MPI_TYPE=pmi2 or the launcher gives only "
     "PMI_PORT; pmi1 when PMI_FD is set (our mpiexec, Hydra); else a singleton (a job of one)."},
    {"ADI3_NODE_MAP", "launcher",
     "Which ranks share a host. launcher: the launcher's layout (PMI_process_mapping, PMIx node ids), else "
     "exchange. exchange: every rank publishes its host id and reads the others' (set it for all ranks)."},
    {"ADI3_HOST_ID", "hostname:boot_id",
     "This process's host identity when the layout is exchanged; ranks with equal ids share a node."},
    {"ADI3_JOB_SECRET", "(set by mpiexec)",
     "The job's shared secret (64 hex digits, fresh per job), handed to the ranks by our mpiexec; the "
     "runtime takes it out of its environment at start-up. Not a user setting."},
    {"ADI3_PMI_PORT", "(set by mpiexec)",
     "host:port of our mpiexec's PMI server for ranks started by --launcher ssh (PMI-1 over TCP, "
     "authenticated by the job secret both ways). Not a user setting."},
    {"ADI3_JOB_SECRET_STDIN", "(set by mpiexec)",
     "1: the job secret is the first line of standard input (ranks started by --launcher ssh: the secret "
     "never appears on a command line). Not a user setting."},
};

bool has(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

std::string singleton_job_id() {
  std::string id = env_string("ADI3_JOB_ID", "");
  if (!id.empty()) return id;
  uint32_t r = 0;
  if (getrandom(&r, sizeof r, 0) != sizeof r) r = 0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "s%ld-%08x", static_cast<long>(getpid()), r);
  return buf;
}

// A job of one: the key-value space is a local map.
class SingletonBootstrap final : public BootstrapCommon {
 public:
  SingletonBootstrap() : job_id_(singleton_job_id()) {
    take_secret_from_environment();
    learn_layout(std::nullopt);
  }
  std::string_view wire() const override { return "singleton"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const std::string& job_id() const override { return job_id_; }
  void put(std::string_view key, std::string_view value) override { kvs_[std::string(key)] = std::string(value); }
  void fence() override {}
  std::optional<std::string> get_from(int, std::string_view key) override {
    auto it = kvs_.find(std::string(key));
    if (it == kvs_.end()) return std::nullopt;
    return it->second;
  }
  void barrier() override {}
  std::size_t max_key_length() const override { return 1u << 10; }
  std::size_t max_value_length() const override { return 1u << 20; }
  [[noreturn]] void abort(int code, std::string_view msg) override {
    std::fprintf(stderr, "adi3: aborting with code %d: %.*s\n", code, static_cast<int>(msg.size()), msg.data());
    std::fflush(stderr);
    int status = code & 0xff;
    std::_Exit(status == 0 ? 1 : status);
  }
  void finalize() override {}

 private:
  std::string job_id_;
  std::map<std::string, std::string> kvs_;
};

}  // namespace

std::span<const Knob> bootstrap_knobs() { return kBootstrapKnobs; }

std::string detect_wire() {
  std::string forced = env_string("ADI3_PMI", "auto");
  if (forced == "pmi1" || forced == "pmi2" || forced == "pmix" || forced == "singleton") return forced;
  if (forced != "auto" && !forced.empty()) {
    throw std::runtime_error("ADI3_PMI='" + forced + "' is not one of auto, pmi1, pmi2, pmix, singleton");
  }
  if (has("PMIX_RANK") && has("PMIX_NAMESPACE")) return "pmix";
  if (has("PMI_FD")) return env_string("SLURM_MPI_TYPE", "") == "pmi2" ? "pmi2" : "pmi1";
  if (has("ADI3_PMI_PORT")) return "pmi1";  // our mpiexec --launcher ssh: PMI-1 over an authenticated port
  if (has("PMI_PORT")) return "pmi2";       // PMI-2 reaches a port launcher; our PMI-1 client needs PMI_FD
  return "singleton";
}

std::unique_ptr<Bootstrap> make_bootstrap() {
  std::string wire = detect_wire();
  if (wire == "pmix") return make_pmix_bootstrap();
  if (wire == "pmi2") return make_pmi2_bootstrap();
  if (wire == "pmi1") return make_pmi1_bootstrap();
  return std::make_unique<SingletonBootstrap>();
}

std::unique_ptr<Bootstrap> make_singleton_bootstrap() { return std::make_unique<SingletonBootstrap>(); }

std::unique_ptr<Bootstrap> make_pmix_bootstrap() {
  const std::string file = "libadi3_boot_pmix.so";
  std::string searched, why;
  for (const auto& dir : plugin_search_path()) {
    std::string path = dir + "/" + file;
    searched += (searched.empty() ? "" : ":") + dir;
    if (access(path.c_str(), F_OK) != 0) continue;
    // The handle stays open for the life of the process (the Bootstrap's code lives there).
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      throw std::runtime_error("PMIx: cannot load " + path + ": " + (e ? e : "dlopen failed"));
    }
    auto entry = reinterpret_cast<adi3_boot_pmix_entry>(dlsym(h, ADI3_BOOT_PMIX_ENTRY_NAME));
    if (!entry) throw std::runtime_error("PMIx: " + path + " has no " ADI3_BOOT_PMIX_ENTRY_NAME " entry point");
    char error[512] = {};
    Bootstrap* b = entry(kAdi3BootModuleVersion, error, sizeof error);
    if (!b) throw std::runtime_error(std::string("PMIx: ") + (error[0] ? error : "the module failed to start"));
    return std::unique_ptr<Bootstrap>(b);
  }
  std::string ns = env_string("PMIX_NAMESPACE", "");
  throw std::runtime_error(
      "PMIx: this process was started by a PMIx launcher (PMIX_NAMESPACE=" + ns +
      "; Open MPI's mpirun or srun --mpi=pmix), but this adi3 build has no PMIx support (" + file + " is not in " +
      searched +
      "). Install libpmix-dev and rebuild adi3, or start the job with mpiexec, mpiexec.hydra or srun --mpi=pmi2.");
}

}  // namespace adi3
