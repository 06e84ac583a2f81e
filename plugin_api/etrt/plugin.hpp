// Header-only C++ helpers for plugin authors, over plugin_api.h. Nothing here
// links against libetrt; everything goes through the host table. Kernels are
// written against etrt/kernel.hpp (typed arguments, one list of operators).
#pragma once

#include <cxxabi.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "etrt/plugin_api.h"

static_assert(offsetof(et_tensor, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(et_value, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(et_plugin_info, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(et_host_api, struct_size) == 0, "struct_size must come first");

namespace etrt::plugin {

inline size_t element_size(int32_t dtype) {
  switch (dtype) {
    case ET_DTYPE_UINT8: case ET_DTYPE_INT8: case ET_DTYPE_BOOL: return 1;
    case ET_DTYPE_INT16: case ET_DTYPE_FLOAT16: case ET_DTYPE_BFLOAT16: return 2;
    case ET_DTYPE_INT32: case ET_DTYPE_FLOAT32: return 4;
    case ET_DTYPE_INT64: case ET_DTYPE_FLOAT64: return 8;
    default: return 0;
  }
}

inline const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case ET_DTYPE_UINT8: return "uint8";
    case ET_DTYPE_INT8: return "int8";
    case ET_DTYPE_INT16: return "int16";
    case ET_DTYPE_INT32: return "int32";
    case ET_DTYPE_INT64: return "int64";
    case ET_DTYPE_FLOAT16: return "float16";
    case ET_DTYPE_FLOAT32: return "float32";
    case ET_DTYPE_FLOAT64: return "float64";
    case ET_DTYPE_BOOL: return "bool";
    case ET_DTYPE_BFLOAT16: return "bfloat16";
    default: return "unknown";
  }
}

inline size_t numel(const et_tensor& t) {
  size_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) n *= static_cast<size_t>(t.sizes[i]);
  return n;
}

// Contiguous in the default (row-major) dim order.
inline bool is_contiguous(const et_tensor& t) {
  int64_t expected = 1;
  for (int32_t i = t.rank - 1; i >= 0; --i) {
    if (t.dim_order != nullptr && t.dim_order[i] != static_cast<uint8_t>(i)) return false;
    if (t.sizes[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.sizes[i];
  }
  return true;
}

// "[2, 3, 4]": the one wording of a shape in every message.
inline std::string shape_string(const int64_t* sizes, int64_t rank) {
  std::string s = "[";
  for (int64_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}
inline std::string shape_string(const et_tensor& t) { return shape_string(t.sizes, t.rank); }

// "(0, 2, 3, 1)"; a tensor without a dim order is in the default order.
inline std::string dim_order_string(const et_tensor& t) {
  std::string s = "(";
  for (int32_t i = 0; i < t.rank; ++i)
    s += (i ? ", " : "") + std::to_string(t.dim_order != nullptr ? t.dim_order[i] : i);
  return s + ")";
}

// Dense strides for `sizes` laid out in `dim_order` (outermost first; null: default order).
inline void dense_strides(const int64_t* sizes, const uint8_t* dim_order, int32_t rank, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t i = rank; i-- > 0;) {
    int32_t dim = dim_order != nullptr ? dim_order[i] : i;
    strides[dim] = stride;
    stride *= sizes[dim] > 1 ? sizes[dim] : 1;
  }
}

// Dense in its own dim order (size-1 dimensions may carry any stride; an empty
// tensor has no element to misplace, NumPy gives it strides of 0).
inline bool is_dense_in_dim_order(const et_tensor& t) {
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.sizes[i] == 0) return true;
  int64_t expected = 1;
  for (int32_t i = t.rank; i-- > 0;) {
    int32_t dim = t.dim_order != nullptr ? t.dim_order[i] : i;
    if (t.sizes[dim] != 1 && t.strides[dim] != expected) return false;
    expected *= t.sizes[dim];
  }
  return true;
}

// A byte count from a setting: "123", "64K", "1.5G", "8GB" (K, M, G, T: powers of 1024).
// False for anything else, a negative or non-finite number, or one beyond 2^64.
inline bool parse_byte_size(const char* text, uint64_t* bytes) {
  if (text == nullptr) return false;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || !(value >= 0) || std::isinf(value)) return false;
  double scale = 1;
  switch (*end) {
    case 'K': case 'k': scale = 1024.0; ++end; break;
    case 'M': case 'm': scale = 1024.0 * 1024; ++end; break;
    case 'G': case 'g': scale = 1024.0 * 1024 * 1024; ++end; break;
    case 'T': case 't': scale = 1024.0 * 1024 * 1024 * 1024; ++end; break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || value * scale >= 18446744073709551615.0) return false;
  *bytes = static_cast<uint64_t>(value * scale);
  return true;
}

// "32 GiB", "1536 KiB", "1000 bytes": the largest unit that divides the count exactly.
inline std::string byte_size_text(uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

// ------------------------------------------------------------ exceptions stop at the ABI
//
// No C++ exception may leave a function the host calls (the entry point, init,
// a kernel, a backend's or a tracer's functions): the host may be C, and a
// plugin's exception reaching it would end the process. The host catches what
// escapes anyway, but then only says that the plugin broke the rule. fence()
// keeps it inside the plugin, as an error the plugin words:
//
//   et_error* init(const et_host_api* host, et_plugin_handle* self) {
//     return etrt::plugin::fence(host, "my_plugin init", [&] { ...; return host->register_kernel(self, &k); });
//   }
//
// Typed kernels (etrt/kernel.hpp) are fenced already.

// What a catch block caught.
enum class Caught { kOutOfMemory, kException, kUnknown };  // std::bad_alloc, another std::exception, anything else

// The exception being handled: its what() in `what` (empty for kUnknown) and,
// when `type` is given, its type's name ("std::runtime_error"); both cut to
// their size. Call it inside a catch block. Allocates nothing but the demangled
// type name (falling back to the mangled one): memory may be what ran out.
inline Caught describe_current_exception(char* what, size_t what_size, char* type = nullptr,
                                         size_t type_size = 0) noexcept {
  if (type != nullptr && type_size > 0) {
    const std::type_info* caught_type = abi::__cxa_current_exception_type();
    int status = -1;
    char* demangled = caught_type != nullptr ? abi::__cxa_demangle(caught_type->name(), nullptr, nullptr, &status)
                                             : nullptr;
    std::snprintf(type, type_size, "%s",
                  status == 0 && demangled != nullptr ? demangled : caught_type != nullptr ? caught_type->name() : "?");
    std::free(demangled);
  }
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    std::snprintf(what, what_size, "%s", e.what());
    return Caught::kOutOfMemory;
  } catch (const std::exception& e) {
    std::snprintf(what, what_size, "%s", e.what());
    return Caught::kException;
  } catch (...) {
    if (what_size > 0) *what = '\0';
    return Caught::kUnknown;
  }
}

// The same as one text, "std::runtime_error: boom" ("int (not a std::exception)"),
// for messages built with strings: it may throw std::bad_alloc.
inline std::string current_exception_text(bool* out_of_memory = nullptr) {
  char what[400], type[160];
  Caught caught = describe_current_exception(what, sizeof what, type, sizeof type);
  if (out_of_memory != nullptr) *out_of_memory = caught == Caught::kOutOfMemory;
  return caught == Caught::kUnknown ? std::string(type) + " (not a std::exception)" : std::string(type) + ": " + what;
}

// The exception being handled as an error: "<where>: out of memory"
// (ET_ERR_OUT_OF_MEMORY), "<where>: internal error: <what()>" or "<where>:
// internal error (unknown exception)" (ET_ERR_INTERNAL). Call it inside a catch block.
[[gnu::cold, gnu::noinline]] inline et_error* current_exception_error(const et_host_api* host,
                                                                      const char* where) noexcept {
  char what[400];
  char message[512];
  switch (describe_current_exception(what, sizeof what)) {
    case Caught::kOutOfMemory:
      std::snprintf(message, sizeof message, "%s: out of memory", where);
      return host->error_create(ET_ERR_OUT_OF_MEMORY, message);
    case Caught::kException:
      std::snprintf(message, sizeof message, "%s: internal error: %s", where, what);
      break;
    case Caught::kUnknown:
      std::snprintf(message, sizeof message, "%s: internal error (unknown exception)", where);
      break;
  }
  return host->error_create(ET_ERR_INTERNAL, message);
}

// Runs fn() and keeps any exception it throws inside the plugin. When fn returns
// an et_error* (init, kernels, a backend's init and execute, a tracer's
// session_create and session_result), an exception becomes the error
// current_exception_error() makes; when it returns nothing (a tracer's events, a
// backend's destroy), the exception is logged through the host, naming `where`.
template <typename Fn>
auto fence(const et_host_api* host, const char* where, Fn&& fn) noexcept -> decltype(fn()) {
  using Result = decltype(fn());
  static_assert(std::is_same_v<Result, et_error*> || std::is_void_v<Result>,
                "fence(host, where, fn): fn returns et_error* or nothing; use fence_value for other results");
  try {
    return fn();
  } catch (...) {
    if constexpr (std::is_same_v<Result, et_error*>) {
      return current_exception_error(host, where);
    } else {
      char what[400], type[160];
      describe_current_exception(what, sizeof what, type, sizeof type);
      char message[600];
      std::snprintf(message, sizeof message, "%s threw %s: %s", where, type, what);
      if (host != nullptr && host->log != nullptr) host->log(nullptr, ET_LOG_ERROR, message);
    }
  }
}

// The same for a function of another result (the entry point's status,
// is_available): an exception gives `failed`.
template <typename Fn, typename Result = decltype(std::declval<Fn&>()())>
Result fence_value(Result failed, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (...) {
    return failed;
  }
}

// The host table and this plugin's handle, kept by the plugin after init.
class Host {
 public:
  void bind(const et_host_api* api, et_plugin_handle* self) { api_ = api, self_ = self; }
  const et_host_api* api() const { return api_; }
  et_plugin_handle* self() const { return self_; }

  et_error* error(int32_t code, const std::string& message) const {
    return api_->error_create(code, message.c_str());
  }
  void log(int32_t level, const std::string& message) const { api_->log(self_, level, message.c_str()); }
  void parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) const {
    api_->parallel_for(range, grain, body, context);
  }
  // Runs fn(begin, end) over [0, range) on the host's pool.
  template <typename Fn>
  void parallel_for(size_t range, size_t grain, Fn&& fn) const {
    using Body = std::remove_reference_t<Fn>;
    api_->parallel_for(range, grain,
                       [](void* context, size_t begin, size_t end) { (*static_cast<Body*>(context))(begin, end); },
                       const_cast<void*>(static_cast<const void*>(&fn)));
  }
  et_error* register_kernel(const char* name, et_kernel_fn fn, void* user_data = nullptr) const {
    et_kernel_descriptor kernel{};
    kernel.struct_size = sizeof kernel;
    kernel.name = name;
    kernel.fn = fn;
    kernel.user_data = user_data;
    return api_->register_kernel(self_, &kernel);
  }

 private:
  const et_host_api* api_ = nullptr;
  et_plugin_handle* self_ = nullptr;
};

}  // namespace etrt::plugin

