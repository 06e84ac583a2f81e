// et_named_data: the program's weights by key, as delegates see them.
#pragma once

#include <cstddef>

#include "etrt/plugin_api.h"

struct et_named_data {
  virtual ~et_named_data() = default;
  virtual et_error* get(const char* key, const void** data, size_t* size) = 0;
};
