// The XNNPACK built from pinned source (ETRT_XNNPACK_FROM_SOURCE), linked into this plugin
// statically with hidden symbols: the table is filled from the linked functions. Nothing is
// opened, and no other library in the process can answer the plugin's or XNNPACK's own calls
// (hidden symbols bind inside the plugin at link time), so neither RTLD_DEEPBIND nor private
// copies are needed. Its pthreadpool is etrt's shim, linked in as well.
//
// The functions the current XNNPACK deprecates are filled with adapters over the API that replaces
// them (binary, unary and reduce nodes; reshape then setup), so the delegate keeps one way of
// defining its graph for both XNNPACKs.
#include <cmath>
#include <mutex>
#include <string>

#include "xnn_library.h"

namespace etrt::xnn {
namespace {

static_assert(kXnnpackLinkedStatically, "xnn_library_static.cpp is built only with ETRT_XNNPACK_STATIC");

template <xnn_binary_operator Kind>
xnn_status binary_with_range(xnn_subgraph_t sg, float lo, float hi, uint32_t a, uint32_t b, uint32_t out,
                             uint32_t flags) {
  const xnn_binary_params range{lo, hi};
  return xnn_define_binary(sg, Kind, &range, a, b, out, flags);
}

template <xnn_binary_operator Kind>
xnn_status binary(xnn_subgraph_t sg, uint32_t a, uint32_t b, uint32_t out, uint32_t flags) {
  return xnn_define_binary(sg, Kind, nullptr, a, b, out, flags);
}

template <xnn_unary_operator Kind>
xnn_status unary(xnn_subgraph_t sg, uint32_t in, uint32_t out, uint32_t flags) {
  return xnn_define_unary(sg, Kind, nullptr, in, out, flags);
}

xnn_status clamp(xnn_subgraph_t sg, float lo, float hi, uint32_t in, uint32_t out, uint32_t flags) {
  xnn_unary_params params{};
  params.clamp.min = lo;
  params.clamp.max = hi;
  return xnn_define_unary(sg, xnn_unary_clamp, &params, in, out, flags);
}

xnn_status leaky_relu(xnn_subgraph_t sg, float slope, uint32_t in, uint32_t out, uint32_t flags) {
  xnn_unary_params params{};
  params.leaky_relu.negative_slope = slope;
  return xnn_define_unary(sg, xnn_unary_leaky_relu, &params, in, out, flags);
}

xnn_status elu(xnn_subgraph_t sg, float alpha, uint32_t in, uint32_t out, uint32_t flags) {
  xnn_unary_params params{};
  params.elu.alpha = alpha;
  return xnn_define_unary(sg, xnn_unary_elu, &params, in, out, flags);
}

// A mean over height and width of an NHWC tensor, dimensions kept. It takes no output range: the
// delegate adds a clamp node when the program has one (kGlobalAveragePoolingTakesRange).
xnn_status global_average_pooling_2d(xnn_subgraph_t sg, float lo, float hi, uint32_t in, uint32_t out,
                                     uint32_t flags) {
  if (!(std::isinf(lo) && lo < 0 && std::isinf(hi) && hi > 0)) return xnn_status_unsupported_parameter;
  const size_t height_and_width[] = {1, 2};
  return xnn_define_static_reduce(sg, xnn_reduce_mean, 2, height_and_width, in, out, flags | XNN_FLAG_KEEP_DIMS);
}

// The shapes were fixed when the values were defined: reshape (a no-op after the first), then bind.
xnn_status setup(xnn_runtime_t runtime, size_t count, const xnn_external_value* values) {
  if (xnn_status st = xnn_reshape_runtime(runtime); st != xnn_status_success) return st;
  return xnn_setup_runtime_v2(runtime, count, values);
}

std::once_flag g_once;
const Library* g_library = nullptr;
const std::string* g_error = nullptr;

void fill_library() {
  auto* lib = new Library();
  lib->xnn_initialize = &::xnn_initialize;
  lib->xnn_create_subgraph = &::xnn_create_subgraph;
  lib->xnn_delete_subgraph = &::xnn_delete_subgraph;
  lib->xnn_define_tensor_value = &::xnn_define_tensor_value;
  lib->xnn_define_quantized_tensor_value = &::xnn_define_quantized_tensor_value;
  lib->xnn_define_channelwise_quantized_tensor_value = &::xnn_define_channelwise_quantized_tensor_value;
  lib->xnn_define_convert = &unary<xnn_unary_convert>;
  lib->xnn_define_fully_connected = &::xnn_define_fully_connected;
  lib->xnn_define_convolution_2d = &::xnn_define_convolution_2d;
  lib->xnn_define_depthwise_convolution_2d = &::xnn_define_depthwise_convolution_2d;
  lib->xnn_define_deconvolution_2d = &::xnn_define_deconvolution_2d;
  lib->xnn_define_prelu = &binary<xnn_binary_prelu>;
  lib->xnn_define_static_resize_bilinear_2d = &::xnn_define_static_resize_bilinear_2d;
  lib->xnn_define_add2 = &binary_with_range<xnn_binary_add>;
  lib->xnn_define_subtract = &binary_with_range<xnn_binary_subtract>;
  lib->xnn_define_multiply2 = &binary_with_range<xnn_binary_multiply>;
  lib->xnn_define_divide = &binary_with_range<xnn_binary_divide>;
  lib->xnn_define_minimum2 = &binary<xnn_binary_minimum>;
  lib->xnn_define_maximum2 = &binary<xnn_binary_maximum>;
  lib->xnn_define_clamp = &clamp;
  lib->xnn_define_softmax = &::xnn_define_softmax;
  lib->xnn_define_sigmoid = &unary<xnn_unary_sigmoid>;
  lib->xnn_define_abs = &unary<xnn_unary_abs>;
  lib->xnn_define_negate = &unary<xnn_unary_negate>;
  lib->xnn_define_square = &unary<xnn_unary_square>;
  lib->xnn_define_square_root = &unary<xnn_unary_square_root>;
  lib->xnn_define_floor = &unary<xnn_unary_floor>;
  lib->xnn_define_ceiling = &unary<xnn_unary_ceiling>;
  lib->xnn_define_hardswish = &unary<xnn_unary_hardswish>;
  lib->xnn_define_leaky_relu = &leaky_relu;
  lib->xnn_define_elu = &elu;
  lib->xnn_define_max_pooling_2d = &::xnn_define_max_pooling_2d;
  lib->xnn_define_average_pooling_2d = &::xnn_define_average_pooling_2d;
  lib->xnn_define_global_average_pooling_2d = &global_average_pooling_2d;
  lib->xnn_define_static_reshape = &::xnn_define_static_reshape;
  lib->xnn_define_static_constant_pad = &::xnn_define_static_constant_pad;
  lib->xnn_create_runtime_v2 = &::xnn_create_runtime_v2;
  lib->xnn_setup_runtime = &setup;
  lib->xnn_invoke_runtime = &::xnn_invoke_runtime;
  lib->xnn_delete_runtime = &::xnn_delete_runtime;
  lib->pthreadpool_get_threads_count = &::pthreadpool_get_threads_count;
  lib->pthreadpool_parallelize_1d_tile_1d = &::pthreadpool_parallelize_1d_tile_1d;
  lib->path = "(linked statically)";
  lib->deep_bind = false;
  if (xnn_status status = xnn_initialize(nullptr); status != xnn_status_success) {
    g_error = new std::string(std::string("xnn_initialize failed: ") + status_name(status));
    delete lib;
    return;
  }
  g_library = lib;
}

}  // namespace

const Library* library(std::string* error) {
  std::call_once(g_once, fill_library);
  if (g_library == nullptr && error != nullptr) *error = g_error ? *g_error : "XNNPACK not initialised";
  return g_library;
}

}  // namespace etrt::xnn
