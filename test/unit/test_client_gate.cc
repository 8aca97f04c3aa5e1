// ClientGate: a connection is admitted as a rank only from the process
// started as that rank; a stranger's connection is refused and cut. Real
// loopback sockets, a real child process; no PMIx.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>

#include "pmix/client_gate.h"
#include "pmix/socket_owner.h"
#include "support/loopback.h"

using namespace grove;
using grove::test::connect_loopback;
using grove::test::listen_loopback;

TEST_CASE("/proc/net/tcp lines parse into endpoints, uid and inode", "[client_gate]") {
  const std::string text =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
      "inode\n"
      "   0: 0100007F:8AAD 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000  1000        0 "
      "48213 1 0000000000000000 20 4 30 10 -1\n"
      "   1: garbage\n"
      "   2: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "
      "1489 1 0000000000000000 100 0 0 10 0\n";
  auto entries = parse_proc_net_tcp(text);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].local == "0100007F:8AAD");
  CHECK(entries[0].remote == "0100007F:D2F0");
  CHECK(entries[0].uid == 1000);
  CHECK(entries[0].inode == 48213);
  CHECK(entries[1].local == "00000000:07E8");
  CHECK(entries[0].state == 1);     // established
  CHECK(entries[1].state == 0x0A);  // listening
}

TEST_CASE("a connection to the server is unanswered until its server end is admitted",
          "[client_gate]") {
  auto entry = [](std::string local, std::string remote, std::uint64_t inode, unsigned state) {
    TcpSocketEntry e;
    e.local = std::move(local);
    e.remote = std::move(remote);
    e.inode = inode;
    e.state = state;
    return e;
  };
  const std::set<std::uint16_t> ports{0x1F90};
  // The client end (inode 7) and its server end (inode 9); the listener.
  std::vector<TcpSocketEntry> table{entry("0100007F:C000", "0100007F:1F90", 7, 1),
                                    entry("0100007F:1F90", "0100007F:C000", 9, 1),
                                    entry("0100007F:1F90", "00000000:0000", 3, 0x0A)};
  CHECK(unanswered_connection(table, {7}, ports, {}));
  CHECK_FALSE(unanswered_connection(table, {7}, ports, {9}));
  // Not this process tree's socket, or not to the server's port.
  CHECK_FALSE(unanswered_connection(table, {8}, ports, {}));
  CHECK_FALSE(unanswered_connection(table, {7}, {0x1F91}, {}));
  // Still in the listen backlog (the server end has no inode yet).
  table[1].inode = 0;
  CHECK(unanswered_connection(table, {7}, ports, {0}));
  // Being made (SYN sent): waits too. Closing (the server cut it): does not.
  table[0].state = 2;
  CHECK(unanswered_connection(table, {7}, ports, {}));
  table[0].state = 8;  // CLOSE_WAIT
  CHECK_FALSE(unanswered_connection(table, {7}, ports, {}));
}

