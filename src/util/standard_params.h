// The parameters every grove process knows. Each framework's parameters are
// registered here in one place so `grove info` and the daemons agree on them.
#pragma once

#include "util/param_registry.h"

namespace grove {

void register_standard_params(ParamRegistry& registry);

}  // namespace grove
