// grove model: the seed's release cost model, minimised over the radix; with
// --fence, a whole fence priced by shape (the two trees against Bruck).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <utility>

#include "grpcomm/fence_cost_model.h"
#include "grpcomm/radix_cost_model.h"
#include "launcher/commands.h"
#include "rml/bruck_schedule.h"
#include "util/text.h"

namespace grove {
namespace {

struct PayloadRow {
  std::string label;
  double bytes;
};

struct ModelOptions {
  std::vector<std::uint64_t> daemons;
  std::vector<std::string> payloads;
  double alpha_us = 100.0;
  double copy_us = 25.0;
  std::uint32_t threads = 8;
  double bandwidth_gbit = 10.0;
  std::uint64_t compare_radix = 64;
  bool json = false;
  // --fence: price whole fences by shape, the trees at these radices.
  bool fence = false;
  std::uint64_t radix = 64;
  std::uint64_t radix2 = 4;
};

// The seed's table: a barrier's 33-byte release, then 10 KB to 256 MB.
std::vector<PayloadRow> default_payloads() {
  return {{"barrier (33 B)", 33},
          {"10 KB", 10e3},
          {"100 KB", 100e3},
          {"10 MB", 10e6},
          {"256 MB", 256e6}};
}

struct Cell {
  std::uint64_t daemons;
  RadixChoice best;
  double compare_time_us;
  double ratio() const { return compare_time_us / best.time_us; }
};

nlohmann::json cell_json(const Cell& cell, const PayloadRow& row, std::uint64_t compare_radix) {
  return {{"daemons", cell.daemons},
          {"payload_bytes", row.bytes},
          {"payload", row.label},
          {"optimal_radix", cell.best.radix},
          {"optimal_time_us", cell.best.time_us},
          {"compare_radix", compare_radix},
          {"compare_time_us", cell.compare_time_us},
          {"compare_over_optimal", cell.ratio()}};
}

// Whether the model's constants make sense (the error printed if not).
bool check_model_constants(const ModelOptions& options) {
  if (options.threads == 0) {
    print_cli_error("--threads must be at least 1 (the model divides copies among t threads)");
    return false;
  }
  if (options.bandwidth_gbit <= 0 || options.alpha_us < 0 || options.copy_us < 0) {
    print_cli_error("--bandwidth must be positive; --alpha and --copy-cost must not be negative");
    return false;
  }
  if (options.compare_radix < 2) {
    print_cli_error("--compare-radix must be at least 2");
    return false;
  }
  return true;
}

// The table's columns, daemon counts; nullopt (the error printed) if one is
// too few for a tree.
std::optional<std::vector<std::uint64_t>> model_columns(const ModelOptions& options) {
  std::vector<std::uint64_t> columns = options.daemons;
  if (columns.empty()) columns = {128, 1024, 10000};
  for (std::uint64_t n : columns) {
    if (n < 2) {
      print_cli_error("--daemons " + std::to_string(n) + ": a tree needs at least 2 daemons");
      return std::nullopt;
    }
  }
  return columns;
}

// The table's rows, payloads; nullopt (the error printed) if one does not parse.
std::optional<std::vector<PayloadRow>> model_rows(const ModelOptions& options) {
  std::vector<PayloadRow> rows;
  for (const auto& text : options.payloads) {
    auto bytes = parse_size(text);
    if (!bytes) {
      print_cli_error("--payload '" + text + "': expected a byte count such as 33, 10KB or 16M");
      return std::nullopt;
    }
    rows.push_back({format_bytes(static_cast<double>(*bytes)), static_cast<double>(*bytes)});
  }
  if (rows.empty()) rows = default_payloads();
  return rows;
}

// The model evaluated for every payload (row) and daemon count (column).
struct ModelTable {
  std::vector<PayloadRow> rows;
  std::vector<std::uint64_t> columns;
  std::vector<std::vector<Cell>> cells;  // [row][column]
};

ModelTable evaluate_model(std::vector<PayloadRow> rows, std::vector<std::uint64_t> columns,
                          const CostConstants& constants, std::uint64_t compare_radix) {
  ModelTable table{std::move(rows), std::move(columns), {}};
  for (const auto& row : table.rows) {
    auto& cells = table.cells.emplace_back();
    for (std::uint64_t n : table.columns) {
      std::uint64_t radix = std::min(compare_radix, max_model_radix(n));
      cells.push_back({n, optimal_radix(n, row.bytes, constants),
                       release_time_us(n, radix, row.bytes, constants)});
    }
  }
  return table;
}

void print_model_json(const ModelTable& table, const CostConstants& constants,
                      std::uint64_t compare_radix) {
  nlohmann::json out;
  out["formula"] = "T(r) = ceil(log_r N) * (alpha + ceil(r/t)*c + r*M/B)";
  out["constants"] = {{"alpha_us", constants.alpha_us},
                      {"c_us", constants.copy_us},
                      {"t", constants.threads},
                      {"B_bytes_per_s", constants.bandwidth_bytes_per_s}};
  out["crossover_bytes"] = crossover_bytes(constants);
  out["cells"] = nlohmann::json::array();
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    for (const Cell& cell : table.cells[i]) {
      out["cells"].push_back(cell_json(cell, table.rows[i], compare_radix));
    }
  }
  std::cout << out.dump(2) << "\n";
}

// One line per payload: each column's cell, then the range of the ratios.
void print_model_rows(const ModelTable& table, std::uint64_t compare_radix) {
  std::printf("%-16s", "payload");
  for (std::uint64_t n : table.columns) {
    std::string header = "N = " + std::to_string(n);
    std::printf("%-28s", header.c_str());
  }
  std::printf("cost of r=%llu\n", static_cast<unsigned long long>(compare_radix));
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    std::printf("%-16s", table.rows[i].label.c_str());
    double low = table.cells[i].front().ratio();
    double high = low;
    for (const Cell& cell : table.cells[i]) {
      char text[64];
      std::snprintf(text, sizeof text, "r*=%llu  %.0f us  %.2fx",
                    static_cast<unsigned long long>(cell.best.radix), cell.best.time_us,
                    cell.ratio());
      std::printf("%-28s", text);
      low = std::min(low, cell.ratio());
      high = std::max(high, cell.ratio());
    }
    std::printf("%.2f - %.2fx\n", low, high);
  }
}

