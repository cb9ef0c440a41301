// Starting a process as one rank of a job (the MPI_Init of the ADI).
//
// init_process() connects to the launcher through adi3/bootstrap (PMI-1,
// PMI-2 or PMIx, chosen from the environment; without a launcher the
// process is a job of one), loads the channel plugin named
// by ADI3_CHANNEL (default shm), starts it and returns the rank's Device.
// The PMI connection lives as long as the Device and is finalized when the
// Device is destroyed, so call Device::finalize() first.
#pragma once
#include <memory>
#include <span>
#include <string_view>

#include "adi3/bootstrap/bootstrap.hpp"
#include "adi3/config.hpp"
#include "adi3/device.hpp"

namespace adi3 {

// Settings read here (besides ADI3_CHANNEL, which core_knobs() lists).
std::span<const Knob> process_knobs();

// Under a launcher a failure to start (unknown channel, no shared memory)
// stops the whole job through PMI abort with the reason on stderr, since
// the other ranks would wait for this one forever; as a singleton it
// throws std::runtime_error.
std::unique_ptr<Device> init_process(const Config& config = Config::from_env());

// Ends the whole job now (MPI_Abort): through the launcher when there is
// one, else by exiting. Prints msg on stderr. Never returns.
[[noreturn]] void abort_process(Device& device, int code, std::string_view msg);

// A barrier through the launcher, outside the Device: no packet of it can
// reach any Device (tests use it to inspect a quiet device). No-op for
// devices not made by init_process.
void process_barrier(Device& device);

// The job id of a Device made by init_process
// (empty for other devices). For tests and tools.
std::string_view process_job_id(Device& device);

// The launcher connection of a Device made by init_process (rank, node
// layout, job secret, key-value space); nullptr for other devices.
Bootstrap* process_bootstrap(Device& device);

}  // namespace adi3
