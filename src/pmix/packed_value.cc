#include "pmix/packed_value.h"

#include <cstdlib>
#include <cstring>

namespace grove::pmix_internal {

Result<Bytes> pack_value(const pmix_value_t& value) {
  pmix_data_buffer_t buffer;
  PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
  pmix_value_t copy = value;  // PMIx_Data_pack takes a non-const pointer; it only reads
  pmix_status_t status = PMIx_Data_pack(nullptr, &buffer, &copy, 1, PMIX_VALUE);
  if (status != PMIX_SUCCESS) {
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    return Error{std::string("PMIx_Data_pack: ") + PMIx_Error_string(status)};
  }
  pmix_byte_object_t packed{nullptr, 0};
  status = PMIx_Data_unload(&buffer, &packed);
  PMIX_DATA_BUFFER_DESTRUCT(&buffer);
  if (status != PMIX_SUCCESS) {
    return Error{std::string("PMIx_Data_unload: ") + PMIx_Error_string(status)};
  }
  const auto* first = reinterpret_cast<const std::byte*>(packed.bytes);
  Bytes out(first, first + packed.size);
  std::free(packed.bytes);
  return out;
}

Status unpack_value(const Bytes& packed, pmix_value_t& out) {
  if (packed.empty()) return Error{"an empty packed value"};
  // The buffer takes the bytes over (and frees them).
  pmix_byte_object_t payload;
  payload.bytes = static_cast<char*>(std::malloc(packed.size()));
  if (payload.bytes == nullptr) return Error{"out of memory"};
  std::memcpy(payload.bytes, packed.data(), packed.size());
  payload.size = packed.size();
  pmix_data_buffer_t buffer;
  PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
  if (pmix_status_t loaded = PMIx_Data_load(&buffer, &payload); loaded != PMIX_SUCCESS) {
    std::free(payload.bytes);
    return Error{std::string("PMIx_Data_load: ") + PMIx_Error_string(loaded)};
  }
  std::int32_t count = 1;
  pmix_status_t status = PMIx_Data_unpack(nullptr, &buffer, &out, &count, PMIX_VALUE);
  PMIX_DATA_BUFFER_DESTRUCT(&buffer);
  if (status != PMIX_SUCCESS || count != 1) {
    return Error{std::string("PMIx_Data_unpack: ") + PMIx_Error_string(status)};
  }
  return ok_status();
}

}  // namespace grove::pmix_internal
