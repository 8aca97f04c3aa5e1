#include "launcher/bench_plot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "os/child_process.h"
#include "util/text.h"

namespace grove {

Status plot_spans(const std::vector<double>& spans_us, double median_us, double p99_us,
                  const std::string& title, const std::string& png_path) {
  const std::optional<std::string> program = find_on_path("gnuplot");
  if (!program) return Error{"--plot needs gnuplot (Debian: apt-get install gnuplot-nox)"};
  // A newline would end a gnuplot string and start a command of its own.
  if (png_path.find_first_of("\n\r") != std::string::npos) {
    return Error{"--plot: the file name contains a line break"};
  }
  const std::filesystem::path target = std::filesystem::absolute(png_path);
  // Checked here: a gnuplot that cannot open its output draws on stdout.
  if (std::FILE* probe = std::fopen(target.c_str(), "w"); probe != nullptr) {
    std::fclose(probe);
  } else {
    return Error{"--plot: cannot write " + target.string() + " (" + std::strerror(errno) + ")"};
  }
  // gnuplot reads its script on stdin; what it prints is dropped.
  int script[2];
  if (::pipe2(script, O_CLOEXEC) != 0) return Error{"--plot: cannot run gnuplot"};
  const std::vector<std::string> argv{*program};
  ChildSpec child;
  child.argv = argv;
  child.fds = {ChildFd::copy(STDIN_FILENO, script[0]), ChildFd::dev_null(STDOUT_FILENO, O_WRONLY)};
  auto started = start_child(child);
  ::close(script[0]);
  std::FILE* gnuplot = started ? ::fdopen(script[1], "w") : nullptr;
  if (gnuplot == nullptr) {
    ::close(script[1]);
    if (started) wait_exit_status(started->pid);
    return Error{"--plot: cannot run gnuplot"};
  }
  // Quotes cannot end a gnuplot string early: the title and path are ours
  // or the user's own file name, escaped for a double-quoted string.
  auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (char c : text)
      out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
  };
  std::fprintf(gnuplot,
               "set terminal png size 900,500\n"
               "set output %s\n"
               "set title %s\n"
               "set xlabel 'collective'\n"
               "set ylabel 'started to completed (us)'\n"
               "set key top right\n"
               "$spans << EOD\n",
               quoted(target.string()).c_str(), quoted(title).c_str());
  for (std::size_t at = 0; at < spans_us.size(); ++at)
    std::fprintf(gnuplot, "%zu %.3f\n", at + 1, spans_us[at]);
  std::fprintf(gnuplot,
               "EOD\n"
               "plot $spans using 1:2 with points pt 7 ps 0.5 title 'span', "
               "%.3f with lines lw 2 title 'median %.1f us', "
               "%.3f with lines dt 2 title 'p99 %.1f us'\n",
               median_us, median_us, p99_us, p99_us);
  std::fclose(gnuplot);  // the script's end
  const int status = wait_exit_status(started->pid);
  std::error_code error;
  if (status != 0 || std::filesystem::file_size(target, error) == 0 || error) {
    return Error{"--plot: gnuplot could not write " + target.string()};
  }
  return ok_status();
}

}  // namespace grove
