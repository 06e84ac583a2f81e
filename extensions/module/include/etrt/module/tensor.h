// Tensors for hosts, in the shape of ExecuTorch's extension/tensor: a Tensor
// that borrows memory (from_blob) or owns it (make_tensor_ptr, clone_tensor_ptr,
// empty/zeros/ones/full), shared through TensorPtr. Copies of a Tensor share
// its shape and data, as ExecuTorch's do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <sys/types.h>
#include <type_traits>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/module/result.h"

namespace etrt::extension {

// The dtype numbering of ExecuTorch (and of et_dtype, which is a subset of it).
enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  ComplexHalf = 8,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  QInt8 = 12,
  QUInt8 = 13,
  QInt32 = 14,
  BFloat16 = 15,
};

enum class TensorShapeDynamism : uint8_t { STATIC = 0, DYNAMIC_BOUND = 1, DYNAMIC_UNBOUND = 2 };

inline size_t elementSize(ScalarType type) {
  switch (type) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool:
    case ScalarType::QInt8: case ScalarType::QUInt8: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: case ScalarType::ComplexHalf: case ScalarType::QInt32: return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: return 8;
    case ScalarType::ComplexDouble: return 16;
  }
  return 0;
}

inline const char* toString(ScalarType type) {
  static const char* const names[] = {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double",
                                      "ComplexHalf", "ComplexFloat", "ComplexDouble", "Bool", "QInt8",
                                      "QUInt8", "QInt32", "BFloat16"};
  auto index = static_cast<size_t>(type);
  return index < sizeof names / sizeof names[0] ? names[index] : "Unknown";
}

template <typename T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = ScalarType::Byte; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = ScalarType::Char; };
template <> struct CppTypeToScalarType<int16_t> { static constexpr ScalarType value = ScalarType::Short; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = ScalarType::Int; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = ScalarType::Long; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = ScalarType::Float; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = ScalarType::Double; };
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = ScalarType::Bool; };

// A read-only view of contiguous elements (ExecuTorch's ArrayRef/Span).
template <typename T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  /* implicit */ ArrayRef(const std::vector<T>& items) : data_(items.data()), size_(items.size()) {}
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};
template <typename T>
using Span = ArrayRef<T>;

namespace tensor_detail {
[[noreturn]] inline void fail(const std::string& message) { throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT, message); }

// Strides in elements of a contiguous tensor laid out in `dim_order`.
inline std::vector<int32_t> contiguous_strides(const std::vector<int32_t>& sizes, const std::vector<uint8_t>& dim_order) {
  std::vector<int32_t> strides(sizes.size(), 1);
  int64_t step = 1;
  for (size_t i = dim_order.size(); i-- > 0;) {
    strides[dim_order[i]] = static_cast<int32_t>(step);
    step *= sizes[dim_order[i]];
  }
  return strides;
}
}  // namespace tensor_detail

// Shape, dtype and data of a tensor. `storage` keeps owned data alive; borrowed
// data has none.
struct TensorImpl {
  ScalarType type = ScalarType::Float;
  TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  void* data = nullptr;
  size_t capacity = 0;  // bytes at `data`: the shape it was made with
  std::shared_ptr<void> storage;
  // The same shape as et_tensor wants it (kept in step with the fields above).
  std::vector<int64_t> sizes64, strides64;

