#include "adi3/process.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "adi3/bootstrap/bootstrap.hpp"
#include "adi3/channel_set.hpp"
#include "adi3/topology.hpp"
#include "channels/loader.hpp"

namespace adi3 {
namespace {

// Polls before yielding when ranks outnumber cores: the peer we wait for
// may need our core, so spinning only delays it.
constexpr int kOversubscribedSpin = 20;

constexpr Knob kProcessKnobs[] = {
    {"ADI3_NETMOD", "tcp",
     "Network channel between hosts of a job across hosts (shm serves the ranks of one host); ignored when "
     "ADI3_CHANNEL forces one channel for every peer, or when the job runs on one host."},
    {"ADI3_JOB_ID", "(from the launcher)",
     "Job id of a singleton run (no launcher); names its shared-memory segments."},
    {"ADI3_OVERSUBSCRIBE", "auto",
     "auto: when this host runs more ranks (the launcher's node layout) than the cores this process may "
     "use, blocking waits spin only 20 polls before yielding (unless ADI3_SPIN_COUNT is set), and sleep "
     "without yielding when this rank leads a session of its own under scheduler autogroups, as Hydra "
     "starts ranks; otherwise (a core per rank) they do not yield, since a yield could only hand the core "
     "to other programs, but spin, then sleep (unless ADI3_YIELD_COUNT is set; a rank in "
     "MPI_THREAD_MULTIPLE still yields, to its own threads). 1: always treated as oversubscribed. 0: "
     "never."},
    {"ADI3_FINALIZE_TIMEOUT", "10",
     "Seconds MPI_Finalize waits for the other ranks to reach it after a call of this rank that may leave "
     "them waiting for it (a collective, or a send or receive, on a communicator, window or file of more "
     "than one rank) returned an error to the program (MPI_ERRORS_RETURN or a handler that returns); it "
     "then ends the job naming the call instead of waiting forever. Errors of local calls (a missing file, "
     "a put out of range, an attribute), truncated messages and errors every rank of the call got back "
     "together do not arm it. 0: wait forever. A rank that got no such error back always waits (read by "
     "the MPI binding)."},
};

// sched_yield hands the core only to tasks of the caller's scheduling
// group. With autogroups (kernel.sched_autogroup_enabled) every session is
// a group, and a launcher that starts each rank in a session of its own
// (Hydra's proxy calls setsid for each) leaves a yield nobody to hand the
// core to: an oversubscribed wait's yield phase then only burns the
// rank's share while the peer it waits for is runnable in another group
// (mpi.rma_ops, 2 x 2 ranks on 2 cores under Hydra: 3.9 s, 1.8 s without
// yields; under our mpiexec, where the ranks share a session, 0.8 s).
bool alone_in_sched_group() {
  if (getsid(0) != getpid()) return false;
  FILE* f = std::fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
  if (!f) return false;
  int on = 0;
  const bool read = std::fscanf(f, "%d", &on) == 1;
  std::fclose(f);
  return read && on == 1;
}

// Ranks outnumbering cores make spinning harmful: see kOversubscribedSpin.
// Counted against the whole machine's hardware threads when this process
// is bound (a launcher that binds gave each rank its own core), else
// against the threads this process may use.
Config tuned_for_host(Config c, const Bootstrap& boot, const HostTopology& topo) {
  std::string mode = env_string("ADI3_OVERSUBSCRIBE", "auto");
  int local = boot.local_size();
  int cpus = topo.bound ? topo.pus : topo.bound_pus;
  if (cpus <= 0) cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  bool over = mode == "1" || (mode == "auto" && local > cpus);
  if (over && !std::getenv("ADI3_SPIN_COUNT")) c.spin_count = std::min(c.spin_count, kOversubscribedSpin);
  // A yield helps only a peer of the job (or a thread of this rank) that
  // waits for our core. With a core per rank it hands the core to other
  // programs for a whole slice (on a loaded host 0-byte latency took 14 ms
  // in most launches, against 5-9 us when the wait goes from spinning
  // straight to sleep: a sleeper is woken at once by its sender's doorbell).
  if (!std::getenv("ADI3_YIELD_COUNT")) {
    if (over && alone_in_sched_group()) c.yield_count = 0;
    c.yield_helps = over;
  }
  return c;
}

// File-name safe: segments are named after the job.
std::string sanitize(std::string_view id) {
  std::string out;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? std::string("job") : out;
}

// The channel's view of the launcher: the process's Bootstrap, with a
// job id safe in file names.
class ProcessBootstrap final : public ChannelBootstrap {
 public:
  explicit ProcessBootstrap(std::unique_ptr<Bootstrap> boot)
      : boot_(std::move(boot)), job_id_(sanitize(boot_->job_id())) {}
  ~ProcessBootstrap() = default;

