/* Shared bits of the test plugins: a kernel that reports a number through an
 * int64 output tensor, so tests can tell which plugin served a call and how
 * often it was initialised. */
#ifndef ETRT_TEST_PLUGIN_COMMON_H_
#define ETRT_TEST_PLUGIN_COMMON_H_

#include <stdint.h>
#include <string.h>

#include "etrt/plugin_api.h"

/* Writes (intptr_t)user_data, or *(int*)user_data when REPORT_COUNTER, into
 * the last argument, an int64 tensor with at least one element. */
static inline et_error* test_report_value(const et_host_api* host, int64_t value, et_value* const* args, size_t nargs) {
  if (nargs < 1 || args[nargs - 1]->tag != ET_VALUE_TENSOR || args[nargs - 1]->tensor->dtype != ET_DTYPE_INT64 ||
      args[nargs - 1]->tensor->capacity_bytes < sizeof(int64_t))
    return host->error_create(ET_ERR_INVALID_ARGUMENT, "test kernel: last argument must be an int64 tensor");
  memcpy(args[nargs - 1]->tensor->data, &value, sizeof value);
  return NULL;
}

#endif