  TensorImpl(ScalarType type_, std::vector<int32_t> sizes_, void* data_, std::vector<uint8_t> dim_order_ = {},
             std::vector<int32_t> strides_ = {}, TensorShapeDynamism dynamism_ = TensorShapeDynamism::DYNAMIC_BOUND)
      : type(type_), dynamism(dynamism_), sizes(std::move(sizes_)), dim_order(std::move(dim_order_)),
        strides(std::move(strides_)), data(data_) {
    if (sizes.size() > ET_MAX_RANK)
      tensor_detail::fail("a tensor has at most " + std::to_string(ET_MAX_RANK) + " dimensions, not " +
                          std::to_string(sizes.size()));
    if (elementSize(type) == 0) tensor_detail::fail("unknown ScalarType " + std::to_string(static_cast<int>(type)));
    size_t bytes = elementSize(type);
    for (int32_t size : sizes) {
      if (size < 0) tensor_detail::fail("a tensor size is negative (" + std::to_string(size) + ")");
      if (size > 0 && bytes > SIZE_MAX / static_cast<size_t>(size))
        tensor_detail::fail("a tensor's byte count overflows (a size of " + std::to_string(size) + ")");
      bytes *= static_cast<size_t>(size);
    }
    if (dim_order.empty())
      for (size_t i = 0; i < sizes.size(); ++i) dim_order.push_back(static_cast<uint8_t>(i));
    if (dim_order.size() != sizes.size())
      tensor_detail::fail("dim_order has " + std::to_string(dim_order.size()) + " entries for " +
                          std::to_string(sizes.size()) + " dimensions");
    std::vector<bool> seen(sizes.size(), false);
    for (uint8_t d : dim_order) {
      if (d >= sizes.size() || seen[d]) tensor_detail::fail("dim_order is not a permutation of the dimensions");
      seen[d] = true;
    }
    std::vector<int32_t> contiguous = tensor_detail::contiguous_strides(sizes, dim_order);
    if (strides.empty()) strides = contiguous;
    if (strides != contiguous) tensor_detail::fail("strides must be those of a contiguous tensor in its dim_order");
    sync_shape();
    capacity = nbytes();
  }

  void sync_shape() {
    sizes64.assign(sizes.begin(), sizes.end());
    strides64.assign(strides.begin(), strides.end());
  }
  size_t numel() const {
    size_t n = 1;
    for (int32_t s : sizes) n *= static_cast<size_t>(s);
    return n;
  }
  size_t nbytes() const { return numel() * elementSize(type); }
};

class Tensor {
 public:
  using SizesType = int32_t;
  using DimOrderType = uint8_t;
  using StridesType = int32_t;

  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  ScalarType scalar_type() const { return impl_->type; }
  ScalarType dtype() const { return impl_->type; }
  ssize_t dim() const { return static_cast<ssize_t>(impl_->sizes.size()); }
  ssize_t numel() const { return static_cast<ssize_t>(impl_->numel()); }
  size_t nbytes() const { return impl_->nbytes(); }
  ssize_t element_size() const { return static_cast<ssize_t>(elementSize(impl_->type)); }
  ssize_t size(ssize_t dim) const { return impl_->sizes.at(static_cast<size_t>(dim)); }
  ArrayRef<SizesType> sizes() const { return impl_->sizes; }
  ArrayRef<DimOrderType> dim_order() const { return impl_->dim_order; }
  ArrayRef<StridesType> strides() const { return impl_->strides; }
  TensorShapeDynamism shape_dynamism() const { return impl_->dynamism; }

  template <typename T> const T* const_data_ptr() const { return static_cast<const T*>(impl_->data); }
  const void* const_data_ptr() const { return impl_->data; }
  template <typename T> T* mutable_data_ptr() const { return static_cast<T*>(impl_->data); }
  void* mutable_data_ptr() const { return impl_->data; }
  template <typename T> T* data_ptr() const { return static_cast<T*>(impl_->data); }

  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }

  // The tensor as libetrt's et_tensor, pointing at this tensor's shape arrays
  // and data (valid while the tensor lives and its shape does not change).
  et_tensor to_et_tensor() const {
    et_tensor t{};
    t.struct_size = sizeof t;
    t.dtype = static_cast<int32_t>(impl_->type);
    t.rank = static_cast<int32_t>(impl_->sizes.size());
    t.sizes = impl_->sizes64.data();
    t.dim_order = impl_->dim_order.data();
    t.strides = impl_->strides64.data();
    t.data = impl_->data;
    t.nbytes = impl_->nbytes();
    t.capacity_bytes = t.nbytes;
    t.dynamism = static_cast<int32_t>(impl_->dynamism);
    t.is_const = 0;
    return t;
  }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

using TensorPtr = std::shared_ptr<Tensor>;