  int rank() const override { return boot_->rank(); }
  int size() const override { return boot_->size(); }
  const std::string& job_id() const override { return job_id_; }
  void put(std::string_view key, std::string_view value) override { boot_->put(key, value); }
  void fence() override { boot_->fence(); }
  std::optional<std::string> get(std::string_view key) override { return boot_->get(key); }
  void barrier() override { boot_->barrier(); }
  std::size_t max_value_length() const override { return boot_->max_value_length(); }
  std::optional<std::string> job_secret() const override { return boot_->job_secret(); }
  int host_count() const override { return boot_->node_map().nodes; }

  Bootstrap& launcher() { return *boot_; }

 private:
  std::unique_ptr<Bootstrap> boot_;
  std::string job_id_;
};

// The launcher as seen by the on-host channel of a multi-host job: only
// this host's ranks, renumbered 0..n-1, keys and segment names kept apart
// per host. Fences and barriers stay job-wide: every rank of every host
// builds its on-host channel at the same point, so they match up.
class HostBootstrap final : public ChannelBootstrap {
 public:
  HostBootstrap(ProcessBootstrap& job, std::vector<int> ranks, int node) : job_(job), ranks_(std::move(ranks)) {
    // Appended piecewise: GCC 12 -O3 warns (-Wrestrict, a false positive)
    // on "h" + std::to_string(node).
    prefix_.append("h").append(std::to_string(node)).append(".");
    job_id_.append(job.job_id()).append("-h").append(std::to_string(node));
    rank_ = static_cast<int>(std::find(ranks_.begin(), ranks_.end(), job.rank()) - ranks_.begin());
  }
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  const std::string& job_id() const override { return job_id_; }
  void put(std::string_view key, std::string_view value) override { job_.put(prefix_ + std::string(key), value); }
  void fence() override { job_.fence(); }
  std::optional<std::string> get(std::string_view key) override { return job_.get(prefix_ + std::string(key)); }
  void barrier() override { job_.barrier(); }
  std::size_t max_value_length() const override { return job_.max_value_length(); }
  std::optional<std::string> job_secret() const override { return job_.job_secret(); }

 private:
  ProcessBootstrap& job_;
  std::vector<int> ranks_;
  std::string prefix_, job_id_;
  int rank_ = 0;
};

// ADI3_CHANNEL forces one channel for every peer; else a one-host job uses
// shm alone, and a job across hosts a set: shm on the host, ADI3_NETMOD
// between hosts.
std::unique_ptr<Channel> make_channels(ProcessBootstrap& boot) {
  std::string forced = env_string("ADI3_CHANNEL", "");
  const NodeMap& map = boot.launcher().node_map();
  if (!forced.empty() || map.nodes <= 1) {
    return create_channel(load_channel_plugin(forced.empty() ? "shm" : forced), boot);
  }
  std::string netmod = env_string("ADI3_NETMOD", "tcp");
  if (netmod == "shm")
    throw ChannelLoadError("ADI3_NETMOD=shm: shm cannot connect hosts; choose a network channel (tcp)");
  ChannelPluginInfo near_plugin = load_channel_plugin("shm");
  ChannelPluginInfo far_plugin = load_channel_plugin(netmod);
  std::vector<int> local = boot.launcher().local_ranks();
  HostBootstrap host(boot, local, boot.launcher().node());
  std::unique_ptr<Channel> near = create_channel(near_plugin, host);
  std::unique_ptr<Channel> far;
  try {
    far = create_channel(far_plugin, boot);
  } catch (const ChannelLoadError& e) {
    // A network the job cannot use anywhere (every rank agreed: no RDMA
    // device, say): tcp between hosts instead, said once.
    if (!e.unavailable() || netmod == "tcp") throw;
    if (boot.rank() == 0) {
      std::fprintf(stderr, "adi3: warning: ADI3_NETMOD=%s: %s; falling back to tcp between hosts\n", netmod.c_str(),
                   e.what());
    }
    far = create_channel(load_channel_plugin("tcp"), boot);
  }
  return std::make_unique<ChannelSet>(boot.rank(), boot.size(), std::move(local), std::move(near), std::move(far));
}

// Owns what a process rank's channel needs beyond itself: the bootstrap
// (hence the launcher connection), finalized after the channel is gone.
// The device sends and polls through data_path(), the inner channel; the
// other calls forward at one extra indirect call (send and poll too, so
// the wrapper stays a whole Channel for any other holder).
class ProcessChannel final : public Channel {
 public:
  ProcessChannel(std::unique_ptr<ProcessBootstrap> boot, std::unique_ptr<Channel> inner)
      : boot_(std::move(boot)), inner_(std::move(inner)) {}
  ~ProcessChannel() override {
    inner_.reset();
    try {
      boot_->launcher().finalize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "adi3: PMI finalize failed: %s\n", e.what());
    }
  }

