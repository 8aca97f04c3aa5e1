// The two wire formats of the simple PMI protocols (docs/jobs.md, "PMI-1 and
// PMI-2"): PMI-1's lines of space-separated key=value pairs (and its
// multi-line `mcmd=spawn ... endcmd`), and PMI-2's commands of a six-byte
// decimal length and `key=value;` pairs, a `;` in a value doubled. Every
// client starts in PMI-1's format (`cmd=init pmi_version=N`); a PMI-2 client
// switches to PMI-2's once its init is answered. Pure: bytes in, commands
// out, and the replies' bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace grove::pmi {

enum class Wire : std::uint8_t { v1, v2 };

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct Command {
  std::string name;  // the value of cmd= (or of mcmd=)
  Pairs pairs;       // the rest, in order
  // The value of the first pair named `key`; null if there is none.
  const std::string* find(std::string_view key) const;
};

// One connection's bytes, split into commands as they come.
class Decoder {
 public:
  // The longest command either format may carry: a rank cannot make its
  // daemon hold more than this of its input.
  static constexpr std::size_t kMaxCommand = 64 * 1024;

  void feed(std::string_view bytes);
  // The next whole command; nothing until one has come. An Error names what
  // is malformed: the connection's framing is lost, and it must close.
  Result<std::optional<Command>> next();
  // The format of what follows the commands taken so far.
  void use(Wire wire) { wire_ = wire; }
  Wire wire() const { return wire_; }
  // Bytes held that are not yet a whole command.
  std::size_t buffered() const { return buffer_.size() - start_; }

 private:
  Result<std::optional<Command>> next_v1();
  Result<std::optional<Command>> next_v2();
  void compact();

  std::string buffer_;
  std::size_t start_ = 0;  // where the next command begins
  Wire wire_ = Wire::v1;
};

// The bytes of a reply: `cmd=<name>` first, then `pairs`.
std::string encode_v1(std::string_view name, const Pairs& pairs);
std::string encode_v2(std::string_view name, const Pairs& pairs);
// Whether `text` may be a PMI-1 value: no space, no newline, no '=' in a key
// (PMI-1 cannot escape them).
bool v1_safe(std::string_view text);

}  // namespace grove::pmi
