// Typed kernels: a kernel is a C++ function of its schema's arguments,
//
//   et_error* add_out(Call call, const Tensor& self, const Tensor& other, Scalar alpha, Tensor& out);
//
// (the leading `Call` is optional: it names the operator and carries the call's
// context), listed once as
//
//   ETRT_KERNEL("aten::add.out", add_out, "self, other, alpha, out")
//
// and registered from that list. The layer checks the argument count once
// (the schema's arguments, then the returned value: the out tensor again, a
// Tensor list of several outputs, or nothing for "-> ()"), unboxes each
// et_value once into the parameter's type, words every argument error the same
// way ("aten::add.out: argument 2 'alpha' must be a Scalar, got Tensor"), and
// turns any C++ exception into an et_error before it reaches the C ABI.
//
// Per call it costs a few compares per argument: no allocation, no virtual
// dispatch, strings only on error paths.
//
// Parameter type            schema type     accepts
//   const Tensor& / Tensor&   Tensor          a tensor
//   const Tensor* / Tensor*   Tensor?         a tensor or None (null)
//   TensorList                Tensor[]        a tensor list without nulls
//   OptionalTensorList        Tensor?[]       a tensor list, entries may be null
//   int64_t                   int, SymInt     an int (or bool)
//   double                    float           a double (or int, bool)
//   bool                      bool            a bool (or int)
//   Scalar                    Scalar          an int, double or bool
//   IntArrayRef               int[], SymInt[] an int list
//   DoubleArrayRef            float[]         a double list
//   ScalarType                ScalarType      an int (dtype code)
//   std::string_view          str             a string
//   std::optional<T>          T?              None or what T accepts
//
// Prepared kernels (ABI 1.4): a kernel may come with a prepare function taking
// the same arguments after a `Prepare&` instead of the `Call`,
//
//   et_error* add_prepare(Prepare& prepare, const Tensor& self, const Tensor& other, Scalar alpha, Tensor& out);
//   ETRT_KERNEL("aten::add.out", (prepared<add_out, add_prepare>), "self, other, alpha, out")
//
// The host calls it once per instruction at method load; what it leaves in
// prepare.state (a PreparedState subclass; null declines) comes back in
// call.state on every call of that instruction and is deleted with the method.
// The kernel stays one function: with call.state it may skip what the state
// already knows, but it must check that what the state was made for still
// holds (dynamic shapes change between calls) and otherwise take its generic
// path. Kernels that do not prepare are unchanged.
#pragma once

#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "etrt/kernel_types.hpp"
#include "etrt/plugin.hpp"

