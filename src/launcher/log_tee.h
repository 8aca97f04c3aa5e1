// A background DVM's log copied to the terminal as well (--verbose-to-terminal):
// a small process of its own copies everything written to a pipe into the
// log file and onto the terminal, so the controller and every daemon it
// starts (which inherit the pipe as stdout and stderr) need not know.
#pragma once

namespace grove {

// Forks the copier; returns the pipe's write end for the caller to make its
// stdout and stderr, or -1 (nothing started) if a pipe or fork failed. The
// copier ends when every writer has closed the pipe; a terminal that goes
// away stops the copies to it, never those to the log.
int start_log_tee(int log_fd, int terminal_fd);

}  // namespace grove
