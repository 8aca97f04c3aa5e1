#include "pmi/pmi_server.h"

#include <algorithm>

namespace grove::pmi {
namespace {

// PMI-1 cannot escape a space: messages are written with '_' for it.
std::string v1_text(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == ' ' || c == '\n' || c == '\t'; }, '_');
  return text;
}

void put_u32(std::string& out, std::size_t value) {
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<char>((value >> shift) & 0xff));
}

bool take_u32(std::string_view& in, std::size_t& value) {
  if (in.size() < 4) return false;
  value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<std::size_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(4);
  return true;
}

bool take_text(std::string_view& in, std::string& text) {
  std::size_t length = 0;
  if (!take_u32(in, length) || in.size() < length) return false;
  text.assign(in.substr(0, length));
  in.remove_prefix(length);
  return true;
}

}  // namespace

std::string encode_puts(const std::vector<std::pair<std::string, std::string>>& puts) {
  std::string out;
  for (const auto& [key, value] : puts) {
    put_u32(out, key.size());
    out += key;
    put_u32(out, value.size());
    out += value;
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> decode_puts(std::string_view data) {
  std::vector<std::pair<std::string, std::string>> puts;
  while (!data.empty()) {
    auto& entry = puts.emplace_back();
    if (!take_text(data, entry.first) || !take_text(data, entry.second))
      return Error{"a PMI fence's data ends inside a key or value"};
  }
  return puts;
}

void Server::add_job(JobFacts facts) {
  Job& job = jobs_[facts.job];
  job.facts = std::move(facts);
  for (const auto& [key, value] : job.facts.preput)
    job.kvs[key] = value;
  // Every rank may read the mapping with a PMI-1 get as well.
  if (!job.facts.process_mapping.empty())
    job.kvs["PMI_process_mapping"] = job.facts.process_mapping;
}

void Server::open(ConnId conn, std::uint32_t job, std::uint32_t rank, std::uint32_t appnum) {
  Conn& entry = conns_[conn];
  entry.id = conn;
  entry.job = job;
  entry.rank = rank;
  entry.appnum = appnum;
}

Outbox Server::receive(ConnId id, std::string_view bytes) {
  Outbox out;
  auto found = conns_.find(id);
  if (found == conns_.end()) return out;
  Conn& conn = found->second;
  if (conn.state == Conn::State::broken) return out;
  conn.decoder.feed(bytes);
  for (;;) {
    auto command = conn.decoder.next();
    if (!command) {
      const std::string why = command.error().message;
      out.push_back(effect::Notice{"PMI: rank " + std::to_string(conn.rank) + " of job " +
                                   std::to_string(conn.job) + " sent a malformed command (" + why +
                                   "): its PMI connection is closed"});
      fail(conn, "error", why, out);
      out.push_back(effect::Close{conn.id});
      conn.state = Conn::State::broken;
      return out;
    }
    if (!*command) return out;
    handle(conn, **command, out);
    if (conn.state == Conn::State::broken) return out;
  }
}

void Server::reply(const Conn& conn, const std::string& name, Pairs pairs, Outbox& out) const {
  const bool ok =
      std::none_of(pairs.begin(), pairs.end(), [](const auto& pair) { return pair.first == "rc"; });
  if (ok) pairs.insert(pairs.begin(), {"rc", "0"});
  if (conn.decoder.wire() == Wire::v1) {
    out.push_back(effect::Send{conn.id, encode_v1(name, pairs)});
    return;
  }
  if (!conn.thrid.empty()) pairs.insert(pairs.begin(), {"thrid", conn.thrid});
  out.push_back(effect::Send{conn.id, encode_v2(name, pairs)});
}

void Server::fail(const Conn& conn, const std::string& name, const std::string& why,
                  Outbox& out) const {
  if (conn.decoder.wire() == Wire::v1) {
    reply(conn, name, {{"rc", "-1"}, {"msg", v1_text(why)}}, out);
  } else {
    reply(conn, name, {{"rc", "-1"}, {"errmsg", why}}, out);
  }
}

void Server::handle(Conn& conn, const Command& command, Outbox& out) {
  const bool v2 = conn.decoder.wire() == Wire::v2;
  conn.thrid = v2 && command.find("thrid") ? *command.find("thrid") : std::string();
  const std::string answer = command.name + (v2 ? "-response" : "_result");
  auto job = jobs_.find(conn.job);
  if (job == jobs_.end()) {
    fail(conn, answer, "the job has ended", out);
    return;
  }
  switch (conn.state) {
    case Conn::State::fresh: {
      if (command.name != "init") {
        fail(conn, answer, "cmd=init must come first", out);
        return;
      }
      const std::string* version = command.find("pmi_version");
      const Accepts accepts = job->second.facts.accepts;
      if (version != nullptr && *version == "1" && accepts != Accepts::v2) {
        reply(conn, "response_to_init", {{"pmi_version", "1"}, {"pmi_subversion", "1"}}, out);
        conn.state = Conn::State::v1;
        job->second.initialized.insert(conn.rank);
      } else if (version != nullptr && *version == "2" && accepts != Accepts::v1) {
        reply(conn, "response_to_init", {{"pmi_version", "2"}, {"pmi_subversion", "0"}}, out);
        conn.decoder.use(Wire::v2);  // what follows is PMI-2's
        conn.state = Conn::State::v2_init;
      } else {
        const std::string offered = accepts == Accepts::v2 ? "2" : "1";
        const std::string why = "PMI version " + (version ? *version : std::string("(none)")) +
                                " is not served to this job (grove run --mpi)";
        out.push_back(effect::Notice{"PMI: rank " + std::to_string(conn.rank) + " of job " +
                                     std::to_string(conn.job) + ": " + why});
        reply(conn, "response_to_init",
              {{"rc", "-1"},
               {"pmi_version", offered},
               {"pmi_subversion", "0"},
               {"msg", v1_text(why)}},
              out);
      }
      return;
    }
    case Conn::State::v2_init: {
      if (command.name != "fullinit") {
        fail(conn, answer, "cmd=fullinit must come first", out);
        return;
      }
      const std::string* claimed = command.find("pmirank");
      if (claimed != nullptr && *claimed != std::to_string(conn.rank)) {
        fail(conn, "fullinit-response",
             "this connection is rank " + std::to_string(conn.rank) + "'s, not " + *claimed, out);
        return;
      }
      const JobFacts& facts = job->second.facts;
      Pairs pairs{{"pmi-version", "2"},
                  {"pmi-subversion", "0"},
                  {"rank", std::to_string(conn.rank)},
                  {"size", std::to_string(facts.size)},
                  {"appnum", std::to_string(conn.appnum)}};
      if (!facts.spawner.empty()) pairs.emplace_back("spawner-jobid", facts.spawner);
      pairs.emplace_back("debugged", "FALSE");
      pairs.emplace_back("pmiverbose", "FALSE");
      reply(conn, "fullinit-response", std::move(pairs), out);
      conn.state = Conn::State::v2;
      job->second.initialized.insert(conn.rank);
      job->second.speaks_v2.insert(conn.rank);
      return;
    }
    case Conn::State::v1:
      handle_v1(conn, job->second, command, out);
      return;
    case Conn::State::v2:
      handle_v2(conn, job->second, command, out);
      return;
    case Conn::State::finalized:
      fail(conn, answer, "the rank has finalized", out);
      return;
    case Conn::State::broken:
      return;
  }
}

void Server::put(Job& job, std::string key, std::string value) {
  job.unfenced.emplace_back(key, value);
  job.kvs[std::move(key)] = std::move(value);
}

const std::string* Server::get(const Job& job, const std::string& key) const {
  auto found = job.kvs.find(key);
  return found == job.kvs.end() ? nullptr : &found->second;
}

}  // namespace grove::pmi
