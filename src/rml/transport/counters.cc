#include "rml/transport/counters.h"

namespace grove {
namespace {

void append_line(std::string& out, const std::string& label, const TrafficCount& count) {
  out += label + ": " + std::to_string(count.frames) + " frames " + std::to_string(count.bytes) +
         " bytes\n";
}

void append_keys(std::string& out, const char* direction, const Accounting& accounting) {
  for (const auto& [key, count] : accounting.by_key()) {
    append_line(out,
                std::string(direction) + " " + std::string(frame_type_name(key.type)) + " tag " +
                    std::to_string(key.tag) + " topology " +
                    std::string(topology_name(key.topology)),
                count);
  }
}

}  // namespace

std::string format_counters(const TransportCounters& counters) {
  std::string out;
  append_line(out, "sent", counters.sent.total());
  append_keys(out, "sent", counters.sent);
  append_line(out, "received", counters.received.total());
  append_keys(out, "received", counters.received);
  append_line(out, "loopback", counters.loopback);
  out += "peers lost: " + std::to_string(counters.peers_lost) + "\n";
  return out;
}

}  // namespace grove
