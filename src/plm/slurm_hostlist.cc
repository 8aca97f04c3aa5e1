#include "plm/slurm_hostlist.h"

#include "util/text.h"

namespace grove {
namespace {

constexpr std::size_t kMaxHosts = 1'000'000;

// Splits at commas outside brackets.
Result<std::vector<std::string_view>> split_top_level(std::string_view list) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '[') {
      if (++depth > 1) return Error{"'" + std::string(list) + "': nested brackets"};
    } else if (list[i] == ']') {
      if (--depth < 0) return Error{"'" + std::string(list) + "': ']' without '['"};
    } else if (list[i] == ',' && depth == 0) {
      items.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return Error{"'" + std::string(list) + "': '[' without ']'"};
  items.push_back(list.substr(start));
  return items;
}

// "01-04,7" into the strings it names.
Result<std::vector<std::string>> expand_range_set(std::string_view set) {
  std::vector<std::string> values;
  for (const std::string& part : split(set, ',')) {
    auto dash = part.find('-');
    std::string low = part.substr(0, dash);
    std::string high = dash == std::string::npos ? low : part.substr(dash + 1);
    auto from = parse_int(low);
    auto to = parse_int(high);
    if (low.empty() || !from || !to || *from < 0 || *to < *from ||
        low.find_first_not_of("0123456789") != std::string::npos ||
        high.find_first_not_of("0123456789") != std::string::npos) {
      return Error{"'[" + std::string(set) + "]': '" + part + "' is not N or N-M with N <= M"};
    }
    if (static_cast<std::size_t>(*to - *from) >= kMaxHosts) {
      return Error{"'[" + std::string(set) + "]': range too large"};
    }
    const std::size_t width = low.size();
    for (auto value = *from; value <= *to; ++value) {
      std::string digits = std::to_string(value);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      values.push_back(std::move(digits));
    }
  }
  return values;
}

Status expand_item(std::string_view item, std::vector<std::string>& hosts) {
  std::vector<std::string> names = {""};
  std::size_t at = 0;
  while (at < item.size()) {
    auto open = item.find('[', at);
    std::string_view literal =
        item.substr(at, open == std::string_view::npos ? item.npos : open - at);
    for (auto& name : names)
      name += literal;
    if (open == std::string_view::npos) break;
    auto close = item.find(']', open);
    auto values = expand_range_set(item.substr(open + 1, close - open - 1));
    if (!values) return values.error();
    std::vector<std::string> product;
    for (const auto& name : names) {
      for (const auto& value : *values)
        product.push_back(name + value);
    }
    if (product.size() > kMaxHosts) return Error{"'" + std::string(item) + "': too many hosts"};
    names = std::move(product);
    at = close + 1;
  }
  for (auto& name : names) {
    if (name.empty()) return Error{"an empty host name"};
    hosts.push_back(std::move(name));
  }
  return ok_status();
}

}  // namespace

Result<std::vector<std::string>> expand_slurm_hostlist(std::string_view list) {
  list = trim(list);
  if (list.empty()) return Error{"an empty host list"};
  auto items = split_top_level(list);
  if (!items) return items.error();
  std::vector<std::string> hosts;
  for (std::string_view item : *items) {
    if (auto status = expand_item(trim(item), hosts); !status) {
      return Error{"host list '" + std::string(list) + "': " + status.error().message};
    }
  }
  return hosts;
}

}  // namespace grove
