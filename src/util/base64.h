// Bytes as base64 text, for binary data inside the control socket's JSON
// lines (grove run's stdin). libsodium does the work.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace grove {

std::string to_base64(std::string_view bytes);
// Nothing if `text` is not base64 (standard alphabet, padded).
std::optional<std::string> from_base64(std::string_view text);

}  // namespace grove
