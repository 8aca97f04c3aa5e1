// What CPUs processes and their threads may run on, for tests of daemon binding.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace grove::test {

// Every thread of a process (empty if it is gone).
std::vector<pid_t> threads_of(int pid);
// A thread's (or, with 0, this thread's) CPU set; all clear if it cannot be read.
cpu_set_t affinity_of(pid_t tid);
// The n-th CPU of a set, round robin; -1 for an empty set.
int nth_cpu(const cpu_set_t& set, int n);
// This process's "Cpus_allowed_list:\t..." line of /proc/self/status.
std::string own_cpus_allowed_line();

}  // namespace grove::test