namespace etrt::plugin {

// Returns the error of `expr`, if any, from the enclosing function.
#define ETRT_TRY(expr)                                  \
  do {                                                  \
    if (et_error* etrt_try_error_ = (expr)) return etrt_try_error_; \
  } while (0)

// One entry of a plugin's operator list.
struct KernelDef {
  const char* name;       // "aten::add.out"
  const char* signature;  // "self, other, alpha, out" [+ " -> ()" or " -> (a, b)"]
  et_kernel_fn fn;        // the boxed entry point, calling the typed function
  uint16_t params;        // schema arguments
  uint16_t returns;       // 0: nothing follows them; 1: the out tensor again; n > 1: a Tensor list of n
#if ET_ABI_TARGET_MINOR >= 4
  // Prepared kernels only (null otherwise): the boxed prepare, run_prepared and release.
  et_kernel_prepare_fn prepare = nullptr;
  et_kernel_run_prepared_fn run_prepared = nullptr;
  et_kernel_release_fn release = nullptr;
#endif
};

// Base of a kernel's per-instruction state (prepared kernels).
struct PreparedState {
  virtual ~PreparedState() = default;
};

// What a kernel may know about its call besides its arguments.
struct Call {
  const char* op;                   // the operator name, for messages
  et_exec_context* context;         // borrowed, may be null
  PreparedState* state = nullptr;   // the instruction's prepared state, or null (not prepared, or no method)
};

// What a prepare function gets besides the arguments, and where it leaves the state.
struct Prepare {
  const char* op;
  std::unique_ptr<PreparedState> state;  // null: the kernel declines to prepare this instruction
};

// prepared<F, P>: typed kernel F with its prepare function P, as ETRT_KERNEL's function.
template <auto F, auto P>
struct Prepared {};
template <auto F, auto P>
inline constexpr Prepared<F, P> prepared{};

namespace detail {

// The host table the boundary creates errors with; one per plugin (hidden visibility).
inline const et_host_api* kernel_host_api = nullptr;

// ------------------------------------------------------------ signatures
// constexpr, not consteval: they only run inside the consteval kernel(), and
// clang 14 refuses a consteval call whose argument is a consteval function's parameter.

constexpr size_t count_names(const char* begin, const char* end) {
  size_t names = 0;
  bool in_name = false;
  for (const char* p = begin; p != end; ++p) {
    bool name_char = *p != ',' && *p != ' ' && *p != '(' && *p != ')';
    if (name_char && !in_name) ++names;
    in_name = name_char;
  }
  return names;
}
constexpr const char* find_arrow(const char* s) {
  for (const char* p = s; *p != '\0'; ++p)
    if (p[0] == '-' && p[1] == '>') return p;
  return nullptr;
}
constexpr const char* end_of(const char* s) {
  while (*s != '\0') ++s;
  return s;
}

// The index-th comma-separated name of a signature (error paths only).
inline std::string_view name_at(const char* signature, size_t index) {
  std::string_view s(signature);
  s = s.substr(0, s.find("->"));
  for (size_t i = 0;; ++i) {
    size_t comma = s.find(',');
    std::string_view name = s.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (i == index) return name;
    if (comma == std::string_view::npos) return "?";
    s.remove_prefix(comma + 1);
  }
}
inline std::string_view returns_of(const char* signature) {
  std::string_view s(signature);
  size_t arrow = s.find("->");
  if (arrow == std::string_view::npos) return {};
  s.remove_prefix(arrow + 2);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// -------------------------------------------------------------- errors

[[gnu::cold, gnu::noinline]] inline et_error* make_error(int32_t code, const std::string& message) {
  return kernel_host_api->error_create(code, message.c_str());
}

[[gnu::cold, gnu::noinline]] inline et_error* count_error(const KernelDef& def, size_t nargs) {
  size_t expected = def.params + (def.returns > 0 ? 1 : 0);
  std::string names(def.signature, std::string_view(def.signature).find("->") == std::string_view::npos
                                       ? std::string_view(def.signature).size()
                                       : std::string_view(def.signature).find("->"));
  while (!names.empty() && names.back() == ' ') names.pop_back();
  std::string then = def.returns == 0   ? ""
                     : def.returns == 1 ? ", then the returned out tensor"
                                        : ", then the list of the returned outputs";
  return make_error(ET_ERR_INVALID_ARGUMENT, std::string(def.name) + ": expected " + std::to_string(expected) +
                                                 " arguments, got " + std::to_string(nargs) + " (" + names + then + ")");
}

[[gnu::cold, gnu::noinline]] inline et_error* null_error(const KernelDef& def, size_t index) {
  std::string what = index < def.params ? "argument " + std::to_string(index) + " '" +
                                              std::string(name_at(def.signature, index)) + "'"
                                        : std::string("the returned value");
  return make_error(ET_ERR_INVALID_ARGUMENT, std::string(def.name) + ": " + what + " is missing (null)");
}

[[gnu::cold, gnu::noinline]] inline et_error* argument_error(const KernelDef& def, size_t index,
                                                             const std::string& expected, const et_value& value) {
  std::string got = value_kind_name(value.tag);
  if (value.tag == ET_VALUE_TENSOR_LIST && value.items == nullptr && value.count > 0) got += " without items";
  if (value.tag == ET_VALUE_TENSOR_LIST && value.items != nullptr)
    for (size_t i = 0; i < value.count; ++i)
      if (static_cast<et_tensor* const*>(value.items)[i] == nullptr) {
        got += " with None at " + std::to_string(i);
        break;
      }
  return make_error(ET_ERR_INVALID_ARGUMENT, std::string(def.name) + ": argument " + std::to_string(index) + " '" +
                                                 std::string(name_at(def.signature, index)) + "' must be " + expected +
                                                 ", got " + got);
}

[[gnu::cold, gnu::noinline]] inline et_error* return_error(const KernelDef& def, const et_value& value) {
  std::string got = value_kind_name(value.tag);
  if (value.tag == ET_VALUE_TENSOR_LIST) got += " of " + std::to_string(value.count);
  std::string expected = def.returns == 1 ? "the returned out tensor"
                                          : "the list of the " + std::to_string(def.returns) + " returned outputs " +
                                                std::string(returns_of(def.signature));
  return make_error(ET_ERR_INVALID_ARGUMENT, std::string(def.name) + ": the last argument must be " + expected +
                                                 ", got " + got);
}

// An exception stops at the boundary (plugin.hpp); no allocation on this path (it may be out of memory).
[[gnu::cold, gnu::noinline]] inline et_error* exception_error(const KernelDef& def) {
  return current_exception_error(kernel_host_api, def.name);
}

// ------------------------------------------------------------ unboxing

// Unbox<T>: `Stored` is what read() fills from an et_value (false: wrong kind),
// get() turns it into the parameter, kExpected words the kind for messages.
template <typename T>
struct Unbox;

// The common case: what read() stores is the parameter itself.
template <typename T>
struct UnboxAsIs {
  using Stored = T;
  static T get(Stored s) { return s; }
};

template <>
struct Unbox<et_tensor> {
  using Stored = et_tensor*;
  static constexpr const char* kExpected = "a Tensor";
  static bool read(const et_value& v, Stored& s) {
    s = v.tensor;
    return v.tag == ET_VALUE_TENSOR && s != nullptr;
  }
  static et_tensor& get(Stored s) { return *s; }
};

template <>
struct Unbox<et_tensor*> {
  using Stored = et_tensor*;
  static constexpr const char* kExpected = "a Tensor or None";
  static bool read(const et_value& v, Stored& s) {
    s = v.tensor;
    if (v.tag == ET_VALUE_NULL) s = nullptr;
    return v.tag == ET_VALUE_NULL || (v.tag == ET_VALUE_TENSOR && s != nullptr);
  }
  static et_tensor* get(Stored s) { return s; }
};
template <>
struct Unbox<const et_tensor*> : Unbox<et_tensor*> {};

template <>
struct Unbox<TensorList> : UnboxAsIs<TensorList> {
  static constexpr const char* kExpected = "a Tensor list";
  static bool read(const et_value& v, Stored& s) {
    if (v.tag != ET_VALUE_TENSOR_LIST || (v.items == nullptr && v.count > 0)) return false;
    s.items = static_cast<et_tensor* const*>(v.items);
    s.count = v.count;
    for (size_t i = 0; i < s.count; ++i)
      if (s.items[i] == nullptr) return false;
    return true;
  }
};

template <>
struct Unbox<OptionalTensorList> : UnboxAsIs<OptionalTensorList> {
  static constexpr const char* kExpected = "a Tensor list";
  static bool read(const et_value& v, Stored& s) {
    bool list = v.tag == ET_VALUE_OPTIONAL_TENSOR_LIST || v.tag == ET_VALUE_TENSOR_LIST;
    if (!list || (v.items == nullptr && v.count > 0)) return false;
    s.items = static_cast<et_tensor* const*>(v.items);
    s.count = v.count;
    return true;
  }
};

template <>
struct Unbox<int64_t> : UnboxAsIs<int64_t> {
  static constexpr const char* kExpected = "an int";
  static bool read(const et_value& v, Stored& s) {
    s = v.as_int;
    return v.tag == ET_VALUE_INT || v.tag == ET_VALUE_BOOL;
  }
};

template <>
struct Unbox<double> : UnboxAsIs<double> {
  static constexpr const char* kExpected = "a float";
  static bool read(const et_value& v, Stored& s) {
    s = v.tag == ET_VALUE_DOUBLE ? v.as_double : static_cast<double>(v.as_int);
    return v.tag == ET_VALUE_DOUBLE || v.tag == ET_VALUE_INT || v.tag == ET_VALUE_BOOL;
  }
};

template <>
struct Unbox<bool> : UnboxAsIs<bool> {
  static constexpr const char* kExpected = "a bool";
  static bool read(const et_value& v, Stored& s) {
    s = v.as_int != 0;
    return v.tag == ET_VALUE_BOOL || v.tag == ET_VALUE_INT;
  }
};

template <>
struct Unbox<Scalar> : UnboxAsIs<Scalar> {
  static constexpr const char* kExpected = "a Scalar (int, float or bool)";
  static bool read(const et_value& v, Stored& s) {
    switch (v.tag) {
      case ET_VALUE_INT: s = Scalar::of_int(v.as_int); return true;
      case ET_VALUE_DOUBLE: s = Scalar::of_double(v.as_double); return true;
      case ET_VALUE_BOOL: s = Scalar::of_bool(v.as_int != 0); return true;
      default: return false;
    }
  }
};

// An int or float list: a view of the value's items.
template <typename Ref, et_value_tag kTag>
struct UnboxArray : UnboxAsIs<Ref> {
  static bool read(const et_value& v, Ref& s) {
    s = {static_cast<const typename Ref::value_type*>(v.items), v.count};
    return v.tag == kTag && (v.items != nullptr || v.count == 0);
  }
};

template <>
struct Unbox<IntArrayRef> : UnboxArray<IntArrayRef, ET_VALUE_INT_LIST> {
  static constexpr const char* kExpected = "an int list";
};

template <>
struct Unbox<DoubleArrayRef> : UnboxArray<DoubleArrayRef, ET_VALUE_DOUBLE_LIST> {
  static constexpr const char* kExpected = "a float list";
};

template <>
struct Unbox<ScalarType> : UnboxAsIs<ScalarType> {
  static constexpr const char* kExpected = "a ScalarType (int)";
  static bool read(const et_value& v, Stored& s) {
    s = static_cast<ScalarType>(v.as_int);
    return v.tag == ET_VALUE_INT;
  }
};

template <>
struct Unbox<std::string_view> : UnboxAsIs<std::string_view> {
  static constexpr const char* kExpected = "a string";
  static bool read(const et_value& v, Stored& s) {
    if (v.tag != ET_VALUE_STRING || (v.items == nullptr && v.count > 0)) return false;
    s = std::string_view(static_cast<const char*>(v.items), v.count);
    return true;
  }
};

template <typename T>
struct Unbox<std::optional<T>> {
  using Stored = std::optional<T>;
  static constexpr const char* kExpected = Unbox<T>::kExpected;
  static constexpr bool kOrNone = true;
  static bool read(const et_value& v, Stored& s) {
    if (v.tag == ET_VALUE_NULL) {
      s.reset();
      return true;
    }
    typename Unbox<T>::Stored inner{};
    if (!Unbox<T>::read(v, inner)) return false;
    s = Unbox<T>::get(inner);
    return true;
  }
  static std::optional<T> get(const Stored& s) { return s; }
};

template <typename P>
using UnboxOf = Unbox<std::remove_cvref_t<P>>;

// "a Tensor", "an int or None": the wording of what a parameter accepts (error paths only).
template <typename P>
std::string expected_kind() {
  if constexpr (requires { UnboxOf<P>::kOrNone; }) return std::string(UnboxOf<P>::kExpected) + " or None";
  else return UnboxOf<P>::kExpected;
}

template <typename P>
constexpr bool is_call = std::is_same_v<std::remove_cvref_t<P>, Call> || std::is_same_v<std::remove_cvref_t<P>, Prepare>;

// The returned value's kind (a Move in a program with control flow may change a value's kind between calls).
inline et_error* check_returned(const KernelDef& def, size_t params, et_value* const* args) {
  if (def.returns > 0) {
    const et_value& ret = *args[params];
    bool ok = def.returns == 1 ? ret.tag == ET_VALUE_TENSOR : ret.tag == ET_VALUE_TENSOR_LIST && ret.count == def.returns;
    if (!ok) return return_error(def, ret);
  }
  return nullptr;
}

// The argument count, nulls and the returned value, checked once per call (and per prepare).
inline et_error* check_arguments(const KernelDef& def, size_t params, et_value* const* args, size_t nargs) {
  if (nargs != params + (def.returns > 0 ? 1 : 0) && !(def.returns == 0 && nargs == params + 1))
    return count_error(def, nargs);
  if (args == nullptr) return count_error(def, 0);
  for (size_t i = 0; i < nargs; ++i)
    if (args[i] == nullptr) return null_error(def, i);
  return check_returned(def, params, args);
}

// A kernel with its prepare function (prepared<F, P>), by the value's type; defined below.
template <typename T>
struct BoxedPrepared;

// The boxed entry point of typed function F; its first parameter may be the Call (a kernel) or the Prepare& (a
// prepare function). F may also be prepared<kernel, prepare>.
template <auto F>
struct Boxed : BoxedPrepared<std::remove_cv_t<decltype(F)>> {};

// The parameters after the leading Call / Prepare&, for comparing a kernel's with its prepare function's.
template <typename... P>
struct ParamList {};
template <typename First, typename... Rest>
ParamList<std::remove_cvref_t<Rest>...> params_after_lead(et_error* (*)(First, Rest...));

// The parameters F takes from the program: all of them, or all after the leading Call / Prepare&.
template <bool kDropLead, typename... P>
struct SchemaParams {
  using type = ParamList<P...>;
};
template <typename First, typename... Rest>
struct SchemaParams<true, First, Rest...> {
  using type = ParamList<Rest...>;
};

template <typename... P, et_error* (*F)(P...)>
struct Boxed<F> {
  template <typename First, typename... Rest>
  static constexpr bool first_is_call() { return is_call<First>; }
  static constexpr bool kTakesCall = sizeof...(P) > 0 && first_is_call<P..., void>();
  static constexpr size_t kParams = sizeof...(P) - (kTakesCall ? 1 : 0);
  using Params = typename SchemaParams<kTakesCall, P...>::type;
  using Indices = std::make_index_sequence<kParams>;

  static et_error* call(void* user_data, et_exec_context* context, et_value* const* args, size_t nargs) noexcept {
    return call_with<true>(user_data, nullptr, context, args, nargs);
  }
  // kCheckCount false: the count and nulls were checked already (run_prepared gets the arguments prepare checked).
  template <bool kCheckCount>
  static et_error* call_with(void* user_data, PreparedState* state, et_exec_context* context, et_value* const* args,
                             size_t nargs) noexcept {
    const KernelDef& def = *static_cast<const KernelDef*>(user_data);
    try {  // the checks too: their messages allocate
      if constexpr (kCheckCount) ETRT_TRY(check_arguments(def, kParams, args, nargs));
      else ETRT_TRY(check_returned(def, kParams, args));
      if constexpr (kTakesCall) {
        Call c{def.name, context, state};
        return unbox_and_call(def, args, Params{}, Indices{}, c);
      } else {
        return unbox_and_call(def, args, Params{}, Indices{});
      }
    } catch (...) {
      return exception_error(def);
    }
  }
  // F(lead, the unboxed arguments): lead is the Call or the Prepare&; arguments checked by check_arguments.
  template <typename Lead>
  static et_error* invoke(const KernelDef& def, Lead& lead, et_value* const* args) {
    return unbox_and_call(def, args, Params{}, Indices{}, lead);
  }

 private:
  // F(lead..., the unboxed arguments Q...); lead is empty for a kernel without a Call.
  template <typename... Q, size_t... I, typename... Lead>
  static et_error* unbox_and_call(const KernelDef& def, et_value* const* args, ParamList<Q...>,
                                  std::index_sequence<I...>, Lead&... lead) {
    std::tuple<typename UnboxOf<Q>::Stored...> stored;
    size_t bad = sizeof...(Q);
    bool ok = ((UnboxOf<Q>::read(*args[I], std::get<I>(stored)) || (bad = I, false)) && ...);
    if (!ok) return argument_error(def, bad, expected_at(bad, std::type_identity<Q>{}...), *args[bad]);
    return F(lead..., UnboxOf<Q>::get(std::get<I>(stored))...);
  }
  template <typename... Q>
  [[gnu::cold, gnu::noinline]] static std::string expected_at(size_t index, std::type_identity<Q>...) {
    std::string texts[] = {expected_kind<Q>()..., ""};
    return texts[index];
  }
};

#if ET_ABI_TARGET_MINOR >= 4
// A kernel F with its prepare function P: the boxed 1.4 entries.
template <auto F, auto P>
struct BoxedPrepared<Prepared<F, P>> : Boxed<F> {
  static_assert(Boxed<F>::kTakesCall && Boxed<P>::kTakesCall,
                "prepared<F, P>: F takes a leading Call, P a leading Prepare&");
  static_assert(std::is_same_v<decltype(params_after_lead(F)), decltype(params_after_lead(P))>,
                "prepared<F, P>: the prepare function must take the kernel's arguments");

  static et_error* prepare(void* user_data, et_value* const* args, size_t nargs, void** out_state) noexcept {
    const KernelDef& def = *static_cast<const KernelDef*>(user_data);
    *out_state = nullptr;
    try {
      ETRT_TRY(check_arguments(def, Boxed<F>::kParams, args, nargs));
      Prepare prepare{def.name, nullptr};
      ETRT_TRY(Boxed<P>::invoke(def, prepare, args));
      *out_state = prepare.state.release();
      return nullptr;
    } catch (...) {
      return exception_error(def);
    }
  }
  static et_error* run_prepared(void* user_data, void* state, et_exec_context* context, et_value* const* args,
                                size_t nargs) noexcept {
    // The host passes the very arguments (array and count) prepare checked.
    return Boxed<F>::template call_with<false>(user_data, static_cast<PreparedState*>(state), context, args, nargs);
  }
  static void release(void*, void* state) noexcept { delete static_cast<PreparedState*>(state); }
};
#endif

}  // namespace detail

// A KernelDef for typed function F; `signature` names its schema arguments in
// order (checked against F's parameters at compile time), optionally followed
// by "-> ()" (returns nothing) or "-> (a, b, ...)" (returns several outputs).
template <auto F>
consteval KernelDef kernel(const char* name, const char* signature) {
  const char* arrow = detail::find_arrow(signature);
  const char* params_end = arrow != nullptr ? arrow : detail::end_of(signature);
  size_t params = detail::count_names(signature, params_end);
  size_t returns = arrow != nullptr ? detail::count_names(arrow + 2, detail::end_of(signature)) : 1;
  if (params != detail::Boxed<F>::kParams)
    throw "ETRT_KERNEL: the signature names a different number of arguments than the function takes";
  KernelDef def{name, signature, &detail::Boxed<F>::call, static_cast<uint16_t>(params),
                static_cast<uint16_t>(returns)};
#if ET_ABI_TARGET_MINOR >= 4
  if constexpr (requires { &detail::Boxed<F>::prepare; }) {
    def.prepare = &detail::Boxed<F>::prepare;
    def.run_prepared = &detail::Boxed<F>::run_prepared;
    def.release = &detail::Boxed<F>::release;
  }
#endif
  return def;
}

// The descriptor the host registers for `def` (its boxed entry points, user_data = &def).
inline et_kernel_descriptor descriptor_of(const KernelDef& def) {
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  kernel.name = def.name;
  kernel.fn = def.fn;
  kernel.user_data = const_cast<KernelDef*>(&def);
#if ET_ABI_TARGET_MINOR >= 4
  kernel.prepare = def.prepare;
  kernel.run_prepared = def.run_prepared;
  kernel.release = def.release;
#endif
  return kernel;
}

// Registers every kernel of `defs` (which must outlive the plugin: a static table).
inline et_error* register_kernels(const Host& host, std::span<const KernelDef> defs) {
  detail::kernel_host_api = host.api();
  for (const KernelDef& def : defs) {
    et_kernel_descriptor kernel = descriptor_of(def);
    if (et_error* error = host.api()->register_kernel(host.self(), &kernel)) return error;
  }
  return nullptr;
}

}  // namespace etrt::plugin
