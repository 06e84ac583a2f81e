// The function table libetrt hands to every plugin.
#pragma once

#include "etrt/plugin_api.h"
#include "program/tensor_shape.h"

namespace etrt {

const et_host_api* host_api();

}  // namespace etrt
