// A daemon's PMI service against scripted ranks: each command's answer, a
// barrier becoming one contribution once every local rank is in it or gone,
// the release bringing the other daemons' puts, and bad input costing one
// connection only.
#include <catch2/catch.hpp>

#include "pmi/pmi_server.h"

using namespace grove;
using namespace grove::pmi;

namespace {

JobFacts two_local(Accepts accepts = Accepts::both) {
  JobFacts facts;
  facts.job = 3;
  facts.kvsname = "grove.3";
  facts.size = 4;
  facts.universe_size = 4;
  facts.local_ranks = 2;
  facts.process_mapping = "(vector,(0,2,2))";
  facts.accepts = accepts;
  return facts;
}

template <typename T>
std::vector<T> all_of(const Outbox& out) {
  std::vector<T> found;
  for (const Effect& effect : out) {
    if (auto* one = std::get_if<T>(&effect)) found.push_back(*one);
  }
  return found;
}

// What `conn` was sent, all of it.
std::string sent_to(const Outbox& out, ConnId conn) {
  std::string text;
  for (const auto& send : all_of<effect::Send>(out)) {
    if (send.conn == conn) text += send.bytes;
  }
  return text;
}

// PMI-2 bytes of a command of pairs.
std::string v2(const std::string& name, const Pairs& pairs = {}) {
  return encode_v2(name, pairs);
}

}  // namespace

TEST_CASE("PMI-1: init, the job's facts, put, barrier, get and finalize") {
  Server server;
  server.add_job(two_local());
  server.open(10, 3, 0, 0);
  server.open(11, 3, 1, 0);
  Outbox out = server.receive(10,
                              "cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\n"
                              "cmd=get_my_kvsname\ncmd=get_universe_size\ncmd=get_appnum\n");
  CHECK(sent_to(out, 10) ==
        "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n"
        "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=960\n"
        "cmd=my_kvsname rc=0 kvsname=grove.3\ncmd=universe_size rc=0 size=4\n"
        "cmd=appnum rc=0 appnum=0\n");
  CHECK(server.owed_finalize(3, 0) == "PMI_Finalize");
  out = server.receive(10,
                       "cmd=get kvsname=grove.3 key=PMI_process_mapping\n"
                       "cmd=put kvsname=grove.3 key=card0 value=tcp://a\ncmd=barrier_in\n");
  CHECK(sent_to(out, 10) ==
        "cmd=get_result rc=0 msg=success value=(vector,(0,2,2))\ncmd=put_result rc=0 "
        "msg=success\n");
  CHECK(all_of<effect::Contribute>(out).empty());  // rank 1 is not in yet
  out = server.receive(11,
                       "cmd=init pmi_version=1 pmi_subversion=1\ncmd=put kvsname=grove.3 "
                       "key=card1 value=tcp://b\ncmd=barrier_in\n");
  auto contributed = all_of<effect::Contribute>(out);
  REQUIRE(contributed.size() == 1);
  auto puts = decode_puts(contributed[0].data);
  REQUIRE(puts);
  CHECK(*puts == std::vector<std::pair<std::string, std::string>>{{"card0", "tcp://a"},
                                                                  {"card1", "tcp://b"}});
  // The release brings the other daemon's ranks' puts.
  out = server.fence_done(3, true, encode_puts({{"card2", "tcp://c"}, {"card3", "tcp://d"}}), "");
  CHECK(sent_to(out, 10) == "cmd=barrier_out rc=0\n");
  CHECK(sent_to(out, 11) == "cmd=barrier_out rc=0\n");
  out = server.receive(11,
                       "cmd=get kvsname=grove.3 key=card3\ncmd=get kvsname=grove.3 "
                       "key=nothing\ncmd=finalize\n");
  CHECK(sent_to(out, 11) ==
        "cmd=get_result rc=0 msg=success value=tcp://d\n"
        "cmd=get_result rc=-1 msg=key_nothing_not_found\n"
        "cmd=finalize_ack rc=0\n");
  CHECK(!server.owed_finalize(3, 1));
  CHECK(server.owed_finalize(3, 0) == "PMI_Finalize");
}