TEST_CASE("the gate admits the started process's connection once and cuts a stranger's",
          "[client_gate]") {
  std::uint16_t port = 0;
  int listener = listen_loopback(port);
  REQUIRE(listener >= 0);
  ClientGate gate;
  gate.add_listen_port(port);

  // The "rank": a child that connects and waits for the word to leave.
  int ready[2], leave[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(leave) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int fd = connect_loopback(port);
    char byte = fd >= 0 ? 1 : 0;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    if (read(leave[0], &byte, 1) < 0) _exit(1);
    _exit(0);
  }
  gate.expect("job", 0, child);
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  REQUIRE(byte == 1);
  // Connected, not accepted yet: its handshake waits for an answer.
  CHECK(gate.handshakes_pending({child}) == std::set<pid_t>{child});
  int rank_server_end = accept(listener, nullptr, nullptr);
  REQUIRE(rank_server_end >= 0);
  CHECK(gate.handshakes_pending({child}) == std::set<pid_t>{child});

  // Not a rank started here, and no connection from the child yet admitted.
  CHECK(gate.admit("job", 1).has_value());
  CHECK_FALSE(gate.admit("job", 0).has_value());
  // Admitted (in PMIx 4.2, after the server answered it): nothing waits.
  CHECK(gate.handshakes_pending({child}).empty());
  CHECK(gate.handshakes_pending({}).empty());
  // The same connection does not count twice.
  CHECK(gate.admit("job", 0).has_value());

  // A stranger (this test process, not the child) claims rank 0: refused,
  // and its server end now reads end-of-file.
  int stranger = connect_loopback(port);
  REQUIRE(stranger >= 0);
  int stranger_server_end = accept(listener, nullptr, nullptr);
  REQUIRE(stranger_server_end >= 0);
  REQUIRE(write(stranger, "abort", 5) == 5);
  auto why = gate.admit("job", 0);
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("pid " + std::to_string(child)));
  char buffer[16];
  CHECK(read(stranger_server_end, buffer, sizeof buffer) == 0);
  // The admitted rank's connection is untouched.
  REQUIRE(write(rank_server_end, "x", 1) == 1);

  // A stranger that half-closes its end after sending (its server end then
  // sits in CLOSE_WAIT, not ESTABLISHED) is cut all the same.
  int half_closed = connect_loopback(port);
  REQUIRE(half_closed >= 0);
  int half_closed_server_end = accept(listener, nullptr, nullptr);
  REQUIRE(half_closed_server_end >= 0);
  REQUIRE(write(half_closed, "abort", 5) == 5);
  REQUIRE(shutdown(half_closed, SHUT_WR) == 0);
  CHECK(gate.admit("job", 0).has_value());
  CHECK(read(half_closed_server_end, buffer, sizeof buffer) == 0);
  close(half_closed);
  close(half_closed_server_end);

  gate.forget("job", 0);
  CHECK(gate.admit("job", 0).has_value());
  gate.expect("job", 0, child);
  gate.forget_job("job");
  CHECK(gate.admit("job", 0).has_value());

  byte = 0;
  REQUIRE(write(leave[1], &byte, 1) == 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  for (int fd : {listener, rank_server_end, stranger, stranger_server_end, ready[0], ready[1],
                 leave[0], leave[1]})
    close(fd);
}

TEST_CASE("a refused connection the server has answered is silenced, not closed", "[client_gate]") {
  // libpmix 4.2 has made an answered connection one of its clients; seeing
  // it close would make it forget the real rank. It must instead never
  // deliver a byte nor end, while its client is cut off; a connection whose
  // handshake is unread still reads end-of-file.
  std::uint16_t port = 0;
  int listener = listen_loopback(port);
  REQUIRE(listener >= 0);
  ClientGate gate;
  gate.add_listen_port(port);
  int answered = connect_loopback(port);
  int unread = connect_loopback(port);
  REQUIRE(answered >= 0);
  REQUIRE(unread >= 0);
  int answered_server_end = accept(listener, nullptr, nullptr);
  int unread_server_end = accept(listener, nullptr, nullptr);
  REQUIRE(answered_server_end >= 0);
  REQUIRE(unread_server_end >= 0);
  REQUIRE(write(answered, "hello", 5) == 5);
  REQUIRE(write(unread, "hello", 5) == 5);
  char buffer[16];
  REQUIRE(read(answered_server_end, buffer, 5) == 5);
  REQUIRE(write(answered_server_end, "answer!!", 8) == 8);  // the handshake's reply

  CHECK(gate.admit("job", 0).has_value());  // no process was started as rank 0

  sockaddr_storage local{};
  socklen_t length = sizeof local;
  REQUIRE(getsockname(answered_server_end, reinterpret_cast<sockaddr*>(&local), &length) == 0);
  CHECK(local.ss_family == AF_UNIX);
  CHECK(recv(answered_server_end, buffer, sizeof buffer, MSG_DONTWAIT) == -1);
  CHECK(errno == EAGAIN);
  // Writes go nowhere, without an error.
  CHECK(send(answered_server_end, "event", 5, MSG_DONTWAIT | MSG_NOSIGNAL) == 5);
  // Its client read the reply, then the end.
  CHECK(read(answered, buffer, sizeof buffer) == 8);
  CHECK(read(answered, buffer, sizeof buffer) == 0);
  CHECK(read(unread_server_end, buffer, sizeof buffer) == 0);

  // A second one joins the same silent socket.
  int again = connect_loopback(port);
  REQUIRE(again >= 0);
  int again_server_end = accept(listener, nullptr, nullptr);
  REQUIRE(again_server_end >= 0);
  REQUIRE(write(again_server_end, "answer!!", 8) == 8);
  CHECK(gate.admit("job", 0).has_value());
  CHECK(recv(again_server_end, buffer, sizeof buffer, MSG_DONTWAIT) == -1);
  CHECK(errno == EAGAIN);
  for (int fd : {listener, answered, unread, answered_server_end, unread_server_end, again,
                 again_server_end})
    close(fd);
}

