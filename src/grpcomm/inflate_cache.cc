#include "grpcomm/inflate_cache.h"

#include "grpcomm/messages.h"

namespace grove {

Result<SharedBytes> InflateCache::inflate(const SharedBytes& wire, std::uint64_t max_bytes) {
  for (const Entry& entry : recent_) {
    if (entry.wire == wire) return entry.plain;
  }
  auto plain = decompress_payload(*wire, max_bytes);
  if (!plain) return plain.error();
  ++inflations_;
  SharedBytes shared = share_bytes(std::move(*plain));
  if (recent_.size() == kKept) recent_.pop_front();
  recent_.push_back(Entry{wire, shared});
  return shared;
}

Result<SharedBytes> inflate_payload(InflateCache* cache, const SharedBytes& wire,
                                    std::uint64_t max_bytes) {
  if (cache != nullptr) return cache->inflate(wire, max_bytes);
  auto plain = decompress_payload(*wire, max_bytes);
  if (!plain) return plain.error();
  return share_bytes(std::move(*plain));
}

}  // namespace grove