  const char* name() const override { return inner_->name(); }
  const ChannelCaps& caps() const override { return inner_->caps(); }
  const ChannelCaps& caps_for(int peer) const override { return inner_->caps_for(peer); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  SendResult send(int dest, const void* hdr, std::size_t hdr_bytes, const Payload& payload) override {
    return inner_->send(dest, hdr, hdr_bytes, payload);
  }
  int poll(PacketSink& sink) override { return inner_->poll(sink); }
  void wait(std::chrono::microseconds timeout) override { inner_->wait(timeout); }
  void wait_until(std::chrono::microseconds timeout, const WaitCondition& done) override {
    inner_->wait_until(timeout, done);
  }
  void wake() override { inner_->wake(); }
  void check_liveness() override { inner_->check_liveness(); }
  int get(int peer, void* local, uint64_t remote, std::size_t len) override {
    return inner_->get(peer, local, remote, len);
  }
  int put(int peer, uint64_t remote, const void* local, std::size_t len) override {
    return inner_->put(peer, remote, local, len);
  }
  int get_crossing(int peer, void* local, uint64_t remote, std::size_t len) override {
    return inner_->get_crossing(peer, local, remote, len);
  }
  void offer_began(int peer, const void* buf, std::size_t len) override { inner_->offer_began(peer, buf, len); }
  void offer_ended(int peer, const void* buf, std::size_t len) override { inner_->offer_ended(peer, buf, len); }
  OneSided* onesided() override { return inner_->onesided(); }
  std::atomic<uint32_t>* call_count() override { return inner_->call_count(); }
  Channel* data_path() override { return inner_->data_path(); }
  uint64_t connections() const override { return inner_->connections(); }
  void expect_payload(int peer) override { inner_->expect_payload(peer); }

  ProcessBootstrap& bootstrap() { return *boot_; }

 private:
  std::unique_ptr<ProcessBootstrap> boot_;
  std::unique_ptr<Channel> inner_;
};

}  // namespace

std::span<const Knob> process_knobs() { return kProcessKnobs; }

std::unique_ptr<Device> init_process(const Config& config) {
  std::unique_ptr<Bootstrap> launcher;
  try {
    launcher = make_bootstrap();
  } catch (const std::exception& e) {
    // No launcher to stop the job through: every rank says why itself.
    throw std::runtime_error(std::string("adi3: cannot reach the launcher: ") + e.what());
  }
  auto boot = std::make_unique<ProcessBootstrap>(std::move(launcher));
  try {
    Config tuned = tuned_for_host(config, boot->launcher(), read_host_topology());
    std::unique_ptr<Channel> inner = make_channels(*boot);
    auto ch = std::make_unique<ProcessChannel>(std::move(boot), std::move(inner));
    return std::make_unique<Device>(std::move(ch), tuned);
  } catch (const std::exception& e) {
    if (boot && boot->launcher().wire() != "singleton") {
      std::string msg = "adi3: rank " + std::to_string(boot->rank()) + " cannot start: " + e.what();
      boot->launcher().abort(1, msg);
    }
    throw;
  }
}

[[noreturn]] void abort_process(Device& device, int code, std::string_view msg) {
  if (auto* pc = dynamic_cast<ProcessChannel*>(&device.channel())) pc->bootstrap().launcher().abort(code, msg);
  std::fprintf(stderr, "%.*s\n", static_cast<int>(msg.size()), msg.data());
  std::fflush(stderr);
  std::_Exit(code ? code : 1);
}

void process_barrier(Device& device) {
  if (auto* pc = dynamic_cast<ProcessChannel*>(&device.channel())) pc->bootstrap().barrier();
}

std::string_view process_job_id(Device& device) {
  if (auto* pc = dynamic_cast<ProcessChannel*>(&device.channel())) return pc->bootstrap().job_id();
  return {};
}

Bootstrap* process_bootstrap(Device& device) {
  if (auto* pc = dynamic_cast<ProcessChannel*>(&device.channel())) return &pc->bootstrap().launcher();
  return nullptr;
}

}  // namespace adi3