// ------------------------------------------------------------ the entry point
//
// ETRT_PLUGIN(name, version, description, init) writes what every plugin's
// entry point is: its et_plugin_info, reporting ET_ABI_TARGET_MINOR (the minor
// the plugin is built for, so one built for an older minor says so), the
// exported et_plugin_entry, which negotiates the ABI version with the host
// (et_plugin_answer_offer), and init called inside fence(), so an exception
// it throws becomes the load's error instead of crossing the C ABI. Once per
// plugin, at global scope, after init:
//
//   et_error* init(const et_host_api* host, et_plugin_handle* self) {
//     host_helper.bind(host, self);
//     return etrt::plugin::register_kernels(host_helper, kKernels);
//   }
//   ETRT_PLUGIN("my_ops", "1.0.0", "my custom operators", init)
//
// init is anything callable as init(host, self) returning et_error*, a lambda
// too (it may hold commas: it is the macro's last argument). name, version and
// description must live as long as the plugin (string literals). Writing
// et_plugin_info and et_plugin_entry by hand keeps working: a helper, not a rule.
#define ETRT_PLUGIN(name, version, description, ...)                                                          \
  namespace {                                                                                                 \
  et_error* etrt_plugin_fenced_init_(const et_host_api* etrt_host_, et_plugin_handle* etrt_self_) noexcept {  \
    return ::etrt::plugin::fence(etrt_host_, "init",                                                          \
                                 [&]() -> et_error* { return (__VA_ARGS__)(etrt_host_, etrt_self_); });       \
  }                                                                                                           \
  constexpr et_plugin_info etrt_plugin_info_ = {sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR,    \
                                                (name), (version), (description), etrt_plugin_fenced_init_}; \
  }                                                                                                           \
  extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {     \
    return et_plugin_answer_offer(offer, answer, &etrt_plugin_info_);                                         \
  }

// What earlier SDK minors offered and today's replaces: compiles, with a warning naming the replacement.
#include "etrt/deprecated.hpp"
