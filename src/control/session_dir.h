// Session directories. Every DVM lives in ${TMPDIR:-/tmp}/grove-<uid>/dvm-<pid>
// (mode 0700): the controller's Unix socket for the CLI, dvm.json describing
// the DVM, and one daemon-<vpid> directory per daemon. Nothing else may read
// it, so the socket needs no further authentication. Two DVMs on one host
// have different directories and never interfere.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace grove {

// ${TMPDIR:-/tmp}/grove-<uid>, created 0700 if missing; refused if it exists
// but is not a directory owned by us with no access for others.
Result<std::string> session_base();

struct DvmInfo {
  std::string directory;
  int pid = 0;
  std::string socket_path;
  // Started by `grove run` for its own job, and stopped with it: no other
  // `grove run` may pick it by default (its job would end with the DVM).
  bool one_job = false;
};

// Creates <base>/dvm-<pid> (0700), first removing the directories of
// controllers that are gone (a crashed or killed DVM's socket and files).
// A one-job DVM's directory says so (a file `one-job`) before its socket
// exists, so that no command ever sees it without the mark.
Result<DvmInfo> create_dvm_directory(int controller_pid, bool one_job = false);
// A daemon started on another host (no DVM directory of the controller's
// there): <base>/groved-<pid>-XXXXXX (0700), after removing those of
// daemons that ended without removing theirs.
Result<std::string> create_own_daemon_directory();
// Creates <dvm>/daemon-<vpid> (0700).
Result<std::string> create_daemon_directory(const std::string& dvm_directory, unsigned vpid);
// Removes a directory tree; returns an Error naming what could not be removed.
Status remove_tree(const std::string& path);
// A DVM's session directory, its socket first: without the socket the DVM
// is not running to others (running_dvms), so none sees it half removed
// (say, a one-job DVM whose mark is gone taken for a shared one).
Status remove_dvm_directory(const DvmInfo& dvm);

// The DVMs whose controller is still alive. Directories of dead controllers
// are not listed (the next `grove start` removes them).
std::vector<DvmInfo> running_dvms();
// Picks the DVM a command should talk to: `selector` is a pid or a directory;
// empty means "the only one running" (an error lists them if there are
// several), where one-job DVMs count only if no other runs.
Result<DvmInfo> select_dvm(const std::string& selector);
// The running DVMs that are not one-job DVMs.
std::vector<DvmInfo> shared_dvms();

}  // namespace grove
