#include "util/man_page.h"

#include <sstream>

namespace grove {
namespace {

// Text safe in roff: backslashes and dashes escaped, no line begins with a
// control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string header_lines(const ManPageHeader& header) {
  std::string upper = header.name;
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return ".TH " + upper + " " + std::to_string(header.section) + " \"\" \"" + roff(header.version) +
         "\" \"grove\"\n.SH NAME\n" + roff(header.name) + " \\- " + roff(header.title) + "\n";
}

// Options that --help shows (a help flag, hidden ones and positionals apart).
std::vector<const CLI::Option*> shown_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* option) {
    return !option->get_group().empty() && !option->get_lnames().empty();
  });
}

std::string option_names(const CLI::Option& option) {
  std::string names;
  for (const auto& name : option.get_snames())
    names += (names.empty() ? "" : ", ") + std::string("\\fB\\-") + roff(name) + "\\fR";
  for (const auto& name : option.get_lnames())
    names += (names.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + roff(name) + "\\fR";
  if (option.get_items_expected_max() > 0) {
    std::string type = option.get_type_name();
    if (type.empty()) type = "VALUE";
    names += " \\fI" + roff(type) + "\\fR";
  }
  return names;
}

// `common`: the options every command takes, said once under OPTIONS.
void write_options(std::ostringstream& out, const CLI::App& app, bool skip_common) {
  for (const CLI::Option* option : shown_options(app)) {
    const std::string& first = option->get_lnames().front();
    if (skip_common && (first == "help" || first == "mca" || first == "param-file")) continue;
    out << ".TP\n" << option_names(*option) << "\n" << roff(option->get_description());
    if (!option->get_default_str().empty())
      out << " (default: " << roff(option->get_default_str()) << ")";
    out << "\n";
  }
  for (const CLI::Option* positional : app.get_options([](const CLI::Option* option) {
         return option->get_lnames().empty() && option->get_snames().empty() &&
                !option->get_group().empty();
       })) {
    out << ".TP\n\\fI" << roff(positional->get_name(true)) << "\\fR\n"
        << roff(positional->get_description()) << "\n";
  }
}

std::vector<const CLI::App*> commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* command) { return !command->get_group().empty(); });
}

}  // namespace

std::string man_page_for_app(const CLI::App& app, const ManPageHeader& header,
                             const std::string& see_also) {
  std::ostringstream out;
  out << header_lines(header);
  out << ".SH SYNOPSIS\n.B " << roff(app.get_name()) << "\n"
      << (commands(app).empty() ? "[\\fIOPTIONS\\fR]\n"
                                : "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fICOMMAND OPTIONS\\fR]\n");
  out << ".SH DESCRIPTION\n" << roff(app.get_description()) << "\n";
  out << ".SH OPTIONS\n";
  write_options(out, app, false);
  if (!commands(app).empty()) {
    out << ".SH COMMANDS\n";
    for (const CLI::App* command : commands(app)) {
      std::string names = command->get_name();
      for (const auto& alias : command->get_aliases())
        names += ", " + alias;
      out << ".SS \"" << roff(app.get_name() + " " + names) << "\"\n"
          << roff(command->get_description()) << "\n";
      if (!command->get_footer().empty()) out << ".PP\n" << roff(command->get_footer()) << "\n";
      write_options(out, *command, true);
    }
  }
  if (!app.get_footer().empty()) out << ".SH NOTES\n" << roff(app.get_footer()) << "\n";
  out << ".SH SEE ALSO\n" << roff(see_also) << "\n";
  return out.str();
}

std::string man_page_for_params(const ParamRegistry& params, const ManPageHeader& header) {
  std::ostringstream out;
  out << header_lines(header);
  out << ".SH DESCRIPTION\n"
      << roff(
             "Runtime parameters of grove, set with --mca NAME VALUE (grove start, grove run), "
             "GROVE_MCA_NAME=VALUE in the environment, --param-file FILE or "
             "~/.grove/mca-params.conf ('name = value' lines), in increasing precedence. "
             "'grove info' lists them with their current values and sources.")
      << "\n.SH PARAMETERS\n";
  for (const ParamEntry* entry : params.entries()) {
    const ParamSpec& spec = entry->spec;
    out << ".TP\n\\fB" << roff(spec.name) << "\\fR (" << roff(describe_expected(spec))
        << "; default " << roff(spec.default_text.empty() ? "empty" : spec.default_text) << ")\n"
        << roff(spec.description) << "\n";
  }
  out << ".SH SEE ALSO\n" << roff("grove(1), groved(8)") << "\n";
  return out.str();
}

std::string bash_completion_for_app(const CLI::App& app) {
  std::ostringstream out;
  const std::string name = app.get_name();
  auto words = [](const CLI::App& of) {
    std::string list;
    for (const CLI::Option* option : shown_options(of)) {
      for (const auto& long_name : option->get_lnames())
        list += (list.empty() ? "" : " ") + std::string("--") + long_name;
    }
    return list;
  };
  // Options before the command that take values: their values are not the command.
  std::string value_skips;
  for (const CLI::Option* option : shown_options(app)) {
    const int values = option->get_items_expected_max();
    if (values <= 0) continue;
    std::string spellings;
    for (const auto& long_name : option->get_lnames())
      spellings += (spellings.empty() ? "" : "|") + std::string("--") + long_name;
    value_skips += "      " + spellings + ") ((i += " + std::to_string(values) + ")) ;;\n";
  }
  out << "# bash completion for " << name << " (written by '" << name << " --completion bash')\n"
      << "_" << name << "() {\n"
      << "  local cur=${COMP_WORDS[COMP_CWORD]} command= i\n"
      << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      << "    case ${COMP_WORDS[i]} in\n"
      << value_skips << "      -*) ;;\n"
      << "      *) command=${COMP_WORDS[i]}; break ;;\n"
      << "    esac\n"
      << "  done\n"
      << "  local words\n"
      << "  case $command in\n";
  std::string names;
  for (const CLI::App* command : commands(app)) {
    std::string spellings = command->get_name();
    names += (names.empty() ? "" : " ") + command->get_name();
    for (const auto& alias : command->get_aliases()) {
      spellings += "|" + alias;
      names += " " + alias;
    }
    out << "    " << spellings << ") words=\"" << words(*command) << "\" ;;\n";
  }
  out << "    '') words=\"" << names << " " << words(app) << "\" ;;\n"
      << "    *) words= ;;\n"
      << "  esac\n"
      << "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      << "  # After `grove run`'s program, everything is the program's: files.\n"
      << "  if [[ $command == run && ${#COMPREPLY[@]} -eq 0 ]]; then COMPREPLY=($(compgen -f -- "
         "\"$cur\")); fi\n"
      << "}\n"
      << "complete -o default -F _" << name << " " << name << "\n";
  return out.str();
}

}  // namespace grove
