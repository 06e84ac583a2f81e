// The function table libetrt hands to every plugin.
#pragma once

#include "etrt/plugin_api.h"

namespace etrt {

const et_host_api* host_api();

// Element size of an et_dtype, 0 for unknown codes.
size_t dtype_size(int32_t dtype);

}  // namespace etrt
