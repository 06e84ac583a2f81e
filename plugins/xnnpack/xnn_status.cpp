// XNNPACK's status codes in words, for errors (both XNNPACKs the plugin can run on).
#include "xnn_library.h"

namespace etrt::xnn {

const char* status_name(int status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
    default: return "unknown status";
  }
}

}  // namespace etrt::xnn
