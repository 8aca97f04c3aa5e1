// A rank's spawn (MPI_Comm_spawn, _multiple): PMI-1's mcmd=spawn blocks, one
// per program and answered once after the last, and PMI-2's spawn command,
// become one Spawn effect; the daemon answers with spawn_done. The new job's
// ranks find what the spawner put for them (MPICH's PARENT_ROOT_PORT_NAME)
// in their own key-value store (JobFacts::preput).
#include <charconv>

#include "pmi/pmi_server.h"

namespace grove::pmi {
namespace {

constexpr std::uint32_t kMaxSpawnArgs = 4096;
// Programs of one spawn a rank may name: its blocks are held until the last
// (each at most Decoder::kMaxCommand), so this bounds what a rank can make
// its daemon hold.
constexpr std::size_t kMaxSpawnPrograms = 256;

std::optional<std::uint32_t> number(const std::string* text) {
  if (text == nullptr) return std::nullopt;
  std::uint32_t value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

}  // namespace

void Server::spawn_v1(Conn& conn, const Command& command, Outbox& out) {
  const auto nprocs = number(command.find("nprocs"));
  const std::string* execname = command.find("execname");
  const auto argcnt = number(command.find("argcnt")).value_or(0);
  const auto total = number(command.find("totspawns")).value_or(1);
  const auto sofar = number(command.find("spawnssofar")).value_or(total);
  std::string& why = conn.spawn_error;  // the first block's failure stands
  if (why.empty() && conn.spawn_pending) why = "a spawn of this rank is under way";
  if (why.empty() && (execname == nullptr || execname->empty())) why = "a spawn names no program";
  if (why.empty() && (!nprocs || *nprocs == 0)) why = "a spawn asks for no processes";
  if (why.empty() && argcnt > kMaxSpawnArgs) why = "a spawn with too many arguments";
  if (why.empty() && conn.spawning.size() >= kMaxSpawnPrograms)
    why = "a spawn of too many programs";
  if (why.empty()) {
    SpawnProgram program{{*execname}, *nprocs};
    for (std::uint32_t arg = 1; arg <= argcnt; ++arg) {
      const std::string* value = command.find("arg" + std::to_string(arg));
      program.argv.push_back(value != nullptr ? *value : std::string());
    }
    conn.spawning.push_back(std::move(program));
    const auto preputs = number(command.find("preput_num")).value_or(0);
    for (std::uint32_t index = 0; index < preputs && index < kMaxSpawnArgs; ++index) {
      const std::string* key = command.find("preput_key_" + std::to_string(index));
      const std::string* value = command.find("preput_val_" + std::to_string(index));
      if (key != nullptr && value != nullptr) conn.spawn_preput.emplace_back(*key, *value);
    }
  }
  if (sofar < total) return;  // more programs follow: one answer, after the last
  std::vector<SpawnProgram> programs = std::move(conn.spawning);
  Pairs preput = std::move(conn.spawn_preput);
  conn.spawning.clear();
  conn.spawn_preput.clear();
  if (!why.empty()) {
    const std::string failure = std::move(why);
    conn.spawn_error.clear();
    fail(conn, "spawn_result", failure, out);
    return;
  }
  conn.spawn_pending = true;
  out.push_back(
      effect::Spawn{conn.id, conn.job, conn.rank, std::move(programs), std::move(preput)});
}

void Server::spawn_v2(Conn& conn, const Command& command, Outbox& out) {
  std::vector<SpawnProgram> programs;
  Pairs preput;
  std::map<std::string, std::string> keys, values;  // ppkeyN, ppvalN by N
  for (const auto& [key, value] : command.pairs) {
    if (key == "subcmd") {
      programs.push_back(SpawnProgram{{value}, 0});
    } else if (key == "maxprocs" && !programs.empty()) {
      programs.back().np = number(&value).value_or(0);
    } else if (key.rfind("argv", 0) == 0 && !programs.empty() &&
               programs.back().argv.size() <= kMaxSpawnArgs) {
      programs.back().argv.push_back(value);
    } else if (key.rfind("ppkey", 0) == 0) {
      keys[key.substr(5)] = value;
    } else if (key.rfind("ppval", 0) == 0) {
      values[key.substr(5)] = value;
    }
  }
  for (const auto& [index, key] : keys) {
    auto value = values.find(index);
    if (value != values.end()) preput.emplace_back(key, value->second);
  }
  std::string why;
  if (conn.spawn_pending) why = "a spawn of this rank is under way";
  if (why.empty() && programs.empty()) why = "a spawn names no program";
  for (const SpawnProgram& program : programs) {
    if (why.empty() && (program.argv.front().empty() || program.np == 0))
      why = "a spawn names no program or asks for no processes";
  }
  if (!why.empty()) {
    fail(conn, "spawn-response", why, out);
    return;
  }
  conn.spawn_pending = true;
  conn.spawn_thrid = conn.thrid;
  out.push_back(
      effect::Spawn{conn.id, conn.job, conn.rank, std::move(programs), std::move(preput)});
}

Outbox Server::spawn_done(ConnId id, bool started, const std::string& text) {
  Outbox out;
  auto found = conns_.find(id);
  if (found == conns_.end() || !found->second.spawn_pending) return out;
  Conn& conn = found->second;
  conn.spawn_pending = false;
  const bool v2 = conn.decoder.wire() == Wire::v2;
  conn.thrid = v2 ? conn.spawn_thrid : std::string();
  const std::string name = v2 ? "spawn-response" : "spawn_result";
  if (!started) {
    fail(conn, name, text, out);
  } else if (v2) {
    reply(conn, name, {{"jobid", text}}, out);
  } else {
    reply(conn, name, {}, out);
  }
  return out;
}

}  // namespace grove::pmi
