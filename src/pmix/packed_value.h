// Internal to grove_pmix. A pmix_value_t as bytes (PMIx_Data_pack), so a
// published value can travel to the controller and back whatever its type.
#pragma once

#include <pmix.h>

#include "util/bytes.h"
#include "util/result.h"

namespace grove::pmix_internal {

Result<Bytes> pack_value(const pmix_value_t& value);
// Into `out` (constructed by the caller, destructed by the caller).
Status unpack_value(const Bytes& packed, pmix_value_t& out);

}  // namespace grove::pmix_internal
