// Named tensors of one TrainingModule: views of its method's memory, never copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "etrt/etrt.h"

namespace etrt::training {

// An ordered list of (fully qualified name, tensor) pairs, in the order the program lists its
// parameters. Each tensor is the method's own et_tensor: writing its data changes what the next
// forward_backward reads. `owner` identifies the TrainingModule the tensors belong to, so an optimizer
// can refuse gradients of another module.
class NamedTensors {
 public:
  NamedTensors() = default;
  NamedTensors(const void* owner, std::vector<std::pair<std::string, et_tensor*>> entries)
      : owner_(owner), entries_(std::move(entries)) {}

  const void* owner() const { return owner_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  const std::pair<std::string, et_tensor*>& operator[](size_t i) const { return entries_[i]; }
  // The tensor named `name`, or nullptr.
  et_tensor* find(const std::string& name) const {
    for (const auto& [n, t] : entries_)
      if (n == name) return t;
    return nullptr;
  }

 private:
  const void* owner_ = nullptr;
  std::vector<std::pair<std::string, et_tensor*>> entries_;
};

}  // namespace etrt::training