TEST_CASE("another user's connection is cut at the next admission, whatever it claims",
          "[client_gate]") {
  if (geteuid() != 0) {
    WARN("skipped: connecting as another user needs root");
    return;
  }
  std::uint16_t port = 0;
  int listener = listen_loopback(port);
  REQUIRE(listener >= 0);
  ClientGate gate;
  gate.add_listen_port(port);
  int ready[2], leave[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(leave) == 0);
  pid_t stranger = fork();
  REQUIRE(stranger >= 0);
  if (stranger == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    int fd = connect_loopback(port);
    char byte = fd >= 0 ? 1 : 0;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    if (read(leave[0], &byte, 1) < 0) _exit(1);
    _exit(0);
  }
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  REQUIRE(byte == 1);
  int server_end = accept(listener, nullptr, nullptr);
  REQUIRE(server_end >= 0);
  // It even claims a rank whose process is expected: still cut.
  gate.expect("job", 0, stranger);
  CHECK(gate.admit("job", 0).has_value());
  char buffer[8];
  CHECK(read(server_end, buffer, sizeof buffer) == 0);
  REQUIRE(write(leave[1], &byte, 1) == 1);
  int status = 0;
  REQUIRE(waitpid(stranger, &status, 0) == stranger);
  for (int fd : {listener, server_end, ready[0], ready[1], leave[0], leave[1]})
    close(fd);
}

TEST_CASE("the kernel names the socket at the other end of a loopback connection",
          "[client_gate]") {
  std::uint16_t port = 0;
  int listener = listen_loopback(port);
  REQUIRE(listener >= 0);
  int client = connect_loopback(port);
  REQUIRE(client >= 0);
  int server = accept(listener, nullptr, nullptr);
  REQUIRE(server >= 0);
  sockaddr_storage local{}, peer{};
  socklen_t length = sizeof local;
  REQUIRE(getsockname(server, reinterpret_cast<sockaddr*>(&local), &length) == 0);
  length = sizeof peer;
  REQUIRE(getpeername(server, reinterpret_cast<sockaddr*>(&peer), &length) == 0);
  struct stat held {};
  REQUIRE(fstat(client, &held) == 0);
  auto end = find_tcp_socket(peer, local);  // the client's end: local = its address
  REQUIRE(end);
  CHECK(end->inode == held.st_ino);
  CHECK(end->uid == geteuid());
  // As /proc/net/tcp prints it: the address's raw 32 bits, then the port.
  char expected[16];
  std::snprintf(expected, sizeof expected, "0100007F:%04X", static_cast<unsigned>(port));
  CHECK(proc_net_endpoint(local) == expected);
  close(client);
  close(server);
  close(listener);
  // Both ends closed: nothing holds the client end any more.
  CHECK_FALSE(find_tcp_socket(peer, local));
}
