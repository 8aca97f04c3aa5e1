// The commands of an initialized rank, PMI-1's and PMI-2's (docs/jobs.md
// lists what each does).
#include <charconv>

#include "pmi/pmi_server.h"

namespace grove::pmi {
namespace {

// An abort's exitcode= (1 when absent or not a number).
int exit_code_of(const Command& command) {
  const std::string* code = command.find("exitcode");
  int value = 1;
  if (code == nullptr) return value;
  auto [end, error] = std::from_chars(code->data(), code->data() + code->size(), value);
  return error == std::errc() && end == code->data() + code->size() ? value : 1;
}

const std::string kNotServed =
    "is not served over PMI by grove (it is over PMIx: grove run --mpi pmix)";

}  // namespace

std::optional<std::string> Server::refuse_put(const Job& job, const std::string* kvsname,
                                              const std::string* key,
                                              const std::string* value) const {
  if (kvsname != nullptr && *kvsname != job.facts.kvsname)
    return "kvsname " + *kvsname + " is not this job's (" + job.facts.kvsname + ")";
  if (key == nullptr || value == nullptr) return std::string("a put needs key= and value=");
  if (key->empty() || key->size() > limits_.keylen_max)
    return "a key of " + std::to_string(key->size()) + " bytes (1 to " +
           std::to_string(limits_.keylen_max) + ")";
  if (value->size() > limits_.vallen_max)
    return "a value of " + std::to_string(value->size()) + " bytes (at most " +
           std::to_string(limits_.vallen_max) + ")";
  return std::nullopt;
}

void Server::handle_v1(Conn& conn, Job& job, const Command& command, Outbox& out) {
  const std::string& name = command.name;
  const JobFacts& facts = job.facts;
  if (name == "get_maxes") {
    reply(conn, "maxes",
          {{"kvsname_max", std::to_string(limits_.kvsname_max)},
           {"keylen_max", std::to_string(limits_.keylen_max)},
           {"vallen_max", std::to_string(limits_.vallen_max)}},
          out);
  } else if (name == "get_universe_size") {
    reply(conn, "universe_size", {{"size", std::to_string(facts.universe_size)}}, out);
  } else if (name == "get_appnum") {
    reply(conn, "appnum", {{"appnum", std::to_string(conn.appnum)}}, out);
  } else if (name == "get_my_kvsname") {
    reply(conn, "my_kvsname", {{"kvsname", facts.kvsname}}, out);
  } else if (name == "put") {
    const std::string *key = command.find("key"), *value = command.find("value");
    if (auto refused = refuse_put(job, command.find("kvsname"), key, value)) {
      fail(conn, "put_result", *refused, out);
      return;
    }
    put(job, *key, *value);
    reply(conn, "put_result", {{"msg", "success"}}, out);
  } else if (name == "get") {
    const std::string *kvsname = command.find("kvsname"), *key = command.find("key");
    if (key == nullptr) {
      fail(conn, "get_result", "a get needs key=", out);
    } else if (kvsname != nullptr && *kvsname != facts.kvsname) {
      fail(conn, "get_result", "kvsname " + *kvsname + " is not this job's", out);
    } else if (const std::string* value = get(job, *key)) {
      if (v1_safe(*value)) {
        reply(conn, "get_result", {{"msg", "success"}, {"value", *value}}, out);
      } else {  // put over PMI-2 or in a spawn: PMI-1 cannot carry it
        fail(conn, "get_result", "the value of " + *key + " holds a space or newline", out);
      }
    } else {
      fail(conn, "get_result", "key_" + *key + "_not_found", out);
    }
  } else if (name == "barrier_in") {
    enter_barrier(conn, job, out);
  } else if (name == "finalize") {
    reply(conn, "finalize_ack", {}, out);
    conn.state = Conn::State::finalized;
    job.finalized.insert(conn.rank);
    depart(conn.job, conn.rank, out);
  } else if (name == "abort") {
    const int exit_code = exit_code_of(command);
    const std::string* message = command.find("message");
    out.push_back(
        effect::Abort{conn.job, conn.rank, exit_code, message ? *message : "", "PMI_Abort"});
  } else if (name == "publish_name" || name == "unpublish_name" || name == "lookup_name") {
    fail(conn, name.substr(0, name.find('_')) + "_result", name + " " + kNotServed, out);
  } else if (name == "spawn") {
    spawn_v1(conn, command, out);
  } else {
    out.push_back(effect::Notice{"PMI: rank " + std::to_string(conn.rank) + " of job " +
                                 std::to_string(conn.job) + " sent the unknown PMI-1 command '" +
                                 name + "' (answered rc=-1)"});
    fail(conn, name + "_result", "unknown command " + name, out);
  }
}

// PMI-2's node attributes: shared by the ranks of this daemon (a node of
// the mapping); a get with wait=TRUE is answered when the key is put.
void Server::node_attribute(Conn& conn, Job& job, const Command& command, Outbox& out) {
  const std::string& name = command.name;
  const std::string answer = name + "-response";
  if (name == "info-putnodeattr") {
    const std::string *key = command.find("key"), *value = command.find("value");
    if (auto refused = refuse_put(job, nullptr, key, value)) {
      fail(conn, answer, *refused, out);
      return;
    }
    job.node_attrs[*key] = *value;
    reply(conn, answer, {}, out);
    // The ranks waiting for it, each answered as it asked.
    auto [first, last] = job.node_waits.equal_range(*key);
    std::vector<std::pair<ConnId, std::string>> waiting;
    for (auto wait = first; wait != last; ++wait)
      waiting.push_back(wait->second);
    job.node_waits.erase(first, last);
    for (auto& [waiter, thrid] : waiting) {
      auto found = conns_.find(waiter);
      if (found == conns_.end()) continue;
      found->second.thrid = thrid;
      reply(found->second, "info-getnodeattr-response", {{"found", "TRUE"}, {"value", *value}},
            out);
    }
  } else if (name == "info-getnodeattr") {
    const std::string *key = command.find("key"), *wait = command.find("wait");
    if (key == nullptr) {
      fail(conn, answer, "info-getnodeattr needs key=", out);
      return;
    }
    auto value = job.node_attrs.find(*key);
    if (value != job.node_attrs.end()) {
      reply(conn, answer, {{"found", "TRUE"}, {"value", value->second}}, out);
    } else if (wait != nullptr && *wait == "TRUE") {
      job.node_waits.emplace(*key, std::make_pair(conn.id, conn.thrid));
    } else {
      reply(conn, answer, {{"found", "FALSE"}}, out);
    }
  }
}

void Server::handle_v2(Conn& conn, Job& job, const Command& command, Outbox& out) {
  const std::string& name = command.name;
  const std::string answer = name + "-response";
  const JobFacts& facts = job.facts;
  if (name == "job-getid") {
    reply(conn, answer, {{"jobid", facts.kvsname}}, out);
  } else if (name == "kvs-put") {
    const std::string *key = command.find("key"), *value = command.find("value");
    if (auto refused = refuse_put(job, nullptr, key, value)) {
      fail(conn, answer, *refused, out);
      return;
    }
    put(job, *key, *value);
    reply(conn, answer, {}, out);
  } else if (name == "kvs-get") {
    const std::string *jobid = command.find("jobid"), *key = command.find("key");
    if (key == nullptr) {
      fail(conn, answer, "kvs-get needs key=", out);
    } else if (jobid != nullptr && !jobid->empty() && *jobid != facts.kvsname) {
      fail(conn, answer, "jobid " + *jobid + " is not this job's", out);
    } else if (const std::string* value = get(job, *key)) {
      reply(conn, answer, {{"found", "TRUE"}, {"value", *value}}, out);
    } else {
      reply(conn, answer, {{"found", "FALSE"}}, out);
    }
  } else if (name == "kvs-fence") {
    enter_barrier(conn, job, out);
  } else if (name == "info-putnodeattr" || name == "info-getnodeattr") {
    node_attribute(conn, job, command, out);
  } else if (name == "info-getjobattr") {
    const std::string* key = command.find("key");
    if (key == nullptr) {
      fail(conn, answer, "info-getjobattr needs key=", out);
      return;
    }
    std::optional<std::string> value;
    if (*key == "universeSize") {
      value = std::to_string(facts.universe_size);
    } else if (const std::string* known = get(job, *key)) {
      value = *known;
    }
    if (value) {
      reply(conn, answer, {{"found", "TRUE"}, {"value", *value}}, out);
    } else {
      reply(conn, answer, {{"found", "FALSE"}}, out);
    }
  } else if (name == "finalize") {
    reply(conn, answer, {}, out);
    conn.state = Conn::State::finalized;
    job.finalized.insert(conn.rank);
    depart(conn.job, conn.rank, out);
  } else if (name == "abort") {
    // Slurm's libpmi2 and MPICH 4.0 send msg=; MPICH 4.1 exitcode= and message=.
    const std::string* message = command.find("message");
    if (message == nullptr) message = command.find("msg");
    const int exit_code = exit_code_of(command);
    out.push_back(
        effect::Abort{conn.job, conn.rank, exit_code, message ? *message : "", "PMI2_Abort"});
  } else if (name == "spawn") {
    spawn_v2(conn, command, out);
  } else if (name == "name-publish" || name == "name-unpublish" || name == "name-lookup" ||
             name == "job-connect" || name == "job-disconnect") {
    fail(conn, answer, name + " " + kNotServed, out);
  } else {
    out.push_back(effect::Notice{"PMI: rank " + std::to_string(conn.rank) + " of job " +
                                 std::to_string(conn.job) + " sent the unknown PMI-2 command '" +
                                 name + "' (answered rc=-1)"});
    fail(conn, answer, "unknown command " + name, out);
  }
}

}  // namespace grove::pmi
