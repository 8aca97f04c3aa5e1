// `grove bench --plot FILE.png`: the spans of a benchmark drawn by gnuplot
// (Debian's gnuplot-nox), one point per collective with its median and p99.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace grove {

Status plot_spans(const std::vector<double>& spans_us, double median_us, double p99_us,
                  const std::string& title, const std::string& png_path);

}  // namespace grove