void print_model_text(const ModelTable& table, const CostConstants& constants,
                      const ModelOptions& options) {
  const double crossover = crossover_bytes(constants);
  std::printf(
      "T(r) = ceil(log_r N) * (alpha + ceil(r/t)*c + r*M/B), minimised over r in [2, N-1]\n");
  std::printf("alpha %g us, c %g us, t %u, B %g Gbit/s (%.4g bytes/s)\n", constants.alpha_us,
              constants.copy_us, constants.threads, options.bandwidth_gbit,
              constants.bandwidth_bytes_per_s);
  std::printf("crossover M* = B*c/t = %.0f bytes (%s)\n\n", crossover,
              format_bytes(crossover).c_str());
  std::printf("each cell: optimal radix r*, T(r*), and T(%llu)/T(r*)\n",
              static_cast<unsigned long long>(options.compare_radix));
  print_model_rows(table, options.compare_radix);
  // What to do with it: one N and one payload name one radix to set.
  if (table.rows.size() == 1 && table.columns.size() == 1) {
    const Cell& cell = table.cells[0][0];
    std::printf(
        "\nfor %llu daemons and %s releases: set rml_base_radix2=%llu "
        "(grove start --mca rml_base_radix2 %llu), with grpcomm_low_radix_release true (the "
        "default)\n",
        static_cast<unsigned long long>(cell.daemons), table.rows[0].label.c_str(),
        static_cast<unsigned long long>(cell.best.radix),
        static_cast<unsigned long long>(cell.best.radix));
  } else {
    std::printf("\ngive one -N and one -M to be told the rml_base_radix2 to set\n");
  }
}

// --fence: one fence's time by shape, each a line in the aggregate D.
struct FenceShapes {
  FenceCostLine flat;   // radix `radix` both ways
  FenceCostLine trees;  // radix `radix` up, `radix2` down
  FenceCostLine bruck;
};

FenceShapes fence_shapes(std::uint64_t daemons, const ModelOptions& options,
                         const CostConstants& constants) {
  return {tree_fence_cost(daemons, options.radix, options.radix, constants),
          tree_fence_cost(daemons, options.radix, options.radix2, constants),
          bruck_fence_cost(daemons, constants)};
}

std::string shape_winner(const FenceShapes& shapes, double bytes) {
  const double flat = shapes.flat.at(bytes);
  const double trees = shapes.trees.at(bytes);
  const double bruck = shapes.bruck.at(bytes);
  if (bruck < trees && bruck < flat) return "bruck";
  return trees <= flat ? "trees" : "flat";
}

std::string crossover_text(std::optional<double> bytes) {
  if (!bytes) return "never";
  if (*bytes == 0) return "always";
  return format_bytes(*bytes);
}

void print_fence_json(const ModelTable& table, const CostConstants& constants,
                      const ModelOptions& options) {
  nlohmann::json out;
  out["formula"] = {{"trees", "ceil(log_r1 N)*(alpha+c) + D/B + T_release(r2, M=D)"},
                    {"bruck", "ceil(log2 N)*(alpha+c) + (N-1)/N * D/B"}};
  out["constants"] = {{"alpha_us", constants.alpha_us},
                      {"c_us", constants.copy_us},
                      {"t", constants.threads},
                      {"B_bytes_per_s", constants.bandwidth_bytes_per_s}};
  out["radix"] = options.radix;
  out["radix2"] = options.radix2;
  out["cells"] = nlohmann::json::array();
  out["crossovers"] = nlohmann::json::array();
  for (std::uint64_t n : table.columns) {
    const FenceShapes shapes = fence_shapes(n, options, constants);
    const auto bruck_over_trees = wins_from(shapes.bruck, shapes.trees);
    out["crossovers"].push_back({{"daemons", n},
                                 {"bruck_rounds", bruck::rounds(n)},
                                 {"bruck_beats_trees_from_bytes",
                                  bruck_over_trees ? nlohmann::json(*bruck_over_trees) : nullptr}});
    for (const auto& row : table.rows) {
      out["cells"].push_back({{"daemons", n},
                              {"aggregate_bytes", row.bytes},
                              {"flat_us", shapes.flat.at(row.bytes)},
                              {"trees_us", shapes.trees.at(row.bytes)},
                              {"bruck_us", shapes.bruck.at(row.bytes)},
                              {"fastest", shape_winner(shapes, row.bytes)}});
    }
  }
  std::cout << out.dump(2) << "\n";
}

