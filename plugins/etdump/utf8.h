// Names in the traces come from programs and plugins, so they can hold any bytes;
// ETDump strings and Chrome trace JSON must be UTF-8 (ExecuTorch's reader and
// Perfetto reject anything else). Writers pass every name through etrt_base's repair_utf8.
#pragma once

#include "etrt/base/utf8.h"

namespace etrt::etdump {

using etrt::base::repair_utf8;

}  // namespace etrt::etdump
