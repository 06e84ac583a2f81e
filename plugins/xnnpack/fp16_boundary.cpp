// Programs exported in fp16 hand the delegate fp16 tensors. Debian's 2022 XNNPACK subgraph takes fp32 at its
// boundary (fp16 only inside, as an inference hint), so the plugin computes these graphs in fp32: fp16
// constants are widened at init (blob.cpp), inputs here before the run, outputs narrowed after it (rounded to
// nearest-even, as PyTorch converts).
#include <algorithm>
#include <vector>

#include "delegate.h"
#include "etrt/half.hpp"

namespace etrt::xnn {

et_error* Delegate::execute_fp16_boundary(et_exec_context* ctx, et_value* const* args, size_t nargs) {
  const et_host_api* api = host_.api();
  std::vector<et_value*> shadow_args(args, args + nargs);
  std::vector<et_value> shadow_values(nargs);
  std::vector<et_tensor> shadow_tensors(nargs);
  std::vector<std::vector<float>> buffers(nargs);
  auto original = [&](const Value& value, et_tensor** out) -> et_error* {
    std::string where = std::string("XnnpackBackend: ") + (value.io == kFlagInput ? "input" : "output") +
                        " at argument " + std::to_string(value.external);
    if (value.external >= nargs || args[value.external] == nullptr || args[value.external]->tag != ET_VALUE_TENSOR ||
        args[value.external]->tensor == nullptr)
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + " is not a tensor");
    et_tensor* t = args[value.external]->tensor;
    if (t->dtype != ET_DTYPE_FLOAT16)
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + " is " + plugin::dtype_name(t->dtype) + ", expected float16");
    if (t->rank < 0 || t->rank > ET_MAX_RANK) return host_.error(ET_ERR_INVALID_ARGUMENT, where + ": bad rank");
    *out = t;
    return nullptr;
  };
  // Output shapes first: the fp16 outputs are resized by the host before their fp32 stand-ins are made.
  std::vector<Shape> input_shapes, shapes;
  for (uint32_t v : graph_.inputs) {
    const et_value* a = v < graph_.values.size() && graph_.values[v].external < nargs ? args[graph_.values[v].external]
                                                                                       : nullptr;
    if (a == nullptr || a->tag != ET_VALUE_TENSOR || a->tensor == nullptr)
      return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: input at argument " +
                                                      std::to_string(graph_.values[v].external) + " is not a tensor");
    Shape s;
    if (a->tensor->rank == 0) s = graph_.values[v].dims;
    for (int32_t d = 0; d < a->tensor->rank; ++d)
      s.push_back(static_cast<size_t>(std::max<int64_t>(a->tensor->sizes[d], 0)));
    input_shapes.push_back(std::move(s));
  }
  if (std::string e = infer_all(graph_, input_shapes, &shapes, /*allow_empty=*/true); !e.empty())
    return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: the inputs do not fit the graph: " + e);
  std::vector<uint32_t> externals(graph_.inputs);
  externals.insert(externals.end(), graph_.outputs.begin(), graph_.outputs.end());
  for (uint32_t v : externals) {
    const Value& value = graph_.values[v];
    if (!value.fp16) continue;
    et_tensor* t = nullptr;
    if (et_error* e = original(value, &t)) return e;
    if (value.io == kFlagOutput && t->rank != 0) {
      std::vector<int64_t> sizes(shapes[v].begin(), shapes[v].end());
      if (et_error* e = api->tensor_resize(t, sizes.data(), sizes.size())) return e;
    }
    size_t count = t->rank == 0 ? 1 : numel(shapes[v]);
    if (t->data == nullptr && count > 0) return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: no data");
    if (value.io == kFlagInput && t->nbytes < count * 2)
      return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: input at argument " +
                                                      std::to_string(value.external) + " has no data");
    std::vector<float>& buffer = buffers[value.external];
    buffer.assign(count + XNN_EXTRA_BYTES / sizeof(float), 0.0f);  // XNNPACK may read past its inputs
    if (value.io == kFlagInput) {
      const auto* halves = static_cast<const uint16_t*>(t->data);
      for (size_t k = 0; k < count; ++k) buffer[k] = plugin::to_float(plugin::Half{halves[k]});
    }
    et_tensor& shadow = shadow_tensors[value.external];
    shadow = *t;
    shadow.dtype = ET_DTYPE_FLOAT32;
    shadow.data = buffer.data();
    shadow.nbytes = count * sizeof(float);
    shadow.capacity_bytes = buffer.size() * sizeof(float);
    shadow.is_const = 0;
    shadow_values[value.external] = *args[value.external];
    shadow_values[value.external].tensor = &shadow;
    shadow_args[value.external] = &shadow_values[value.external];
  }
  if (et_error* e = execute_fp32(ctx, shadow_args.data(), nargs)) return e;
  for (uint32_t v : graph_.outputs) {
    const Value& value = graph_.values[v];
    if (!value.fp16) continue;
    et_tensor* t = args[value.external]->tensor;
    const std::vector<float>& buffer = buffers[value.external];
    auto* halves = static_cast<uint16_t*>(t->data);
    size_t count = shadow_tensors[value.external].nbytes / sizeof(float);
    for (size_t k = 0; k < count; ++k) halves[k] = plugin::half_from_float(buffer[k]).bits;
  }
  return nullptr;
}

}  // namespace etrt::xnn