void print_fence_text(const ModelTable& table, const CostConstants& constants,
                      const ModelOptions& options) {
  std::printf("a fence of aggregate D (every contribution) among N daemons:\n");
  std::printf("  trees  ceil(log_r N)*(alpha+c) + D/B, then the release T(r2) with M = D\n");
  std::printf("  bruck  ceil(log2 N)*(alpha+c) + (N-1)/N * D/B (no release)\n");
  std::printf(
      "alpha %g us, c %g us, t %u, B %g Gbit/s; flat = radix %llu both ways, trees = "
      "%llu up and %llu down\n\n",
      constants.alpha_us, constants.copy_us, constants.threads, options.bandwidth_gbit,
      static_cast<unsigned long long>(options.radix),
      static_cast<unsigned long long>(options.radix),
      static_cast<unsigned long long>(options.radix2));
  for (std::uint64_t n : table.columns) {
    const FenceShapes shapes = fence_shapes(n, options, constants);
    std::printf("N = %llu (Bruck: %u rounds)\n", static_cast<unsigned long long>(n),
                bruck::rounds(n));
    std::printf("  %-16s %12s %12s %12s  %s\n", "aggregate", "flat us", "trees us", "bruck us",
                "fastest");
    for (const auto& row : table.rows) {
      std::printf("  %-16s %12.0f %12.0f %12.0f  %s\n", row.label.c_str(),
                  shapes.flat.at(row.bytes), shapes.trees.at(row.bytes), shapes.bruck.at(row.bytes),
                  shape_winner(shapes, row.bytes).c_str());
    }
    std::printf("  Bruck beats the trees from %s, radix %llu flat from %s\n\n",
                crossover_text(wins_from(shapes.bruck, shapes.trees)).c_str(),
                static_cast<unsigned long long>(options.radix),
                crossover_text(wins_from(shapes.bruck, shapes.flat)).c_str());
  }
  std::printf("set it with grove start --mca grpcomm_fence_topology bruck (the default: tree)\n");
}

int run_model(const ModelOptions& options) {
  if (!check_model_constants(options)) return 1;
  CostConstants constants{options.alpha_us, options.copy_us, options.threads,
                          options.bandwidth_gbit * 1e9 / 8.0};
  auto columns = model_columns(options);
  if (!columns) return 1;
  auto rows = model_rows(options);
  if (!rows) return 1;
  const ModelTable table =
      evaluate_model(std::move(*rows), std::move(*columns), constants, options.compare_radix);
  if (options.fence) {
    if (options.radix < 2 || options.radix2 < 2) {
      print_cli_error("--radix and --radix2 must be at least 2");
      return 1;
    }
    if (options.json) {
      print_fence_json(table, constants, options);
    } else {
      print_fence_text(table, constants, options);
    }
  } else if (options.json) {
    print_model_json(table, constants, options.compare_radix);
  } else {
    print_model_text(table, constants, options);
  }
  return 0;
}

}  // namespace

void add_model_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<ModelOptions>();
  CLI::App* command =
      app.add_subcommand("model", "Evaluate the release cost model and the optimal release radix");
  add_param_options(*command, context);
  command->add_option("-N,--daemons", options->daemons, "Daemon counts (repeatable)")
      ->type_name("N");
  command
      ->add_option("-M,--payload", options->payloads,
                   "Payload sizes on the wire (repeatable; 33, 10KB, 16M)")
      ->type_name("BYTES");
  command->add_option("--alpha", options->alpha_us, "Hop latency alpha in microseconds")
      ->capture_default_str();
  command
      ->add_option("-c,--copy-cost", options->copy_us,
                   "Software cost c of one forwarded copy in microseconds")
      ->capture_default_str();
  command->add_option("-t,--threads", options->threads, "Worker threads t sharing the copies")
      ->capture_default_str();
  command->add_option("-B,--bandwidth", options->bandwidth_gbit, "Link bandwidth B in Gbit/s")
      ->capture_default_str();
  command
      ->add_option("--compare-radix", options->compare_radix,
                   "Radix whose cost is compared with the optimum")
      ->capture_default_str();
  command->add_flag("--json", options->json, "Print JSON instead of the table");
  command->add_flag("--fence", options->fence,
                    "Price whole fences by shape: radix --radix flat, the two trees "
                    "(--radix up, --radix2 down) and the Bruck exchange");
  command->add_option("--radix", options->radix, "With --fence: the routing tree's radix")
      ->capture_default_str();
  command->add_option("--radix2", options->radix2, "With --fence: the release tree's radix")
      ->capture_default_str();
  context.actions[command] = [options] { return run_model(*options); };
}

}  // namespace grove