// A tensor of the caller's memory; the caller keeps `data` alive while the
// tensor is used (nbytes = product(sizes) * element size).
inline TensorPtr from_blob(void* data, std::vector<Tensor::SizesType> sizes, ScalarType type = ScalarType::Float,
                           TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  return std::make_shared<Tensor>(std::make_shared<TensorImpl>(type, std::move(sizes), data,
                                                               std::vector<uint8_t>{}, std::vector<int32_t>{}, dynamism));
}
inline TensorPtr from_blob(void* data, std::vector<Tensor::SizesType> sizes,
                           std::vector<Tensor::DimOrderType> dim_order, std::vector<Tensor::StridesType> strides,
                           ScalarType type = ScalarType::Float,
                           TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  return std::make_shared<Tensor>(std::make_shared<TensorImpl>(type, std::move(sizes), data, std::move(dim_order),
                                                               std::move(strides), dynamism));
}
// The same, with `deleter` called on `data` when the last copy of the tensor goes.
inline TensorPtr from_blob(void* data, std::vector<Tensor::SizesType> sizes, ScalarType type,
                           std::function<void(void*)> deleter,
                           TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  auto impl = std::make_shared<TensorImpl>(type, std::move(sizes), data, std::vector<uint8_t>{},
                                           std::vector<int32_t>{}, dynamism);
  impl->storage = std::shared_ptr<void>(data, std::move(deleter));
  return std::make_shared<Tensor>(std::move(impl));
}

namespace tensor_detail {
// Writes `value` converted to `type` at element `index` of `data`.
inline void store(void* data, size_t index, ScalarType type, double value) {
  switch (type) {
    case ScalarType::Byte: static_cast<uint8_t*>(data)[index] = static_cast<uint8_t>(value); return;
    case ScalarType::Char: static_cast<int8_t*>(data)[index] = static_cast<int8_t>(value); return;
    case ScalarType::Short: static_cast<int16_t*>(data)[index] = static_cast<int16_t>(value); return;
    case ScalarType::Int: static_cast<int32_t*>(data)[index] = static_cast<int32_t>(value); return;
    case ScalarType::Long: static_cast<int64_t*>(data)[index] = static_cast<int64_t>(value); return;
    case ScalarType::Float: static_cast<float*>(data)[index] = static_cast<float>(value); return;
    case ScalarType::Double: static_cast<double*>(data)[index] = value; return;
    case ScalarType::Bool: static_cast<uint8_t*>(data)[index] = value != 0 ? 1 : 0; return;
    default: fail(std::string("converting values to ") + toString(type) + " is not supported; use from_blob");
  }
}

inline std::shared_ptr<TensorImpl> owned(std::vector<int32_t> sizes, ScalarType type, std::vector<uint8_t> dim_order,
                                         std::vector<int32_t> strides, TensorShapeDynamism dynamism) {
  auto impl = std::make_shared<TensorImpl>(type, std::move(sizes), nullptr, std::move(dim_order), std::move(strides),
                                           dynamism);
  auto bytes = std::make_shared<std::vector<uint64_t>>((impl->nbytes() + 7) / 8);  // 8-byte aligned
  impl->data = bytes->data();
  impl->storage = std::move(bytes);
  return impl;
}
}  // namespace tensor_detail

