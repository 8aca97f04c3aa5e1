// grove topo: draw the routing tree and the release tree for a daemon set,
// optionally with failed daemons, as indented text or Graphviz dot.
#include <cstdio>
#include <string>

#include "launcher/commands.h"
#include "rml/topology.h"
#include "rml/tree.h"
#include "util/text.h"

namespace grove {
namespace {

struct TopoOptions {
  std::uint32_t daemons = 0;
  std::string vpids;
  std::string failed;
  std::int64_t radix = 0;   // 0: from rml_base_radix
  std::int64_t radix2 = 0;  // 0: from rml_base_radix2
  std::string tree = "both";
  std::string format = "text";
};

Result<std::vector<Vpid>> parse_vpid_list(const std::string& text, const char* flag) {
  std::vector<Vpid> out;
  if (text.empty()) return out;
  for (const auto& item : split(text, ',')) {
    auto range = split(item, '-');
    auto first = parse_int(range[0]);
    auto last = range.size() == 2 ? parse_int(range[1]) : first;
    if (range.size() > 2 || !first || !last || *first < 0 || *last < *first || *last > 0xFFFFFFF) {
      return Error{std::string(flag) + ": '" + item + "' is not a vpid or range (e.g. 3,5-7)"};
    }
    for (std::int64_t v = *first; v <= *last; ++v)
      out.push_back(static_cast<Vpid>(v));
  }
  return out;
}

void print_text(const Tree& tree, const Membership& membership, TopologyKind kind) {
  std::printf("%s tree: radix %u, %zu daemons, %zu living",
              std::string(topology_name(kind)).c_str(), tree.radix(), membership.size(),
              tree.member_count());
  auto failed = membership.failed();
  if (!failed.empty()) {
    std::printf(", failed:");
    for (Vpid vpid : failed)
      std::printf(" %u", vpid);
  }
  std::printf("\n");
  // Depth-first, children in slot order; '*' marks a daemon promoted into a dead slot.
  std::vector<std::pair<Vpid, int>> stack{{tree.root(), 0}};
  while (!stack.empty()) {
    auto [vpid, depth] = stack.back();
    stack.pop_back();
    std::printf("%*s%u%s\n", depth * 2, "", vpid, tree.promoted(vpid) ? " *" : "");
    auto children = tree.children(vpid);
    for (auto child = children.rbegin(); child != children.rend(); ++child) {
      stack.emplace_back(*child, depth + 1);
    }
  }
}

// One tree's nodes and edges; `id` prefixes node names so that two trees
// can share one graph.
void print_dot_body(const Tree& tree, const Membership& membership, const std::string& id,
                    const char* indent) {
  for (Vpid vpid : membership.daemons()) {
    if (membership.is_failed(vpid)) {
      std::printf("%s%s%u [label=\"%u\", style=dashed, color=gray, fontcolor=gray];\n", indent,
                  id.c_str(), vpid, vpid);
    } else if (tree.promoted(vpid)) {
      std::printf("%s%s%u [label=\"%u\", style=bold, color=blue];\n", indent, id.c_str(), vpid,
                  vpid);
    } else {
      std::printf("%s%s%u [label=\"%u\"];\n", indent, id.c_str(), vpid, vpid);
    }
  }
  for (Vpid vpid : tree.members()) {
    for (Vpid child : tree.children(vpid))
      std::printf("%s%s%u -> %s%u;\n", indent, id.c_str(), vpid, id.c_str(), child);
  }
}

// One graph per invocation, so that `| dot -Tpng` draws everything asked
// for: a single tree as its own digraph, both as two clusters of one.
void print_dot(const std::vector<Tree>& trees, const Membership& membership,
               const std::vector<TopologyKind>& kinds) {
  if (trees.size() == 1) {
    std::string name(topology_name(kinds[0]));
    std::printf("digraph %s_tree {\n", name.c_str());
    std::printf("  label=\"%s tree, radix %u\";\n  node [shape=circle];\n", name.c_str(),
                trees[0].radix());
    print_dot_body(trees[0], membership, "d", "  ");
    std::printf("}\n");
    return;
  }
  std::printf("digraph trees {\n  node [shape=circle];\n");
  for (std::size_t i = 0; i < trees.size(); ++i) {
    std::string name(topology_name(kinds[i]));
    std::printf("  subgraph cluster_%s {\n    label=\"%s tree, radix %u\";\n", name.c_str(),
                name.c_str(), trees[i].radix());
    print_dot_body(trees[i], membership, name + "_d", "    ");
    std::printf("  }\n");
  }
  std::printf("}\n");
}

int run_topo(const CliContext& context, const TopoOptions& options) {
  std::vector<Vpid> daemons;
  if (!options.vpids.empty()) {
    auto parsed = parse_vpid_list(options.vpids, "--vpids");
    if (!parsed) {
      print_cli_error(parsed.error().message);
      return 1;
    }
    daemons = *parsed;
  } else if (options.daemons > 0) {
    for (Vpid v = 0; v < options.daemons; ++v)
      daemons.push_back(v);
  } else {
    print_cli_error("give the daemon set: --daemons N or --vpids LIST");
    return 1;
  }
  auto membership = Membership::create(daemons);
  if (!membership) {
    print_cli_error(membership.error().message);
    return 1;
  }
  auto failed = parse_vpid_list(options.failed, "--failed");
  if (!failed) {
    print_cli_error(failed.error().message);
    return 1;
  }
  std::uint64_t epoch = 0;
  for (Vpid vpid : *failed) {
    if (vpid == kControllerVpid || !membership->contains(vpid)) {
      print_cli_error("--failed: " + std::to_string(vpid) +
                      (vpid == kControllerVpid ? " is the controller, which cannot fail"
                                               : " is not in the daemon set"));
      return 1;
    }
    membership->apply({MembershipEventKind::departure, vpid, ++epoch});
  }
  TopologyRadices radices{
      static_cast<std::uint32_t>(options.radix ? options.radix
                                               : context.params.get_int("rml_base_radix")),
      static_cast<std::uint32_t>(options.radix2 ? options.radix2
                                                : context.params.get_int("rml_base_radix2"))};
  std::vector<TopologyKind> kinds;
  if (options.tree != "release") kinds.push_back(TopologyKind::routing);
  if (options.tree != "routing") kinds.push_back(TopologyKind::release);
  std::vector<Tree> trees;
  for (TopologyKind kind : kinds)
    trees.push_back(derive_topology(*membership, kind, radices));
  if (options.format == "dot") {
    print_dot(trees, *membership, kinds);
    return 0;
  }
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) std::printf("\n");
    print_text(trees[i], *membership, kinds[i]);
  }
  return 0;
}

}  // namespace

void add_topo_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<TopoOptions>();
  CLI::App* command =
      app.add_subcommand("topo", "Draw the routing and release trees for a daemon set");
  add_param_options(*command, context);
  command->add_option("-n,--daemons", options->daemons, "Daemon count (vpids 0..N-1)")
      ->check(CLI::Range(1u, 1000000u));
  command->add_option("--vpids", options->vpids,
                      "Explicit daemon set with holes, e.g. 0-3,7,9-12 (must include 0)");
  command->add_option("--failed", options->failed, "Failed daemons, e.g. 1,4-5");
  command->add_option("--radix", options->radix, "Routing-tree radix (default: rml_base_radix)")
      ->check(CLI::Range(2, 65535));
  command->add_option("--radix2", options->radix2, "Release-tree radix (default: rml_base_radix2)")
      ->check(CLI::Range(2, 65535));
  command->add_option("--tree", options->tree, "Which tree to draw")
      ->check(CLI::IsMember({"routing", "release", "both"}))
      ->capture_default_str();
  command->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "dot"}))
      ->capture_default_str();
  context.actions[command] = [&context, options] { return run_topo(context, *options); };
}

}  // namespace grove
