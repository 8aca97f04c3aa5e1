#include "util/show_help.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/text.h"

namespace grove {

std::map<std::string, HelpTopic, std::less<>> parse_help_text(std::string_view text) {
  std::map<std::string, HelpTopic, std::less<>> topics;
  HelpTopic* current = nullptr;
  for (const auto& raw_line : split(text, '\n')) {
    std::string_view line = raw_line;
    std::string_view stripped = trim(line);
    if (!stripped.empty() && stripped.front() == '[') {
      std::size_t close = stripped.find(']');
      if (close != std::string_view::npos && close > 1) {
        std::string name(trim(stripped.substr(1, close - 1)));
        std::string_view rest = trim(stripped.substr(close + 1));
        current = &topics[name];
        current->text.clear();
        current->once = rest == "once";
        continue;
      }
    }
    if (current == nullptr) continue;  // text before the first topic is commentary
    if (line.rfind("##", 0) == 0) continue;
    current->text += std::string(line) + "\n";
  }
  for (auto& [name, topic] : topics) {
    // Trailing blank lines between sections are layout, not content.
    while (topic.text.size() >= 2 && topic.text[topic.text.size() - 1] == '\n' &&
           topic.text[topic.text.size() - 2] == '\n') {
      topic.text.pop_back();
    }
  }
  return topics;
}

std::string substitute_help_args(std::string_view text, const std::vector<std::string>& args) {
  std::string out;
  std::size_t next_arg = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size()) {
      if (text[i + 1] == 's') {
        out += next_arg < args.size() ? args[next_arg] : std::string("<missing>");
        ++next_arg;
        ++i;
        continue;
      }
      if (text[i + 1] == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

HelpCatalog::HelpCatalog(std::vector<std::string> search_dirs)
    : search_dirs_(std::move(search_dirs)) {}

const std::map<std::string, HelpTopic, std::less<>>* HelpCatalog::load(std::string_view file) {
  if (auto found = files_.find(file); found != files_.end()) return &found->second;
  if (missing_files_.count(file) != 0) return nullptr;
  for (const auto& dir : search_dirs_) {
    std::ifstream stream(dir + "/" + std::string(file));
    if (!stream) continue;
    std::ostringstream content;
    content << stream.rdbuf();
    auto [where, inserted] = files_.emplace(std::string(file), parse_help_text(content.str()));
    return &where->second;
  }
  missing_files_.emplace(file);
  return nullptr;
}

std::optional<std::string> HelpCatalog::render(std::string_view file, std::string_view topic,
                                               const std::vector<std::string>& args) {
  std::string key = std::string(file) + "#" + std::string(topic);
  const auto* topics = load(file);
  const HelpTopic* found = nullptr;
  if (topics != nullptr) {
    if (auto where = topics->find(topic); where != topics->end()) found = &where->second;
  }
  if (found == nullptr) {
    std::string message = "grove: help topic [" + std::string(topic) + "] ";
    if (topics == nullptr) {
      message += "cannot be shown: help file '" + std::string(file) + "' was not found in:";
      for (const auto& dir : search_dirs_)
        message += " " + dir;
      if (search_dirs_.empty()) message += " (no directories)";
    } else {
      message += "is missing from help file '" + std::string(file) + "'";
    }
    message += ".\n";
    if (!args.empty()) {
      message += "The message had these details:";
      for (const auto& arg : args)
        message += " '" + arg + "'";
      message += "\n";
    }
    return message;
  }
  if (found->once) {
    if (shown_once_.count(key) != 0) return std::nullopt;
    shown_once_.insert(key);
  }
  return substitute_help_args(found->text, args);
}

std::vector<std::string> default_help_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GROVE_HELP_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
#ifdef GROVE_SOURCE_HELP_DIR
  dirs.emplace_back(GROVE_SOURCE_HELP_DIR);
#endif
#ifdef GROVE_INSTALL_HELP_DIR
  dirs.emplace_back(GROVE_INSTALL_HELP_DIR);
#endif
  return dirs;
}

bool show_help(HelpCatalog& catalog, std::string_view file, std::string_view topic,
               const std::vector<std::string>& args) {
  auto text = catalog.render(file, topic, args);
  if (!text) return false;
  std::fputs(text->c_str(), stderr);
  if (!text->empty() && text->back() != '\n') std::fputc('\n', stderr);
  return true;
}

}  // namespace grove
