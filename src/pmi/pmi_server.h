// A daemon's PMI-1 and PMI-2 service to its local ranks, as a state machine:
// bytes in from a rank's connection, effects out (replies, a fence of the
// job's, an abort). Each rank has one connection, handed down as PMI_FD, so
// a connection is its rank: no command can speak for another. A barrier
// (PMI-1 barrier_in, PMI-2 kvs-fence) is one fence of the DVM's engine per
// round: once every local rank of the job has entered it (or left), this
// daemon contributes the puts its ranks made since the last one; the
// release brings every other daemon's, and every waiting rank is answered.
// Pure: the daemon drives it (daemon/simple_pmi_host.h), tests drive it
// directly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "pmi/pmi_wire.h"

namespace grove::pmi {

// Which protocols a job's ranks may speak (grove run --mpi).
enum class Accepts : std::uint8_t { both, v1, v2 };

struct JobFacts {
  std::uint32_t job = 0;
  std::string kvsname;  // the job's namespace
  std::uint32_t size = 0;
  std::uint32_t universe_size = 0;
  std::uint32_t local_ranks = 0;  // how many of its ranks this daemon hosts
  std::string process_mapping;    // "": cannot be expressed (MPICH then asks each rank's host)
  std::string spawner;            // the parent job's kvsname; "": not spawned
  Accepts accepts = Accepts::both;
  Pairs preput;  // put by the spawner for the job's ranks to get (PARENT_ROOT_PORT_NAME)
};

// One program of a rank's spawn (MPI_Comm_spawn has one, _multiple several).
struct SpawnProgram {
  std::vector<std::string> argv;  // the program, then its arguments
  std::uint32_t np = 0;
};

using ConnId = std::uint64_t;

namespace effect {
struct Send {
  ConnId conn = 0;
  std::string bytes;
};
// The connection's framing is lost (a malformed command): close it once
// what was sent has gone.
struct Close {
  ConnId conn = 0;
};
// Every local rank of the job entered this round's barrier: this daemon's
// contribution to the DVM's fence (encode_puts of the puts since the last).
struct Contribute {
  std::uint32_t job = 0;
  std::string data;
};
struct Abort {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  int code = 0;
  std::string message;
  std::string call;  // PMI_Abort or PMI2_Abort
};
struct Notice {
  std::string text;  // an error line for the log
};
// A rank asked for a new job (MPI_Comm_spawn): answer with spawn_done(conn).
struct Spawn {
  ConnId conn = 0;
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  std::vector<SpawnProgram> programs;
  Pairs preput;
};
}  // namespace effect

using Effect = std::variant<effect::Send, effect::Close, effect::Contribute, effect::Abort,
                            effect::Notice, effect::Spawn>;
using Outbox = std::vector<Effect>;

// A fence's data: (key, value) pairs, each length-prefixed, so that every
// daemon's contributions concatenated decode as one list.
std::string encode_puts(const std::vector<std::pair<std::string, std::string>>& puts);
Result<std::vector<std::pair<std::string, std::string>>> decode_puts(std::string_view data);

struct Limits {
  std::uint32_t kvsname_max = 256;
  std::uint32_t keylen_max = 64;
  // PMI-1's clients read replies into 1024-byte lines: a value and the
  // reply's words must fit.
  std::uint32_t vallen_max = 960;
};

class Server {
 public:
  explicit Server(Limits limits = {}) : limits_(limits) {}

