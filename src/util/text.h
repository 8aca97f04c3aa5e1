// Small text helpers shared by the parameter registry, help rendering and the CLI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grove {

std::string_view trim(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
// Words separated by blanks (spaces, tabs, newlines); no quoting.
std::vector<std::string> split_words(std::string_view text);

// Levenshtein distance, used to suggest the closest known name for a typo.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Strict parsers: the whole text must be consumed, no sign tricks, no overflow.
std::optional<std::int64_t> parse_int(std::string_view text);
std::optional<bool> parse_bool(std::string_view text);
// A byte count with an optional suffix: k/K/KiB, M/MiB, G/GiB are binary
// (1024-based); KB, MB, GB are decimal. "64k" = 65536, "10KB" = 10000.
std::optional<std::uint64_t> parse_size(std::string_view text);

// Single-quotes text for sh.
std::string shell_quote(const std::string& text);
// The text as one sh word: as it is when nothing in it is special to sh,
// else quoted (for showing a command a user can paste).
std::string shell_word(const std::string& text);

// Human-readable byte counts in decimal units (the seed's tables use 10 KB = 10,000 B).
std::string format_bytes(double bytes);

}  // namespace grove
