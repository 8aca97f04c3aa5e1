// A daemon that dies of a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT) first writes its flight recording, so the history that led to
// the crash survives it: DIR/crash-daemon-V-PID/daemon-V.flight, which
// `grove sim --replay` reads (docs/simulator.md, "Automatic dumps"). The
// handler allocates nothing and takes no lock (FlightRecorder::
// write_after_crash: write(2) and CRC arithmetic), runs on its own stack
// (a stack overflow is a SIGSEGV too), and then dies of the signal as the
// daemon would have (a core dump where one is made). A second fault inside
// it ends the process at once (the handler is reset as it starts).
#pragma once

#include <string>

#include "grpcomm/flight_recorder.h"

#if defined(__SANITIZE_ADDRESS__)
#define GROVE_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GROVE_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef GROVE_ADDRESS_SANITIZER
#define GROVE_ADDRESS_SANITIZER 0
#endif

namespace grove {

// Arms the handler for this process's one recorder (a later call replaces
// the earlier). `dir`: where crash dumps go (grpcomm_flight_dump_dir);
// `who`: this daemon in the line the handler writes to stderr. Nothing is
// armed when the recorder is off, `dir` is empty, or under AddressSanitizer
// (its own report of the fault is worth more there).
void arm_fatal_signal_dump(const FlightRecorder& recorder, const std::string& dir, Vpid self,
                           const std::string& who);

// The recorder goes: a fatal signal from now on writes nothing.
void disarm_fatal_signal_dump(const FlightRecorder& recorder);

// Where arm_fatal_signal_dump() writes this process's recording.
std::string crash_dump_dir(const std::string& dir, Vpid self, int pid);

}  // namespace grove