TEST_CASE("PMI-2: init switches the wire; fullinit, kvs, job and node attributes") {
  Server server;
  server.add_job(two_local());
  server.open(20, 3, 1, 0);
  Outbox out = server.receive(20, "cmd=init pmi_version=2 pmi_subversion=0\n" +
                                      v2("fullinit", {{"pmirank", "1"}, {"threaded", "FALSE"}}));
  CHECK(sent_to(out, 20) == "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n" +
                                v2("fullinit-response", {{"rc", "0"},
                                                         {"pmi-version", "2"},
                                                         {"pmi-subversion", "0"},
                                                         {"rank", "1"},
                                                         {"size", "4"},
                                                         {"appnum", "0"},
                                                         {"debugged", "FALSE"},
                                                         {"pmiverbose", "FALSE"}}));
  out = server.receive(20, v2("job-getid", {{"thrid", "0x1"}}) +
                               v2("info-getjobattr", {{"key", "PMI_process_mapping"}}) +
                               v2("info-getjobattr", {{"key", "nothing"}}));
  CHECK(sent_to(out, 20) ==
        v2("job-getid-response", {{"thrid", "0x1"}, {"rc", "0"}, {"jobid", "grove.3"}}) +
            v2("info-getjobattr-response",
               {{"rc", "0"}, {"found", "TRUE"}, {"value", "(vector,(0,2,2))"}}) +
            v2("info-getjobattr-response", {{"rc", "0"}, {"found", "FALSE"}}));
  // A node attribute asked for with wait=TRUE is answered when it is put.
  server.open(21, 3, 0, 0);
  out = server.receive(21, "cmd=init pmi_version=2 pmi_subversion=0\n" + v2("fullinit") +
                               v2("info-getnodeattr", {{"key", "shm"}, {"wait", "TRUE"}}));
  CHECK(sent_to(out, 21).find("info-getnodeattr") == std::string::npos);
  out = server.receive(20, v2("info-putnodeattr", {{"key", "shm"}, {"value", "seg;1"}}));
  CHECK(sent_to(out, 20) == v2("info-putnodeattr-response", {{"rc", "0"}}));
  CHECK(sent_to(out, 21) ==
        v2("info-getnodeattr-response", {{"rc", "0"}, {"found", "TRUE"}, {"value", "seg;1"}}));
  // kvs-fence of both: one contribution; the release answers both.
  out = server.receive(20, v2("kvs-put", {{"key", "k1"}, {"value", "v1"}}) + v2("kvs-fence"));
  CHECK(all_of<effect::Contribute>(out).empty());
  out = server.receive(21, v2("kvs-fence"));
  REQUIRE(all_of<effect::Contribute>(out).size() == 1);
  out = server.fence_done(3, true, encode_puts({{"k3", "v3"}}), "");
  CHECK(sent_to(out, 20) == v2("kvs-fence-response", {{"rc", "0"}}));
  out = server.receive(21, v2("kvs-get", {{"jobid", "grove.3"}, {"srcid", "3"}, {"key", "k3"}}) +
                               v2("kvs-get", {{"key", "k9"}}) + v2("finalize"));
  CHECK(sent_to(out, 21) ==
        v2("kvs-get-response", {{"rc", "0"}, {"found", "TRUE"}, {"value", "v3"}}) +
            v2("kvs-get-response", {{"rc", "0"}, {"found", "FALSE"}}) +
            v2("finalize-response", {{"rc", "0"}}));
}

