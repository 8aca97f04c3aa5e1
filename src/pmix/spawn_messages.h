// What a daemon and the controller say to each other about PMIx_Spawn: the
// request names the asking daemon's handle, which the reply echoes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/wire.h"

namespace grove {

// One app of the spawn (MPI_Comm_spawn has one, MPI_Comm_spawn_multiple
// several).
struct SpawnApp {
  std::vector<std::string> argv;  // program and arguments
  std::vector<std::string> env;   // NAME=value added to the spawning job's
  std::string cwd;                // empty: the spawning job's
  std::uint32_t np = 1;

  static constexpr const char* wire_name = "spawn app";
  static auto wire_fields(auto& m) { return std::tie(m.argv, m.env, m.cwd, m.np); }
};

struct SpawnMessage {
  std::uint64_t handle = 0;
  std::string nspace;  // the spawning rank
  std::uint32_t rank = 0;
  std::vector<SpawnApp> apps;
  std::string map_by;  // PMIX_MAPBY, as `--map-by` reads it; empty: the default
  // A PMI rank's spawn: KEY=VALUE pairs for the new job's ranks to get.
  std::vector<std::string> pmi_preput;

  static constexpr const char* wire_name = "spawn";
  static auto wire_fields(auto& m) {
    return std::tie(m.handle, m.nspace, m.rank, m.apps, m.map_by, m.pmi_preput);
  }
};

struct SpawnReply {
  std::uint64_t handle = 0;
  bool ok = false;
  std::string nspace;  // the new job's, when ok
  std::string error;   // why not, otherwise

  static constexpr const char* wire_name = "spawn reply";
  static auto wire_fields(auto& m) { return std::tie(m.handle, m.ok, m.nspace, m.error); }
};

}  // namespace grove
