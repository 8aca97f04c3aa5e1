// A main for a fuzz target without libFuzzer: every build links each target
// with it, so the targets always compile and their seed corpora run as a
// test (also under the sanitizers). It feeds LLVMFuzzerTestOneInput
//   - every file named on the command line (a directory: every file in it),
//   - a few inputs every target must survive (empty, each single byte, runs
//     of 0x00 and 0xff),
//   - and --mutations N variants of each seed (flipped bits, changed bytes,
//     cut or repeated tails), from a fixed PRNG seed so a failure replays.
// A crash or abort in the target fails the test; the input that did it is
// written to the --crash-file (default ./replay-crash) as it dies. Real fuzzing is -Dfuzzing=true
// (clang, libFuzzer); see docs/testing.md.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Input = std::vector<std::uint8_t>;

std::string g_crash_path = "replay-crash";
const Input* g_current = nullptr;

// On a crash signal, the input that caused it goes to the crash file (with
// async-signal-safe calls only), then the signal takes its course.
void save_current(int signal) {
  if (g_current != nullptr) {
    int fd = ::open(g_crash_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, g_current->data(), g_current->size());
      (void)ignored;
      ::close(fd);
    }
  }
  ::raise(signal);  // the handler was installed with SA_RESETHAND
}

void install_crash_handlers() {
  struct sigaction action {};
  action.sa_handler = save_current;
  action.sa_flags = SA_RESETHAND;
  for (int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    ::sigaction(signal, &action, nullptr);
}

void run(const Input& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
}

Input read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Input(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Input mutate(const Input& seed, std::mt19937_64& random) {
  Input out = seed;
  const int edits = 1 + static_cast<int>(random() % 4);
  for (int i = 0; i < edits; ++i) {
    switch (random() % 5) {
      case 0:  // flip a bit
        if (!out.empty())
          out[random() % out.size()] ^= static_cast<std::uint8_t>(1u << (random() % 8));
        break;
      case 1:  // an interesting byte
        if (!out.empty()) {
          static constexpr std::uint8_t kBytes[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff};
          out[random() % out.size()] = kBytes[random() % std::size(kBytes)];
        }
        break;
      case 2:  // cut the tail
        if (!out.empty()) out.resize(random() % out.size());
        break;
      case 3: {  // repeat a slice at the end
        if (out.empty()) break;
        const std::size_t from = random() % out.size();
        const std::size_t length = 1 + random() % (out.size() - from);
        out.insert(out.end(), out.begin() + static_cast<std::ptrdiff_t>(from),
                   out.begin() + static_cast<std::ptrdiff_t>(from + length));
        break;
      }
      default:  // a random byte
        if (!out.empty()) out[random() % out.size()] = static_cast<std::uint8_t>(random());
        break;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Input> seeds;
  long mutations = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mutations" && i + 1 < argc) {
      mutations = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--crash-file" && i + 1 < argc) {
      g_crash_path = argv[++i];
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) seeds.push_back(read_file(entry.path()));
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      seeds.push_back(read_file(arg));
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", arg.c_str());
      return 2;
    }
  }

  install_crash_handlers();
  std::size_t runs = 0;
  run(Input{});
  ++runs;
  for (int byte = 0; byte < 256; ++byte, ++runs)
    run(Input{static_cast<std::uint8_t>(byte)});
  for (std::size_t length : {8, 64, 1024}) {
    run(Input(length, 0x00));
    run(Input(length, 0xff));
    runs += 2;
  }
  std::mt19937_64 random(0x67726f7665);  // fixed: a failing mutation replays
  for (const Input& seed : seeds) {
    run(seed);
    ++runs;
    for (long i = 0; i < mutations; ++i, ++runs)
      run(mutate(seed, random));
  }
  std::printf("replay: %zu inputs (%zu seeds, %ld mutations each), no failure\n", runs,
              seeds.size(), mutations);
  return 0;
}
