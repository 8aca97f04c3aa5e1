#include "util/param_registry.h"

#include <cstdio>
#include <cstdlib>

#include "util/text.h"

namespace grove {

std::string_view param_kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::boolean:
      return "bool";
    case ParamKind::integer:
      return "int";
    case ParamKind::size:
      return "size";
    case ParamKind::string:
      return "string";
    case ParamKind::enumeration:
      return "enum";
  }
  return "?";
}

std::string_view param_source_name(ParamSourceKind kind) {
  switch (kind) {
    case ParamSourceKind::default_value:
      return "default";
    case ParamSourceKind::user_file:
      return "user file";
    case ParamSourceKind::param_file:
      return "param file";
    case ParamSourceKind::environment:
      return "environment";
    case ParamSourceKind::command_line:
      return "command line";
  }
  return "?";
}

std::string describe_origin(const ParamOrigin& origin) {
  std::string text(param_source_name(origin.kind));
  if (!origin.detail.empty()) text += " " + origin.detail;
  return text;
}

std::string describe_expected(const ParamSpec& spec) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  auto range = [&](std::string_view what) {
    std::string text(what);
    if (spec.min != kMin && spec.max != kMax) {
      text += " in [" + std::to_string(spec.min) + ", " + std::to_string(spec.max) + "]";
    } else if (spec.min != kMin) {
      text += " >= " + std::to_string(spec.min);
    } else if (spec.max != kMax) {
      text += " <= " + std::to_string(spec.max);
    }
    return text;
  };
  switch (spec.kind) {
    case ParamKind::boolean:
      return "a boolean (true/false, 1/0, yes/no, on/off)";
    case ParamKind::integer:
      return range("an integer");
    case ParamKind::size:
      return range("a byte size (e.g. 4096, 64k, 16M)");
    case ParamKind::string:
      return "a string";
    case ParamKind::enumeration: {
      std::string text = "one of:";
      for (const auto& choice : spec.choices)
        text += " " + choice;
      return text;
    }
  }
  return "?";
}

std::string param_value_text(const ParamValue& value) {
  struct Visitor {
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(std::uint64_t v) const { return std::to_string(v); }
    std::string operator()(const std::string& v) const { return v; }
  };
  return std::visit(Visitor{}, value);
}

Result<ParamValue> parse_param_value(const ParamSpec& spec, std::string_view text) {
  auto fail = [&]() -> Result<ParamValue> {
    return Error{"invalid value '" + std::string(text) + "' for parameter '" + spec.name +
                 "': expected " + describe_expected(spec)};
  };
  switch (spec.kind) {
    case ParamKind::boolean: {
      auto parsed = parse_bool(text);
      if (!parsed) return fail();
      return ParamValue{*parsed};
    }
    case ParamKind::integer: {
      auto parsed = parse_int(text);
      if (!parsed || *parsed < spec.min || *parsed > spec.max) return fail();
      return ParamValue{*parsed};
    }
    case ParamKind::size: {
      auto parsed = parse_size(text);
      if (!parsed || *parsed > static_cast<std::uint64_t>(spec.max) ||
          static_cast<std::int64_t>(*parsed) < spec.min) {
        return fail();
      }
      return ParamValue{*parsed};
    }
    case ParamKind::string:
      if (spec.check) {
        if (auto problem = spec.check(trim(text))) {
          return Error{"invalid value '" + std::string(text) + "' for parameter '" + spec.name +
                       "': " + *problem};
        }
      }
      return ParamValue{std::string(trim(text))};
    case ParamKind::enumeration: {
      std::string_view wanted = trim(text);
      for (const auto& choice : spec.choices) {
        if (choice == wanted) return ParamValue{choice};
      }
      return fail();
    }
  }
  return fail();
}

void ParamRegistry::define(ParamSpec spec) {
  if (entries_.count(spec.name) != 0) {
    std::fprintf(stderr, "grove: internal error: parameter '%s' defined twice\n",
                 spec.name.c_str());
    std::abort();
  }
  auto value = parse_param_value(spec, spec.default_text);
  if (!value) {
    std::fprintf(stderr, "grove: internal error: default of %s\n", value.error().message.c_str());
    std::abort();
  }
  ParamEntry entry{spec, *value, param_value_text(*value), ParamOrigin{}};
  std::string name = spec.name;
  entries_.emplace(std::move(name), std::move(entry));
}

Status ParamRegistry::set(std::string_view name, std::string_view text, const ParamOrigin& origin) {
  auto found = entries_.find(name);
  if (found == entries_.end()) {
    std::string message =
        "unknown parameter '" + std::string(name) + "' (from " + describe_origin(origin) + ")";
    std::string suggestion = closest_name(name);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    return Error{message};
  }
  auto value = parse_param_value(found->second.spec, text);
  if (!value) {
    return Error{value.error().message + " (from " + describe_origin(origin) + ")"};
  }
  found->second.value = std::move(*value);
  found->second.value_text = param_value_text(found->second.value);
  found->second.origin = origin;
  return ok_status();
}

const ParamEntry& ParamRegistry::require(std::string_view name) const {
  auto found = entries_.find(name);
  if (found == entries_.end()) {
    std::fprintf(stderr, "grove: internal error: parameter '%.*s' read but never defined\n",
                 static_cast<int>(name.size()), name.data());
    std::abort();
  }
  return found->second;
}

bool ParamRegistry::get_bool(std::string_view name) const {
  return std::get<bool>(require(name).value);
}

std::int64_t ParamRegistry::get_int(std::string_view name) const {
  return std::get<std::int64_t>(require(name).value);
}

std::uint64_t ParamRegistry::get_size(std::string_view name) const {
  return std::get<std::uint64_t>(require(name).value);
}

const std::string& ParamRegistry::get_string(std::string_view name) const {
  return std::get<std::string>(require(name).value);
}

const ParamEntry* ParamRegistry::find(std::string_view name) const {
  auto found = entries_.find(name);
  return found == entries_.end() ? nullptr : &found->second;
}

std::vector<const ParamEntry*> ParamRegistry::entries() const {
  std::vector<const ParamEntry*> all;
  all.reserve(entries_.size());
  for (const auto& [name, entry] : entries_)
    all.push_back(&entry);
  return all;
}

std::string ParamRegistry::closest_name(std::string_view name) const {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& [candidate, entry] : entries_) {
    std::size_t distance = edit_distance(name, candidate);
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // Suggest only what is plausibly a typo: at most a third of the name wrong.
  if (best.empty() || best_distance > std::max<std::size_t>(2, name.size() / 3)) return "";
  return best;
}

std::vector<std::pair<std::string, std::string>> ParamRegistry::non_defaults() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, entry] : entries_) {
    if (entry.origin.kind != ParamSourceKind::default_value) {
      out.emplace_back(name, entry.value_text);
    }
  }
  return out;
}

std::vector<std::string> ParamRegistry::child_arguments() const {
  std::vector<std::string> args;
  for (auto& [name, value] : non_defaults()) {
    args.push_back("--mca");
    args.push_back(name);
    args.push_back(value);
  }
  return args;
}

}  // namespace grove