TEST_CASE("A barrier goes on without a rank that left, and fails as its fence does") {
  Server server;
  server.add_job(two_local());
  server.open(1, 3, 0, 0);
  server.open(2, 3, 1, 0);
  server.receive(1, "cmd=init pmi_version=1 pmi_subversion=1\n");
  Outbox out = server.receive(1, "cmd=barrier_in\n");
  CHECK(all_of<effect::Contribute>(out).empty());
  out = server.rank_exited(3, 1);  // never connected
  REQUIRE(all_of<effect::Contribute>(out).size() == 1);
  out = server.fence_done(3, false, "", "a daemon was lost");
  CHECK(sent_to(out, 1) == "cmd=barrier_out rc=-1 msg=a_daemon_was_lost\n");
  CHECK(all_of<effect::Notice>(out).size() == 1);
  // A second barrier needs rank 0 only now.
  out = server.receive(1, "cmd=barrier_in\n");
  CHECK(all_of<effect::Contribute>(out).size() == 1);
  // A release that does not decode fails the barrier.
  out = server.fence_done(3, true, "\x05", "");
  CHECK(sent_to(out, 1).rfind("cmd=barrier_out rc=-1", 0) == 0);
}

TEST_CASE("Bad input costs its connection only, with an answer naming the problem") {
  Server server;
  server.add_job(two_local());
  server.open(1, 3, 0, 0);
  server.open(2, 3, 1, 0);
  // Before init.
  Outbox out = server.receive(1, "cmd=get_maxes\n");
  CHECK(sent_to(out, 1) == "cmd=get_maxes_result rc=-1 msg=cmd=init_must_come_first\n");
  // An unknown command: rc=-1 and a log line; the connection stays.
  out = server.receive(1,
                       "cmd=init pmi_version=1 pmi_subversion=1\ncmd=frobnicate x=1\n"
                       "cmd=get_appnum\n");
  CHECK(sent_to(out, 1).find("cmd=frobnicate_result rc=-1 msg=unknown_command_frobnicate\n") !=
        std::string::npos);
  CHECK(sent_to(out, 1).find("cmd=appnum rc=0 appnum=0\n") != std::string::npos);
  REQUIRE(all_of<effect::Notice>(out).size() == 1);
  CHECK(all_of<effect::Notice>(out)[0].text.find("frobnicate") != std::string::npos);
  // Garbage: an error answer, a log line, and the connection closes.
  out = server.receive(2, "this is not pmi\n");
  CHECK(sent_to(out, 2).rfind("cmd=error rc=-1 msg=", 0) == 0);
  REQUIRE(all_of<effect::Close>(out).size() == 1);
  CHECK(all_of<effect::Notice>(out).size() == 1);
  CHECK(server.receive(2, "cmd=init pmi_version=1\n").empty());  // nothing more is read
  // Another job's KVS, oversized keys and values, a rank claiming another's number.
  out = server.receive(
      1,
      "cmd=put kvsname=other key=a value=b\ncmd=put kvsname=grove.3 key=" + std::string(65, 'k') +
          " value=b\ncmd=put kvsname=grove.3 key=a value=" + std::string(961, 'v') + "\n");
  CHECK(sent_to(out, 1) ==
        "cmd=put_result rc=-1 msg=kvsname_other_is_not_this_job's_(grove.3)\n"
        "cmd=put_result rc=-1 msg=a_key_of_65_bytes_(1_to_64)\n"
        "cmd=put_result rc=-1 msg=a_value_of_961_bytes_(at_most_960)\n");
  server.open(3, 3, 1, 0);
  out = server.receive(
      3, "cmd=init pmi_version=2 pmi_subversion=0\n" + v2("fullinit", {{"pmirank", "0"}}));
  CHECK(sent_to(out, 3).find("errmsg=this connection is rank 1's, not 0;") != std::string::npos);
  // An abort is the job's, with the rank's code.
  out = server.receive(1, "cmd=abort exitcode=7\n");
  auto aborts = all_of<effect::Abort>(out);
  REQUIRE(aborts.size() == 1);
  CHECK(aborts[0].rank == 0);
  CHECK(aborts[0].code == 7);
}