// A tensor owning a copy of `data`, converted to `type` when that differs from T's.
template <typename T, ScalarType deduced = CppTypeToScalarType<T>::value>
TensorPtr make_tensor_ptr(std::vector<Tensor::SizesType> sizes, std::vector<T> data,
                          std::vector<Tensor::DimOrderType> dim_order = {},
                          std::vector<Tensor::StridesType> strides = {}, ScalarType type = deduced,
                          TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  auto impl = tensor_detail::owned(std::move(sizes), type, std::move(dim_order), std::move(strides), dynamism);
  if (impl->numel() != data.size())
    tensor_detail::fail("make_tensor_ptr: " + std::to_string(data.size()) + " values for a shape of " +
                        std::to_string(impl->numel()) + " elements");
  if (type == deduced && !std::is_same_v<T, bool>) {
    if (!data.empty()) std::memcpy(impl->data, data.data(), impl->nbytes());
  } else {
    for (size_t i = 0; i < data.size(); ++i) tensor_detail::store(impl->data, i, type, static_cast<double>(data[i]));
  }
  return std::make_shared<Tensor>(std::move(impl));
}
// A one-dimensional tensor of `data`.
template <typename T, ScalarType deduced = CppTypeToScalarType<T>::value>
TensorPtr make_tensor_ptr(std::vector<T> data, ScalarType type = deduced,
                          TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  std::vector<Tensor::SizesType> sizes{static_cast<Tensor::SizesType>(data.size())};
  return make_tensor_ptr(std::move(sizes), std::move(data), {}, {}, type, dynamism);
}
template <typename T, ScalarType deduced = CppTypeToScalarType<T>::value>
TensorPtr make_tensor_ptr(std::initializer_list<T> list, ScalarType type = deduced,
                          TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  return make_tensor_ptr(std::vector<T>(list), type, dynamism);
}
// A tensor of rank 0 holding `value`.
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
TensorPtr make_tensor_ptr(T value) {
  return make_tensor_ptr(std::vector<Tensor::SizesType>{}, std::vector<T>{value});
}
// A tensor of raw bytes interpreted as `type`.
inline TensorPtr make_tensor_ptr(std::vector<Tensor::SizesType> sizes, std::vector<uint8_t> data, ScalarType type,
                                 TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  auto impl = tensor_detail::owned(std::move(sizes), type, {}, {}, dynamism);
  if (impl->nbytes() != data.size())
    tensor_detail::fail("make_tensor_ptr: " + std::to_string(data.size()) + " bytes for a " + toString(type) +
                        " tensor of " + std::to_string(impl->nbytes()) + " bytes");
  if (!data.empty()) std::memcpy(impl->data, data.data(), data.size());
  return std::make_shared<Tensor>(std::move(impl));
}

// An owned copy of a tensor's shape and data.
inline TensorPtr clone_tensor_ptr(const Tensor& tensor) {
  const TensorImpl& from = *tensor.unsafeGetTensorImpl();
  auto impl = tensor_detail::owned(from.sizes, from.type, from.dim_order, from.strides, from.dynamism);
  if (impl->nbytes() > 0) std::memcpy(impl->data, from.data, impl->nbytes());
  return std::make_shared<Tensor>(std::move(impl));
}
inline TensorPtr clone_tensor_ptr(const TensorPtr& tensor) { return clone_tensor_ptr(*tensor); }

// Changes the shape of a tensor (same number of dimensions); owned data is kept,
// so the new shape must fit in the bytes the tensor was made with.
inline Error resize_tensor_ptr(TensorPtr& tensor, const std::vector<Tensor::SizesType>& sizes) {
  TensorImpl& impl = *tensor->unsafeGetTensorImpl();
  if (sizes.size() != impl.sizes.size()) return Error::InvalidArgument;
  size_t numel = 1;
  for (Tensor::SizesType size : sizes) {
    if (size < 0) return Error::InvalidArgument;
    numel *= static_cast<size_t>(size);
  }
  if (numel * elementSize(impl.type) > impl.capacity) return Error::InvalidArgument;
  impl.sizes = sizes;
  impl.strides = tensor_detail::contiguous_strides(impl.sizes, impl.dim_order);
  impl.sync_shape();
  return Error::Ok;
}

inline TensorPtr empty(std::vector<Tensor::SizesType> sizes, ScalarType type = ScalarType::Float,
                       TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  return std::make_shared<Tensor>(tensor_detail::owned(std::move(sizes), type, {}, {}, dynamism));
}
inline TensorPtr full(std::vector<Tensor::SizesType> sizes, double fill_value, ScalarType type = ScalarType::Float,
                      TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  auto impl = tensor_detail::owned(std::move(sizes), type, {}, {}, dynamism);
  for (size_t i = 0, n = impl->numel(); i < n; ++i) tensor_detail::store(impl->data, i, type, fill_value);
  return std::make_shared<Tensor>(std::move(impl));
}
inline TensorPtr zeros(std::vector<Tensor::SizesType> sizes, ScalarType type = ScalarType::Float,
                       TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  return empty(std::move(sizes), type, dynamism);  // owned storage starts zeroed
}
inline TensorPtr ones(std::vector<Tensor::SizesType> sizes, ScalarType type = ScalarType::Float,
                      TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND) {
  return full(std::move(sizes), 1.0, type, dynamism);
}

}  // namespace etrt::extension
