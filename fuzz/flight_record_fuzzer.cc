// libFuzzer target for the flight recording decoder (grpcomm/flight_record.h):
// any bytes must decode or be refused with an error, never crash, over-read
// or allocate what the input does not hold. The input's last four bytes are
// set to the CRC-32 of the rest first, so that the fuzzer reaches the parts
// behind the checksum. What decodes must encode back to the same bytes.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "grpcomm/flight_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  if (bytes.size() >= 4) {
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(size - 4)));
    for (int i = 0; i < 4; ++i)
      bytes[size - 4 + i] = static_cast<std::byte>(crc >> (24 - 8 * i));
  }
  auto recording = grove::decode_flight_file(bytes);
  if (!recording) return 0;
  if (grove::encode_flight_file(*recording) != bytes) {
    std::fprintf(stderr, "flight fuzzer: a decoded recording does not encode back the same\n");
    std::abort();
  }
  return 0;
}