TEST_CASE("A spawn of several programs is one request, answered once after the last") {
  Server server;
  server.add_job(two_local());
  server.open(1, 3, 0, 0);
  server.receive(1, "cmd=init pmi_version=1 pmi_subversion=1\n");
  Outbox out = server.receive(1,
                              "mcmd=spawn\nnprocs=2\nexecname=/bin/a\ntotspawns=2\n"
                              "spawnssofar=1\nargcnt=1\narg1=x\npreput_num=1\n"
                              "preput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0$\n"
                              "info_num=0\nendcmd\n");
  CHECK(out.empty());
  out = server.receive(1,
                       "mcmd=spawn\nnprocs=1\nexecname=/bin/b\ntotspawns=2\n"
                       "spawnssofar=2\nargcnt=0\nendcmd\n");
  auto spawns = all_of<effect::Spawn>(out);
  REQUIRE(spawns.size() == 1);
  CHECK(spawns[0].rank == 0);
  REQUIRE(spawns[0].programs.size() == 2);
  CHECK(spawns[0].programs[0].argv == std::vector<std::string>{"/bin/a", "x"});
  CHECK(spawns[0].programs[0].np == 2);
  CHECK(spawns[0].programs[1].argv == std::vector<std::string>{"/bin/b"});
  CHECK(spawns[0].preput == Pairs{{"PARENT_ROOT_PORT_NAME", "tag#0$"}});
  CHECK(sent_to(out, 1).empty());
  // A second spawn while one is under way is refused; the first is answered once.
  out = server.receive(1, "mcmd=spawn\nnprocs=1\nexecname=/bin/c\nendcmd\n");
  CHECK(sent_to(out, 1).rfind("cmd=spawn_result rc=-1 msg=a_spawn_of_this_rank", 0) == 0);
  CHECK(sent_to(server.spawn_done(1, true, "grove.4"), 1) == "cmd=spawn_result rc=0\n");
  CHECK(server.spawn_done(1, true, "grove.4").empty());
  // The new job's ranks find what was put for them.
  JobFacts child = two_local();
  child.job = 4;
  child.kvsname = "grove.4";
  child.spawner = "grove.3";
  child.preput = spawns[0].preput;
  server.add_job(child);
  server.open(2, 4, 0, 0);
  out = server.receive(2,
                       "cmd=init pmi_version=1 pmi_subversion=1\n"
                       "cmd=get kvsname=grove.4 key=PARENT_ROOT_PORT_NAME\n");
  CHECK(sent_to(out, 2).find("value=tag#0$\n") != std::string::npos);
  // PMI-2: one command, answered with the new job's id.
  server.open(3, 3, 1, 0);
  out = server.receive(3, "cmd=init pmi_version=2 pmi_subversion=0\n" + v2("fullinit") +
                              v2("spawn", {{"thrid", "t"},
                                           {"ncmds", "1"},
                                           {"preputcount", "1"},
                                           {"ppkey0", "k"},
                                           {"ppval0", "v;1"},
                                           {"subcmd", "/bin/d"},
                                           {"maxprocs", "3"},
                                           {"argc", "1"},
                                           {"argv0", "y"},
                                           {"infokeycount", "0"}}));
  spawns = all_of<effect::Spawn>(out);
  REQUIRE(spawns.size() == 1);
  CHECK(spawns[0].programs[0].argv == std::vector<std::string>{"/bin/d", "y"});
  CHECK(spawns[0].programs[0].np == 3);
  CHECK(spawns[0].preput == Pairs{{"k", "v;1"}});
  CHECK(sent_to(server.spawn_done(3, false, "no room"), 3) ==
        v2("spawn-response", {{"thrid", "t"}, {"rc", "-1"}, {"errmsg", "no room"}}));
}

