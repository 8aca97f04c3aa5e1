#include "daemon/fatal_signal_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <vector>

#include "daemon/flight_dump.h"

namespace grove {
namespace {

// Everything the handler needs, made before any signal: it reads these only.
struct CrashPlan {
  const FlightRecorder* recorder = nullptr;
  long thread = 0;  // the recorder's (the loop's): the only one it is safe to write from
  std::vector<std::string> parents;  // the directory and those above it, outermost first
  std::string crash;                 // DIR/crash-daemon-V-PID
  std::string file;                  // crash/daemon-V.flight
  std::string written;               // the line for stderr once written
  std::string failed;                // ... once it could not be
  std::string elsewhere;             // ... when the signal came on another thread
};
std::atomic<CrashPlan*> plan{nullptr};
std::vector<char> alternate_stack;

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

void say(const std::string& line) {
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

bool write_piece(void* context, const std::byte* data, std::size_t size) {
  const int fd = *static_cast<const int*>(context);
  while (size > 0) {
    const ssize_t wrote = ::write(fd, data, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    data += wrote;
    size -= static_cast<std::size_t>(wrote);
  }
  return true;
}

void write_recording(const CrashPlan& armed) {
  for (const std::string& parent : armed.parents)
    ::mkdir(parent.c_str(), 0700);
  ::mkdir(armed.crash.c_str(), 0700);
  int fd = ::open(armed.file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const bool wrote = fd >= 0 && armed.recorder->write_after_crash(write_piece, &fd);
  if (fd >= 0) ::close(fd);
  if (!wrote && fd >= 0) ::unlink(armed.file.c_str());
  say(wrote ? armed.written : armed.failed);
}

void on_fatal_signal(int signal) {
  // SA_RESETHAND put the default action back: a fault in here, or the
  // raise below, ends the process.
  const int saved_errno = errno;
  if (const CrashPlan* armed = plan.load(); armed != nullptr) {
    // Another thread's fault: the loop's thread may be keeping an input
    // this very moment, its chunks half moved.
    if (::syscall(SYS_gettid) == armed->thread) {
      write_recording(*armed);
    } else {
      say(armed->elsewhere);
    }
  }
  errno = saved_errno;
  ::raise(signal);
}

}  // namespace

void disarm_fatal_signal_dump(const FlightRecorder& recorder) {
  CrashPlan* armed = plan.load();
  if (armed != nullptr && armed->recorder == &recorder) plan.store(nullptr);
}

std::string crash_dump_dir(const std::string& dir, Vpid self, int pid) {
  return dir + "/crash-daemon-" + std::to_string(self) + "-" + std::to_string(pid);
}

void arm_fatal_signal_dump(const FlightRecorder& recorder, const std::string& dir, Vpid self,
                           const std::string& who) {
#if GROVE_ADDRESS_SANITIZER
  (void)recorder, (void)dir, (void)self, (void)who;
  return;
#else
  if (!recorder.on() || dir.empty()) return;
  auto* next = new CrashPlan;
  next->recorder = &recorder;
  next->thread = ::syscall(SYS_gettid);
  // Another host may lack the directories above it: mkdir -p, its list
  // made here (the handler only walks it).
  for (std::size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1))
    next->parents.push_back(dir.substr(0, slash));
  next->parents.push_back(dir);
  next->crash = crash_dump_dir(dir, self, static_cast<int>(::getpid()));
  next->file = next->crash + "/" + flight_file_name(self);
  next->written = who + ": a fatal signal: flight recording written to " + next->file + "\n";
  next->failed = who + ": a fatal signal: no flight recording written (" + next->file + ")\n";
  next->elsewhere =
      who + ": a fatal signal on a thread other than the loop's: no flight recording written\n";
  // An old plan stays: a handler may be reading it on another thread.
  plan.store(next);
  if (alternate_stack.empty()) {
    alternate_stack.resize(std::max<std::size_t>(SIGSTKSZ, 64 * 1024));
    stack_t stack{};
    stack.ss_sp = alternate_stack.data();
    stack.ss_size = alternate_stack.size();
    ::sigaltstack(&stack, nullptr);
  }
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
  for (int signal : kFatalSignals)
    ::sigaction(signal, &action, nullptr);
#endif
}

}  // namespace grove
