// Help topics: `[topic]` sections in help-<area>.txt files, rendered with %s
// substitution. A section header may carry "once" (`[topic] once`): such a
// topic renders the first time only, per catalog. Missing files or topics
// produce a clear fallback message instead of failing.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace grove {

struct HelpTopic {
  std::string text;
  bool once = false;
};

// Parses help-file text into topics. Lines starting with '#' outside a topic
// are comments; inside a topic, "##" starts a comment line.
std::map<std::string, HelpTopic, std::less<>> parse_help_text(std::string_view text);

// Replaces each %s with the next argument ("%%" is a literal '%'); absent
// arguments render as "<missing>".
std::string substitute_help_args(std::string_view text, const std::vector<std::string>& args);

class HelpCatalog {
 public:
  explicit HelpCatalog(std::vector<std::string> search_dirs);

  // The rendered topic, or nullopt when it is once-only and already shown.
  std::optional<std::string> render(std::string_view file, std::string_view topic,
                                    const std::vector<std::string>& args);
  const std::vector<std::string>& search_dirs() const { return search_dirs_; }

 private:
  const std::map<std::string, HelpTopic, std::less<>>* load(std::string_view file);

  std::vector<std::string> search_dirs_;
  std::map<std::string, std::map<std::string, HelpTopic, std::less<>>, std::less<>> files_;
  std::set<std::string, std::less<>> missing_files_;
  std::set<std::string, std::less<>> shown_once_;
};

// $GROVE_HELP_DIR first, then the source tree's share/help (so tests and
// uninstalled builds find topics), then the installed data directory.
std::vector<std::string> default_help_dirs();

// Renders and writes to stderr. Returns whether anything was printed.
bool show_help(HelpCatalog& catalog, std::string_view file, std::string_view topic,
               const std::vector<std::string>& args = {});

}  // namespace grove