TEST_CASE("--mpi pmi1 or pmi2 refuses the other protocol at init") {
  Server server;
  server.add_job(two_local(Accepts::v1));
  server.open(1, 3, 0, 0);
  Outbox out = server.receive(1, "cmd=init pmi_version=2 pmi_subversion=0\n");
  CHECK(sent_to(out, 1).rfind("cmd=response_to_init rc=-1 pmi_version=1", 0) == 0);
  CHECK(!server.owed_finalize(3, 0));
  Server v2_only;
  v2_only.add_job(two_local(Accepts::v2));
  v2_only.open(1, 3, 0, 0);
  out = v2_only.receive(1, "cmd=init pmi_version=1 pmi_subversion=1\n");
  CHECK(sent_to(out, 1).rfind("cmd=response_to_init rc=-1 pmi_version=2", 0) == 0);
}

TEST_CASE("A job's end: its ranks' further commands are answered with an error") {
  Server server;
  server.add_job(two_local());
  server.open(1, 3, 0, 0);
  server.receive(1, "cmd=init pmi_version=1 pmi_subversion=1\n");
  server.job_ended(3);
  Outbox out = server.receive(1, "cmd=barrier_in\n");
  CHECK(sent_to(out, 1) == "cmd=barrier_in_result rc=-1 msg=the_job_has_ended\n");
  CHECK(server.closed(1).empty());
  CHECK(server.connections() == 0);
}

TEST_CASE("Answers keep their thread ids, a failed spawn block answers once, aborts keep codes") {
  Server server;
  server.add_job(two_local());
  server.open(1, 3, 0, 0);
  server.open(2, 3, 1, 0);
  server.receive(1, "cmd=init pmi_version=2 pmi_subversion=0\n" + v2("fullinit"));
  server.receive(2, "cmd=init pmi_version=1 pmi_subversion=1\n");
  // A threaded PMI-2 client's kvs-fence is answered under its thrid.
  server.receive(1, v2("kvs-fence", {{"thrid", "0xabc"}}));
  server.receive(2, "cmd=barrier_in\n");
  Outbox out = server.fence_done(3, true, "", "");
  CHECK(sent_to(out, 1) == v2("kvs-fence-response", {{"thrid", "0xabc"}, {"rc", "0"}}));
  // A value PMI-1 cannot carry is refused to a PMI-1 rank, not sent broken.
  server.receive(1, v2("kvs-put", {{"key", "spaced"}, {"value", "a b"}}));
  out = server.receive(2, "cmd=get kvsname=grove.3 key=spaced\n");
  CHECK(sent_to(out, 2).rfind("cmd=get_result rc=-1 msg=the_value_of_spaced_holds", 0) == 0);
  // The first of two spawn blocks fails: one answer, after the second.
  out = server.receive(2,
                       "mcmd=spawn\nnprocs=0\nexecname=/bin/a\ntotspawns=2\nspawnssofar=1\n"
                       "endcmd\n");
  CHECK(sent_to(out, 2).empty());
  out = server.receive(2,
                       "mcmd=spawn\nnprocs=1\nexecname=/bin/b\ntotspawns=2\nspawnssofar=2\n"
                       "endcmd\n");
  CHECK(sent_to(out, 2) == "cmd=spawn_result rc=-1 msg=a_spawn_asks_for_no_processes\n");
  CHECK(all_of<effect::Spawn>(out).empty());
  // PMI-2 abort with MPICH 4.1's exitcode= and message=; PMI-1 with a message of words.
  out =
      server.receive(1, v2("abort", {{"isworld", "TRUE"}, {"exitcode", "7"}, {"message", "m;x"}}));
  auto aborts = all_of<effect::Abort>(out);
  REQUIRE(aborts.size() == 1);
  CHECK(aborts[0].code == 7);
  CHECK(aborts[0].message == "m;x");
  CHECK(aborts[0].call == "PMI2_Abort");
  CHECK(server.owed_finalize(3, 0) == "PMI2_Finalize");
  out = server.receive(2, "cmd=abort exitcode=3 message=called MPI_Abort\n");
  aborts = all_of<effect::Abort>(out);
  REQUIRE(aborts.size() == 1);
  CHECK(aborts[0].message == "called MPI_Abort");
}
