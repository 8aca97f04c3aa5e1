#include "pmi/pmi_wire.h"

#include <algorithm>

namespace grove::pmi {
namespace {

constexpr std::size_t kV2LengthField = 6;

// One PMI-1 line into `command`: `cmd=` (or `mcmd=`) first, then pairs.
Status parse_v1_pairs(std::string_view line, Command& command) {
  std::size_t at = 0;
  while (at < line.size()) {
    if (line[at] == ' ' || line[at] == '\t' || line[at] == '\r') {
      ++at;
      continue;
    }
    std::size_t end = line.find_first_of(" \t\r", at);
    if (end == std::string_view::npos) end = line.size();
    std::string_view token = line.substr(at, end - at);
    at = end;
    const std::size_t equals = token.find('=');
    if (equals == std::string_view::npos && !command.pairs.empty()) {
      // A value with spaces (MPICH's abort message=): the words after it
      // are its own.
      command.pairs.back().second.append(" ").append(token);
      continue;
    }
    if (equals == std::string_view::npos || equals == 0) {
      return Error{"'" + std::string(token.substr(0, 64)) + "' is not key=value"};
    }
    std::string key(token.substr(0, equals));
    std::string value(token.substr(equals + 1));
    if (command.name.empty()) {
      if (key != "cmd" && key != "mcmd") return Error{"a command must start with cmd="};
      if (value.empty()) return Error{"cmd= names no command"};
      command.name = std::move(value);
      continue;
    }
    command.pairs.emplace_back(std::move(key), std::move(value));
  }
  return ok_status();
}

}  // namespace

const std::string* Command::find(std::string_view key) const {
  for (const auto& [name, value] : pairs) {
    if (name == key) return &value;
  }
  return nullptr;
}

void Decoder::feed(std::string_view bytes) {
  buffer_.append(bytes);
}

void Decoder::compact() {
  if (start_ == 0) return;
  buffer_.erase(0, start_);
  start_ = 0;
}

Result<std::optional<Command>> Decoder::next() {
  auto command = wire_ == Wire::v1 ? next_v1() : next_v2();
  if (command && !*command) {
    compact();
    if (buffered() > kMaxCommand) {
      return Error{"a command longer than " + std::to_string(kMaxCommand) + " bytes"};
    }
  }
  return command;
}

Result<std::optional<Command>> Decoder::next_v1() {
  std::string_view rest(buffer_);
  rest.remove_prefix(start_);
  // Blank lines between commands are nothing.
  std::size_t skipped = 0;
  while (skipped < rest.size() && (rest[skipped] == '\n' || rest[skipped] == '\r'))
    ++skipped;
  rest.remove_prefix(skipped);
  start_ += skipped;
  const std::size_t newline = rest.find('\n');
  if (newline == std::string_view::npos) return std::optional<Command>();
  std::string_view line = rest.substr(0, newline);
  Command command;
  if (line.rfind("mcmd=", 0) == 0) {
    // mcmd=NAME, then lines of pairs up to a line `endcmd`.
    std::size_t consumed = newline + 1;
    if (Status parsed = parse_v1_pairs(line, command); !parsed) return parsed.error();
    for (;;) {
      const std::size_t end = rest.find('\n', consumed);
      if (end == std::string_view::npos) return std::optional<Command>();
      std::string_view more = rest.substr(consumed, end - consumed);
      consumed = end + 1;
      while (!more.empty() && (more.back() == '\r' || more.back() == ' '))
        more.remove_suffix(1);
      if (more == "endcmd") break;
      if (more.empty()) continue;
      // One key=value per line, the value to the line's end (spaces and
      // all: a spawned program's arguments).
      const std::size_t equals = more.find('=');
      if (equals == std::string_view::npos || equals == 0)
        return Error{"'" + std::string(more.substr(0, 64)) + "' in an mcmd is not key=value"};
      command.pairs.emplace_back(std::string(more.substr(0, equals)),
                                 std::string(more.substr(equals + 1)));
    }
    start_ += consumed;
    return std::optional<Command>(std::move(command));
  }
  start_ += newline + 1;
  if (Status parsed = parse_v1_pairs(line, command); !parsed) return parsed.error();
  if (command.name.empty()) return Error{"a line with no cmd="};
  return std::optional<Command>(std::move(command));
}

Result<std::optional<Command>> Decoder::next_v2() {
  std::string_view rest(buffer_);
  rest.remove_prefix(start_);
  if (rest.size() < kV2LengthField) return std::optional<Command>();
  // The length in six bytes: decimal digits, with spaces before (MPICH
  // 4.1's "%6u") or after (MPICH 4.0's and Slurm's).
  std::size_t length = 0;
  std::size_t digits = 0;
  bool after_digits = false;
  for (std::size_t i = 0; i < kV2LengthField; ++i) {
    const char c = rest[i];
    if (c >= '0' && c <= '9' && !after_digits) {
      length = length * 10 + static_cast<std::size_t>(c - '0');
      ++digits;
    } else if (c == ' ') {
      after_digits = digits > 0;
    } else {
      return Error{"a PMI-2 command must start with its length in six bytes"};
    }
  }
  if (digits == 0) return Error{"a PMI-2 command must start with its length in six bytes"};
  if (length == 0) return Error{"a PMI-2 command of length 0"};
  if (length > kMaxCommand) {
    return Error{"a PMI-2 command of " + std::to_string(length) + " bytes (at most " +
                 std::to_string(kMaxCommand) + ")"};
  }
  if (rest.size() < kV2LengthField + length) return std::optional<Command>();
  std::string_view body = rest.substr(kV2LengthField, length);
  start_ += kV2LengthField + length;
  Command command;
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t equals = body.find('=', at);
    if (equals == std::string_view::npos || equals == at) {
      return Error{"a PMI-2 pair without key=value"};
    }
    std::string key(body.substr(at, equals - at));
    if (key.find(';') != std::string::npos) return Error{"a PMI-2 key holds ';'"};
    std::string value;
    std::size_t i = equals + 1;
    bool ended = false;
    while (i < body.size()) {
      if (body[i] == ';') {
        if (i + 1 < body.size() && body[i + 1] == ';') {  // an escaped ';'
          value.push_back(';');
          i += 2;
          continue;
        }
        ended = true;
        ++i;
        break;
      }
      value.push_back(body[i++]);
    }
    if (!ended) return Error{"a PMI-2 pair not ended by ';'"};
    at = i;
    if (command.name.empty()) {
      if (key != "cmd") return Error{"a PMI-2 command must start with cmd="};
      if (value.empty()) return Error{"cmd= names no command"};
      command.name = std::move(value);
      continue;
    }
    command.pairs.emplace_back(std::move(key), std::move(value));
  }
  if (command.name.empty()) return Error{"a PMI-2 command with no cmd="};
  return std::optional<Command>(std::move(command));
}

std::string encode_v1(std::string_view name, const Pairs& pairs) {
  std::string line = "cmd=";
  line.append(name);
  for (const auto& [key, value] : pairs) {
    line.push_back(' ');
    line.append(key);
    line.push_back('=');
    line.append(value);
  }
  line.push_back('\n');
  return line;
}

std::string encode_v2(std::string_view name, const Pairs& pairs) {
  std::string body;
  auto add = [&body](std::string_view key, std::string_view value) {
    body.append(key);
    body.push_back('=');
    for (char c : value) {
      if (c == ';') body.push_back(';');  // escaped as ";;"
      body.push_back(c);
    }
    body.push_back(';');
  };
  add("cmd", name);
  for (const auto& [key, value] : pairs)
    add(key, value);
  std::string length = std::to_string(body.size());
  length.resize(kV2LengthField, ' ');
  return length + body;
}

bool v1_safe(std::string_view text) {
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

}  // namespace grove::pmi
