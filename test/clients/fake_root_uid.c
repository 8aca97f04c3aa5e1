/* fake_root_uid: an LD_PRELOAD shim that makes a process claim uid and gid 0.
 * The multinode impostor test runs a PMIx client as another user under it:
 * libpmix's own check compares the uid the client claims with the rank's, so
 * this is what an attacker would do to get past it. */
#include <sys/types.h>
#include <unistd.h>

uid_t getuid(void) {
  return 0;
}
uid_t geteuid(void) {
  return 0;
}
gid_t getgid(void) {
  return 0;
}
gid_t getegid(void) {
  return 0;
}