  // A job with ranks here, before any of them connects.
  void add_job(JobFacts facts);
  // The facts of a job added and not ended; null otherwise.
  const JobFacts* job_facts(std::uint32_t job) const {
    auto found = jobs_.find(job);
    return found == jobs_.end() ? nullptr : &found->second.facts;
  }
  // The connection handed to rank `rank` of `job` (`appnum`: its app).
  void open(ConnId conn, std::uint32_t job, std::uint32_t rank, std::uint32_t appnum);
  Outbox receive(ConnId conn, std::string_view bytes);
  // The rank closed its end (or ended): it is out of the job's barriers.
  Outbox closed(ConnId conn);
  // The rank's process ended, connected or not.
  Outbox rank_exited(std::uint32_t job, std::uint32_t rank);
  // The job's fence ended: released with every other daemon's data, or not
  // (`why` says what happened).
  Outbox fence_done(std::uint32_t job, bool released, std::string_view others,
                    const std::string& why);
  // The spawn a rank asked for started (its new job's name) or not (why).
  // `text`: the new job's namespace if it started, else why not.
  Outbox spawn_done(ConnId conn, bool started, const std::string& text);
  // The job is over here: its state goes (its connections stay until closed,
  // answering nothing more).
  void job_ended(std::uint32_t job);
  // What the rank owes if it initialized over PMI and has not finalized:
  // "PMI_Finalize" or "PMI2_Finalize"; nothing if it owes nothing.
  std::optional<std::string> owed_finalize(std::uint32_t job, std::uint32_t rank) const;
  std::size_t connections() const { return conns_.size(); }

 private:
  struct Conn;
  struct Job;
  void handle(Conn& conn, const Command& command, Outbox& out);
  void handle_v1(Conn& conn, Job& job, const Command& command, Outbox& out);
  void handle_v2(Conn& conn, Job& job, const Command& command, Outbox& out);
  void node_attribute(Conn& conn, Job& job, const Command& command, Outbox& out);
  void reply(const Conn& conn, const std::string& name, Pairs pairs, Outbox& out) const;
  void fail(const Conn& conn, const std::string& name, const std::string& why, Outbox& out) const;
  void put(Job& job, std::string key, std::string value);
  const std::string* get(const Job& job, const std::string& key) const;
  void enter_barrier(Conn& conn, Job& job, Outbox& out);
  void maybe_contribute(Job& job, Outbox& out);
  void depart(std::uint32_t job, std::uint32_t rank, Outbox& out);
  // PMI-1's mcmd=spawn blocks (one per program) and PMI-2's spawn.
  void spawn_v1(Conn& conn, const Command& command, Outbox& out);
  void spawn_v2(Conn& conn, const Command& command, Outbox& out);
  // Checks of a put's key and value against the limits; an error to answer.
  std::optional<std::string> refuse_put(const Job& job, const std::string* kvsname,
                                        const std::string* key, const std::string* value) const;

  struct Conn {
    ConnId id = 0;
    std::uint32_t job = 0;
    std::uint32_t rank = 0;
    std::uint32_t appnum = 0;
    Decoder decoder;
    enum class State : std::uint8_t {
      fresh,
      v1,
      v2_init,
      v2,
      finalized,
      broken
    } state = State::fresh;
    std::string thrid;  // PMI-2: echoed in the reply to the command that carried it
    // PMI-1 spawn blocks so far (answered after the last), and the thrid of
    // a PMI-2 spawn waiting for its answer.
    std::vector<SpawnProgram> spawning;
    Pairs spawn_preput;
    std::string spawn_error;  // a block failed: answered after the last
    std::string spawn_thrid;
    bool spawn_pending = false;
  };
  struct Job {
    JobFacts facts;
    std::map<std::string, std::string> kvs;                     // what every rank may get
    std::vector<std::pair<std::string, std::string>> unfenced;  // put here since the last fence
    std::map<std::string, std::string> node_attrs;              // PMI-2 node attributes
    // PMI-2 info-getnodeattr wait=TRUE, until the key is put.
    std::multimap<std::string, std::pair<ConnId, std::string>> node_waits;  // key -> conn, thrid
    // rank -> its conn and the thrid its kvs-fence carried (PMI-2)
    std::map<std::uint32_t, std::pair<ConnId, std::string>> in_barrier;
    std::set<std::uint32_t> departed;  // ranks that left (out of barriers)
    std::set<std::uint32_t> initialized, finalized;
    std::set<std::uint32_t> speaks_v2;  // initialized over PMI-2
    bool fencing = false;               // a contribution is out, its release not back
  };
  Limits limits_;
  std::map<ConnId, Conn> conns_;
  std::map<std::uint32_t, Job> jobs_;
};

}  // namespace grove::pmi
