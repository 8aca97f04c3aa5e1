// Binding a daemon to one CPU when several daemons of a DVM share a host,
// and giving what it starts the CPUs it had before.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "util/result.h"

namespace grove {

// Binds every thread of this process to one CPU, the `slot`-th (round robin)
// of those it may run on now, and remembers that set for
// restore_cpu_affinity(). A process allowed a single CPU is left as it is.
// Returns the CPU it runs on, or why it could not bind.
Result<int> bind_to_cpu_slot(unsigned slot);

// This machine's kernel boot id (/proc/sys/kernel/random/boot_id): shared by
// every network namespace and container on it, different on another machine.
// Empty if it cannot be read.
std::string kernel_boot_id();

// In a forked child before exec: the CPU set the process had before
// bind_to_cpu_slot() (nothing if it never bound). Async-signal-safe.
void restore_cpu_affinity();
// The same for a child that has not exec'd its program yet, from the parent;
// returns an errno, 0 when done or nothing to undo.
int restore_cpu_affinity_of(pid_t child);

// The CPUs this process was given (before bind_to_cpu_slot(), if it bound):
// what the ranks it starts may run on.
std::vector<int> given_cpus();

}  // namespace grove
