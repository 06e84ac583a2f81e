// EValue: one input or output of a method (None, a tensor, an int, a double, a
// bool or a string), in the shape of ExecuTorch's runtime::EValue.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "etrt/module/tensor.h"

namespace etrt::extension {

// The tags of ExecuTorch's runtime::Tag, in its order.
enum class Tag : uint32_t {
  None,
  Tensor,
  String,
  Double,
  Int,
  Bool,
  ListBool,
  ListDouble,
  ListInt,
  ListTensor,
  ListScalar,
  ListOptionalTensor,
};

inline const char* tag_to_string(Tag tag) {
  static const char* const names[] = {"None", "Tensor", "String", "Double", "Int", "Bool",
                                      "ListBool", "ListDouble", "ListInt", "ListTensor", "ListScalar",
                                      "ListOptionalTensor"};
  auto index = static_cast<size_t>(tag);
  return index < sizeof names / sizeof names[0] ? names[index] : "Unknown";
}

// libetrt's et_value_tag as a Tag.
inline Tag tag_from_value_tag(int32_t tag) {
  switch (tag) {
    case ET_VALUE_INT: return Tag::Int;
    case ET_VALUE_BOOL: return Tag::Bool;
    case ET_VALUE_DOUBLE: return Tag::Double;
    case ET_VALUE_STRING: return Tag::String;
    case ET_VALUE_TENSOR: return Tag::Tensor;
    case ET_VALUE_INT_LIST: return Tag::ListInt;
    case ET_VALUE_DOUBLE_LIST: return Tag::ListDouble;
    case ET_VALUE_BOOL_LIST: return Tag::ListBool;
    case ET_VALUE_TENSOR_LIST: return Tag::ListTensor;
    case ET_VALUE_OPTIONAL_TENSOR_LIST: return Tag::ListOptionalTensor;
    default: return Tag::None;
  }
}

class EValue {
 public:
  EValue() = default;
  /* implicit */ EValue(Tensor tensor) : tag(Tag::Tensor), tensor_(std::move(tensor)) {}
  /* implicit */ EValue(double value) : tag(Tag::Double), double_(value) {}
  /* implicit */ EValue(bool value) : tag(Tag::Bool), bool_(value) {}
  // Any integer (int, int64_t, size_t...) is an Int.
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  /* implicit */ EValue(T value) : tag(Tag::Int), int_(static_cast<int64_t>(value)) {}
  // A TensorPtr (or any pointer-like to a Tensor): the EValue shares the tensor.
  template <typename P, std::enable_if_t<std::is_convertible_v<decltype(*std::declval<P>()), const Tensor&> &&
                                             !std::is_same_v<std::decay_t<P>, Tensor>, int> = 0>
  /* implicit */ EValue(const P& pointer) : tag(Tag::Tensor), tensor_(*checked(pointer)) {}
  explicit EValue(std::string text) : tag(Tag::String), string_(std::move(text)) {}

  bool isNone() const { return tag == Tag::None; }
  bool isTensor() const { return tag == Tag::Tensor; }
  bool isInt() const { return tag == Tag::Int; }
  bool isDouble() const { return tag == Tag::Double; }
  bool isBool() const { return tag == Tag::Bool; }
  bool isString() const { return tag == Tag::String; }
  bool isScalar() const { return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool; }

  // Reading another kind than the EValue holds throws etrt::Error naming both.
  const Tensor& toTensor() const { return expect(Tag::Tensor), *tensor_; }
  Tensor& toTensor() { return expect(Tag::Tensor), *tensor_; }
  int64_t toInt() const { return expect(Tag::Int), int_; }
  double toDouble() const { return expect(Tag::Double), double_; }
  bool toBool() const { return expect(Tag::Bool), bool_; }
  const std::string& toString() const { return expect(Tag::String), string_; }

  Tag tag = Tag::None;

 private:
  template <typename P>
  static const P& checked(const P& pointer) {
    if (!pointer) throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT, "EValue made from a null tensor pointer");
    return pointer;
  }
  void expect(Tag wanted) const {
    if (tag != wanted)
      throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT, std::string("EValue holds ") + tag_to_string(tag) + ", not " +
                                                       tag_to_string(wanted));
  }
  std::optional<Tensor> tensor_;
  int64_t int_ = 0;
  double double_ = 0;
  bool bool_ = false;
  std::string string_;
};

}  // namespace etrt::extension
