// grove sim --replay DIR: the flight recordings of `grove status --dump DIR`
// replayed through fresh engines (sim/flight_replay.h).
#pragma once

#include <cstdint>
#include <string>

namespace grove {

// 0: every daemon did as recorded and every invariant held; 1: a
// divergence or a problem (printed); 2: the recordings could not be read.
int run_sim_replay(const std::string& dir, bool json);

// grove sim --replay DIR --perturb SEED: `runs` perturbations with seeds
// SEED, SEED+1, ... (sim/flight_perturb.h), stopping at the first that
// breaks something. 0: none did; 1: one did (printed, with its seed); 2:
// the recordings could not be read or perturbed.
struct PerturbCli {
  std::uint64_t seed = 1;
  std::uint32_t runs = 1;
  double cut = 0.5;
  std::uint32_t kills = 0;
  double alpha_us = 100;
  double jitter = 0.5;  // of alpha
};
int run_sim_perturb(const std::string& dir, const PerturbCli& options, bool json);

}  // namespace grove
