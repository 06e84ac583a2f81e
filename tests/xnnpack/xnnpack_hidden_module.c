/* A module built the way the XNNPACK plugin is (hidden visibility, plugin.map, the static
 * XNNPACK with etrt's cpuinfo and pthreadpool linked in), calling enough of XNNPACK to pull
 * in its runtime, operators, kernel configuration, cpuinfo and pthreadpool. check_module_symbols.py
 * reads its dynamic symbol table: only et_plugin_entry may be there.
 * Built with ETRT_LEAK_PROBE (the check's positive control), it also exports an xnn_ function. */
#include <math.h>
#include <stddef.h>

#include <xnnpack.h>

#define ENTRY __attribute__((visibility("default")))

ENTRY int et_plugin_entry(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  xnn_subgraph_t subgraph = NULL;
  if (xnn_create_subgraph(2, 0, &subgraph) != xnn_status_success) return 2;
  static const float weights[4] = {1, 2, 3, 4};
  const size_t io_dims[2] = {1, 2}, w_dims[2] = {2, 2};
  uint32_t in = 0, out = 0, w = 0;
  int failed = xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, io_dims, NULL, 0,
                                       XNN_VALUE_FLAG_EXTERNAL_INPUT, &in) != xnn_status_success ||
               xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, io_dims, NULL, 1,
                                       XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &out) != xnn_status_success ||
               xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, w_dims, weights, XNN_INVALID_VALUE_ID, 0,
                                       &w) != xnn_status_success ||
               xnn_define_fully_connected(subgraph, -INFINITY, INFINITY, in, w, XNN_INVALID_VALUE_ID, out, 0) !=
                   xnn_status_success;
  xnn_runtime_t runtime = NULL;
  if (!failed) failed = xnn_create_runtime_v2(subgraph, NULL, 0, &runtime) != xnn_status_success;
  if (runtime != NULL) xnn_delete_runtime(runtime);
  xnn_delete_subgraph(subgraph);
  return failed ? 3 : 0;
}

#ifdef ETRT_LEAK_PROBE
ENTRY int xnn_etrt_leak_probe(void) { return et_plugin_entry(); }
#endif
