// The XNNPACK this plugin runs: a private copy of Debian's libXNNPACK whose
// pthreadpool is etrt's shim (pthreadpool_shim.c), so XNNPACK runs on the
// host's one pool; both files sit in xnnpack_private/ beside the plugin and are
// opened by path (found with etrt::plugin::own_library_path), never by a library search.
//
// Why not an ordinary link dependency: the plugin is dlopen'ed by libetrt with
// RTLD_LOCAL, but a library's undefined symbols are still looked up in the
// process' global scope first. A library exporting xnn_* (a decoy, or another
// XNNPACK loaded RTLD_GLOBAL before etrt) would then take the plugin's calls --
// and, because Debian's libXNNPACK calls its own exported functions through the
// PLT, XNNPACK's internal calls too. Opening libXNNPACK here with RTLD_DEEPBIND
// makes the library resolve its symbols in itself and its own dependencies
// first, and taking every entry point with dlsym on that handle makes the
// plugin's calls reach it. tests/xnnpack/decoy_test.cpp proves both.
#pragma once

#include <string>
#include <type_traits>

#include <pthreadpool.h>
#include <xnnpack.h>

namespace etrt::xnn {

// Every XNNPACK function the plugin calls, typed from the header.
#define ETRT_XNN_FUNCTIONS(X)                 \
  X(xnn_initialize)                           \
  X(xnn_create_subgraph)                      \
  X(xnn_delete_subgraph)                      \
  X(xnn_define_tensor_value)                  \
  X(xnn_define_quantized_tensor_value)        \
  X(xnn_define_channelwise_quantized_tensor_value) \
  X(xnn_define_convert)                       \
  X(xnn_define_fully_connected)               \
  X(xnn_define_convolution_2d)                \
  X(xnn_define_depthwise_convolution_2d)      \
  X(xnn_define_deconvolution_2d)              \
  X(xnn_define_prelu)                         \
  X(xnn_define_static_resize_bilinear_2d)     \
  X(xnn_define_add2)                          \
  X(xnn_define_subtract)                      \
  X(xnn_define_multiply2)                     \
  X(xnn_define_divide)                        \
  X(xnn_define_minimum2)                      \
  X(xnn_define_maximum2)                      \
  X(xnn_define_clamp)                         \
  X(xnn_define_softmax)                       \
  X(xnn_define_sigmoid)                       \
  X(xnn_define_abs)                           \
  X(xnn_define_negate)                        \
  X(xnn_define_square)                        \
  X(xnn_define_square_root)                   \
  X(xnn_define_floor)                         \
  X(xnn_define_ceiling)                       \
  X(xnn_define_hardswish)                     \
  X(xnn_define_leaky_relu)                    \
  X(xnn_define_elu)                           \
  X(xnn_define_max_pooling_2d)                \
  X(xnn_define_average_pooling_2d)            \
  X(xnn_define_global_average_pooling_2d)     \
  X(xnn_define_static_reshape)                \
  X(xnn_define_static_constant_pad)           \
  X(xnn_create_runtime_v2)                    \
  X(xnn_setup_runtime)                        \
  X(xnn_invoke_runtime)                       \
  X(xnn_delete_runtime)

// pthreadpool.h overloads these in C++ (functor templates), so they are typed by hand.
#define ETRT_POOL_FUNCTIONS(X)                                                                  \
  X(pthreadpool_get_threads_count, size_t (*)(pthreadpool_t))                                   \
  X(pthreadpool_parallelize_1d_tile_1d,                                                         \
    void (*)(pthreadpool_t, pthreadpool_task_1d_tile_1d_t, void*, size_t, size_t, uint32_t))

// The table takes each entry's type from its prototype, deprecated ones included: with the XNNPACK
// built from source (ETRT_XNNPACK_STATIC) those entries hold adapters over the current API
// (xnn_library_static.cpp), and no deprecated function is ever called.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct Library {
#define ETRT_XNN_MEMBER(name) decltype(&::name) name = nullptr;
  ETRT_XNN_FUNCTIONS(ETRT_XNN_MEMBER)
#undef ETRT_XNN_MEMBER
#define ETRT_POOL_MEMBER(name, type) std::type_identity_t<type> name = nullptr;
  ETRT_POOL_FUNCTIONS(ETRT_POOL_MEMBER)
#undef ETRT_POOL_MEMBER
  void* handle = nullptr;
  std::string path;       // the file the loader actually mapped
  bool deep_bind = false; // opened with RTLD_DEEPBIND
};
#pragma GCC diagnostic pop

// The one compile-time switch between the two XNNPACKs the plugin can run on:
// - Debian's 2022 library, opened by path at first use (xnn_library.cpp), the default;
// - XNNPACK built from pinned source (ETRT_XNNPACK_FROM_SOURCE) and linked statically with hidden
//   symbols (xnn_library_static.cpp), which defines ETRT_XNNPACK_STATIC.
#ifdef ETRT_XNNPACK_STATIC
inline constexpr bool kXnnpackLinkedStatically = true;
#else
inline constexpr bool kXnnpackLinkedStatically = false;
#endif
// The current XNNPACK computes a global average as a mean reduction, which takes no output range:
// the delegate bounds it with a clamp node of its own.
inline constexpr bool kGlobalAveragePoolingTakesRange = !kXnnpackLinkedStatically;

// Opens libXNNPACK (once per process; with the static XNNPACK, fills the table from the
// linked functions), resolves every function and calls xnn_initialize. Returns nullptr and sets *error when anything fails.
const Library* library(std::string* error);

// An ETRT_* setting read through the host (plugin_entry.cpp): plugins never read the environment themselves.
const char* host_setting(const char* name);

const char* status_name(int status);

}  // namespace etrt::xnn
