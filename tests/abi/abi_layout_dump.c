/*
 * Prints the layout of every struct, the value of every enum constant and the
 * version macros of the plugin ABI (plugin_api/etrt/plugin_api.h), one fact per
 * line. Compiled once per supported ET_ABI_TARGET_MINOR; abi_layout_test.py
 * compares the output with the frozen record in plugin_api/abi_layout/.
 *
 * Every field is listed explicitly, under the same ET_ABI_TARGET_MINOR guard as
 * in the header: a field added to the header without being added here is not
 * silently covered, but the struct's size line still changes and fails the
 * golden comparison.
 */
#include <stddef.h>
#include <stdio.h>

#include "etrt/plugin_api.h"

#define STR2(x) #x
#define STR(x) STR2(x)

#define FIELD_SIZE(type, field) sizeof(((type*)0)->field)

#define BEGIN_STRUCT(type)                                                                   \
  _Static_assert(offsetof(type, struct_size) == 0, #type ": struct_size must be at offset 0"); \
  _Static_assert(sizeof(((type*)0)->struct_size) == sizeof(size_t),                          \
                 #type ": struct_size must be a size_t");                                    \
  printf("struct %s size %zu align %zu\n", #type, sizeof(type), _Alignof(type));

#define FIELD(type, field) \
  printf("  %s offset %zu size %zu\n", #field, offsetof(type, field), FIELD_SIZE(type, field));

#define ENUM(constant) printf("enum %s = %lld\n", #constant, (long long)(constant));

int main(void) {
  printf("abi %d.%d\n", ET_ABI_MAJOR, ET_ABI_TARGET_MINOR);
  printf("macro ET_ABI_MAJOR = %d\n", ET_ABI_MAJOR);
  /* The minor this layout is the record of. For the default build that is the
   * header's ET_ABI_MINOR; for a build with ET_ABI_TARGET_MINOR=m it is m, the
   * value ET_ABI_MINOR had when level m was current. Printing the header's
   * value instead would make every older level's frozen record change at each
   * minor bump even though none of its layout did. abi_layout_test.py reads the
   * header's own ET_ABI_MINOR from the header. */
  printf("macro ET_ABI_MINOR = %d\n", ET_ABI_TARGET_MINOR);
  printf("macro ET_MAX_RANK = %d\n", ET_MAX_RANK);
  printf("macro ET_PLUGIN_ENTRY_SYMBOL = %s\n", ET_PLUGIN_ENTRY_SYMBOL);

  /* ---------------------------------------------------------------- structs */
  BEGIN_STRUCT(et_tensor)
  FIELD(et_tensor, struct_size)
  FIELD(et_tensor, dtype)
  FIELD(et_tensor, rank)
  FIELD(et_tensor, sizes)
  FIELD(et_tensor, dim_order)
  FIELD(et_tensor, strides)
  FIELD(et_tensor, data)
  FIELD(et_tensor, nbytes)
  FIELD(et_tensor, capacity_bytes)
  FIELD(et_tensor, dynamism)
  FIELD(et_tensor, is_const)

  BEGIN_STRUCT(et_value)
  FIELD(et_value, struct_size)
  FIELD(et_value, tag)
  FIELD(et_value, reserved)
  FIELD(et_value, as_int)
  FIELD(et_value, as_double)
  FIELD(et_value, tensor)
  FIELD(et_value, items)
  FIELD(et_value, count)
  FIELD(et_value, value_indices)

  BEGIN_STRUCT(et_kernel_descriptor)
  FIELD(et_kernel_descriptor, struct_size)
  FIELD(et_kernel_descriptor, name)
  FIELD(et_kernel_descriptor, fn)
  FIELD(et_kernel_descriptor, user_data)
#if ET_ABI_TARGET_MINOR >= 1
  FIELD(et_kernel_descriptor, variant)
#endif
#if ET_ABI_TARGET_MINOR >= 4
  FIELD(et_kernel_descriptor, prepare)
  FIELD(et_kernel_descriptor, run_prepared)
  FIELD(et_kernel_descriptor, release)
#endif

  BEGIN_STRUCT(et_compile_spec)
  FIELD(et_compile_spec, struct_size)
  FIELD(et_compile_spec, key)
  FIELD(et_compile_spec, value)
  FIELD(et_compile_spec, value_size)

  BEGIN_STRUCT(et_backend_init_args)
  FIELD(et_backend_init_args, struct_size)
  FIELD(et_backend_init_args, processed)
  FIELD(et_backend_init_args, processed_size)
  FIELD(et_backend_init_args, compile_specs)
  FIELD(et_backend_init_args, num_compile_specs)
  FIELD(et_backend_init_args, named_data)

  BEGIN_STRUCT(et_backend_descriptor)
  FIELD(et_backend_descriptor, struct_size)
  FIELD(et_backend_descriptor, id)
  FIELD(et_backend_descriptor, user_data)
  FIELD(et_backend_descriptor, is_available)
  FIELD(et_backend_descriptor, init)
  FIELD(et_backend_descriptor, execute)
  FIELD(et_backend_descriptor, destroy)

#if ET_ABI_TARGET_MINOR >= 1
  BEGIN_STRUCT(et_trace_event)
  FIELD(et_trace_event, struct_size)
  FIELD(et_trace_event, kind)
  FIELD(et_trace_event, reserved)
  FIELD(et_trace_event, name)
  FIELD(et_trace_event, id)
  FIELD(et_trace_event, chain_id)
  FIELD(et_trace_event, debug_handle)
  FIELD(et_trace_event, timestamp_ns)
#if ET_ABI_TARGET_MINOR >= 3
  FIELD(et_trace_event, plugin)
  FIELD(et_trace_event, thread)
  FIELD(et_trace_event, reserved2)
#endif

  BEGIN_STRUCT(et_tracer_descriptor)
  FIELD(et_tracer_descriptor, struct_size)
  FIELD(et_tracer_descriptor, name)
  FIELD(et_tracer_descriptor, user_data)
  FIELD(et_tracer_descriptor, begin)
  FIELD(et_tracer_descriptor, end)
#if ET_ABI_TARGET_MINOR >= 3
  FIELD(et_tracer_descriptor, session_create)
  FIELD(et_tracer_descriptor, session_destroy)
  FIELD(et_tracer_descriptor, session_begin)
  FIELD(et_tracer_descriptor, session_end)
  FIELD(et_tracer_descriptor, session_value)
  FIELD(et_tracer_descriptor, session_result)
#if ET_ABI_TARGET_MINOR >= 5
  FIELD(et_tracer_descriptor, session_span)
#endif
#if ET_ABI_TARGET_MINOR >= 6
  FIELD(et_tracer_descriptor, session_records)

  BEGIN_STRUCT(et_trace_record)
  FIELD(et_trace_record, struct_size)
  FIELD(et_trace_record, start)
  FIELD(et_trace_record, end)
  FIELD(et_trace_record, name)
  FIELD(et_trace_record, plugin)
  FIELD(et_trace_record, kind)
  FIELD(et_trace_record, id)
  FIELD(et_trace_record, chain_id)
  FIELD(et_trace_record, flags)
  FIELD(et_trace_record, debug_handle)

  BEGIN_STRUCT(et_trace_batch)
  FIELD(et_trace_batch, struct_size)
  FIELD(et_trace_batch, records)
  FIELD(et_trace_batch, count)
  FIELD(et_trace_batch, anchor_ticks)
  FIELD(et_trace_batch, anchor_ns)
  FIELD(et_trace_batch, ns_per_tick)
  FIELD(et_trace_batch, flags)
  FIELD(et_trace_batch, reserved)
#endif

  BEGIN_STRUCT(et_trace_session_args)
  FIELD(et_trace_session_args, struct_size)
  FIELD(et_trace_session_args, label)
  FIELD(et_trace_session_args, debug_buffer_size)
#endif

  BEGIN_STRUCT(et_service_lease)
  FIELD(et_service_lease, struct_size)
  FIELD(et_service_lease, handle)
  FIELD(et_service_lease, generation)
  FIELD(et_service_lease, reserved)
#endif

  BEGIN_STRUCT(et_host_api)
  FIELD(et_host_api, struct_size)
  FIELD(et_host_api, abi_major)
  FIELD(et_host_api, abi_minor)
  FIELD(et_host_api, register_kernel)
  FIELD(et_host_api, register_backend)
  FIELD(et_host_api, error_create)
  FIELD(et_host_api, error_destroy)
  FIELD(et_host_api, log)
  FIELD(et_host_api, alloc)
  FIELD(et_host_api, free)
  FIELD(et_host_api, tensor_resize)
  FIELD(et_host_api, parallel_for)
  FIELD(et_host_api, num_threads)
  FIELD(et_host_api, named_data_get)
#if ET_ABI_TARGET_MINOR >= 1
  FIELD(et_host_api, register_tracer)
  FIELD(et_host_api, service_acquire)
  FIELD(et_host_api, service_release)
#endif
#if ET_ABI_TARGET_MINOR >= 2
  FIELD(et_host_api, error_code)
  FIELD(et_host_api, error_message)
  FIELD(et_host_api, scratch_alloc)
  FIELD(et_host_api, setting)
#endif
#if ET_ABI_TARGET_MINOR >= 3
  FIELD(et_host_api, trace_clock_ns)
  FIELD(et_host_api, trace_span)
#endif

  BEGIN_STRUCT(et_plugin_info)
  FIELD(et_plugin_info, struct_size)
  FIELD(et_plugin_info, abi_major)
  FIELD(et_plugin_info, abi_minor)
  FIELD(et_plugin_info, name)
  FIELD(et_plugin_info, version)
  FIELD(et_plugin_info, description)
  FIELD(et_plugin_info, init)

  BEGIN_STRUCT(et_abi_offer)
  FIELD(et_abi_offer, struct_size)
  FIELD(et_abi_offer, major)
  FIELD(et_abi_offer, min_minor)
  FIELD(et_abi_offer, max_minor)

  BEGIN_STRUCT(et_abi_answer)
  FIELD(et_abi_answer, struct_size)
  FIELD(et_abi_answer, major)
  FIELD(et_abi_answer, minor)
  FIELD(et_abi_answer, info)

  /* ------------------------------------------------------------------ enums */
  ENUM(ET_OK)
  ENUM(ET_ERR_INVALID_ARGUMENT)
  ENUM(ET_ERR_NOT_FOUND)
  ENUM(ET_ERR_ABI_MISMATCH)
  ENUM(ET_ERR_OUT_OF_MEMORY)
  ENUM(ET_ERR_NOT_SUPPORTED)
  ENUM(ET_ERR_INVALID_FILE)
  ENUM(ET_ERR_LOAD_FAILED)
  ENUM(ET_ERR_ALREADY_EXISTS)
  ENUM(ET_ERR_INTERNAL)
  ENUM(ET_ERR_INVALID_PROGRAM)
  ENUM(ET_ERR_INVALID_STATE)

  ENUM(ET_DTYPE_UINT8)
  ENUM(ET_DTYPE_INT8)
  ENUM(ET_DTYPE_INT16)
  ENUM(ET_DTYPE_INT32)
  ENUM(ET_DTYPE_INT64)
  ENUM(ET_DTYPE_FLOAT16)
  ENUM(ET_DTYPE_FLOAT32)
  ENUM(ET_DTYPE_FLOAT64)
  ENUM(ET_DTYPE_BOOL)
  ENUM(ET_DTYPE_BFLOAT16)

  ENUM(ET_SHAPE_STATIC)
  ENUM(ET_SHAPE_DYNAMIC_BOUND)
  ENUM(ET_SHAPE_DYNAMIC_UNBOUND)

  ENUM(ET_VALUE_NULL)
  ENUM(ET_VALUE_INT)
  ENUM(ET_VALUE_BOOL)
  ENUM(ET_VALUE_DOUBLE)
  ENUM(ET_VALUE_STRING)
  ENUM(ET_VALUE_TENSOR)
  ENUM(ET_VALUE_INT_LIST)
  ENUM(ET_VALUE_DOUBLE_LIST)
  ENUM(ET_VALUE_BOOL_LIST)
  ENUM(ET_VALUE_TENSOR_LIST)
  ENUM(ET_VALUE_OPTIONAL_TENSOR_LIST)

#if ET_ABI_TARGET_MINOR >= 1
  ENUM(ET_TRACE_METHOD)
  ENUM(ET_TRACE_OPERATOR)
  ENUM(ET_TRACE_DELEGATE)
  ENUM(ET_TRACE_CUSTOM)
#endif
#if ET_ABI_TARGET_MINOR >= 3
  ENUM(ET_TRACE_DELEGATE_EVENT)
  ENUM(ET_TRACE_WORKER)
#endif
#if ET_ABI_TARGET_MINOR >= 6
  ENUM(ET_TRACE_RECORD_NS)
  ENUM(ET_TRACE_BATCH_IN_RUN)
#endif

  ENUM(ET_LOG_TRACE)
  ENUM(ET_LOG_DEBUG)
  ENUM(ET_LOG_INFO)
  ENUM(ET_LOG_WARN)
  ENUM(ET_LOG_ERROR)
  return 0;
}
