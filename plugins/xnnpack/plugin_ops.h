// Nodes Debian's XNNPACK cannot express, run by the plugin on the leased pool.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "graph.h"
#include "xnn_library.h"

namespace etrt::xnn {

// Parallel loops on the host's pthreadpool (the one XNNPACK uses).
class Parallel {
 public:
  Parallel(const Library* lib, pthreadpool_t pool) : lib_(lib), pool_(pool) {
    threads_ = pool != nullptr ? lib->pthreadpool_get_threads_count(pool) : 1;
  }
  size_t threads() const { return threads_; }
  // fn(begin, end) over [0, range), chunks of at least `grain` items.
  template <typename Fn>
  void run(size_t range, size_t grain, Fn&& fn) const {
    if (range == 0) return;
    if (grain == 0) grain = 1;
    if (threads_ <= 1 || range <= grain) {
      fn(size_t{0}, range);
      return;
    }
    size_t tile = std::max(grain, (range + threads_ * 4 - 1) / (threads_ * 4));
    struct Ctx {
      Fn* fn;
      size_t range;
    } ctx{&fn, range};
    lib_->pthreadpool_parallelize_1d_tile_1d(
        pool_,
        [](void* c, size_t start, size_t count) {
          auto* x = static_cast<Ctx*>(c);
          (*x->fn)(start, std::min(x->range, start + count));
        },
        &ctx, range, tile, 0);
  }

 private:
  const Library* lib_;
  pthreadpool_t pool_;
  size_t threads_ = 1;
};

struct OperandView {
  const float* data;
  const Shape* shape;
};

// True when the plugin (not XNNPACK) runs this node.
bool runs_in_plugin(const Graph& graph, const Node& node);

// Runs one node. Inputs in node order (absent bias: data == nullptr).
// element_size 1: quantized 8-bit data (moves only: transpose, concatenation, slice, copy, reshape).
std::string run_plugin_node(const Node& node, const std::vector<OperandView>& inputs, float* output,
                            const Shape& output_shape, const Parallel& parallel, size_t element_size = sizeof(float));

// False when the data holds a NaN or an infinity.
bool is_finite_data(const float* data, size_t count);

struct NonFinite {
  bool nan = false, positive_infinity = false, negative_infinity = false;
};
NonFinite find_non_finite(const float* data, size_t count);

// Whether an infinity of each sign in a delegate input may turn into NaN inside the graph (a sum of products,
// x * 0, +inf - inf), which Debian's XNNPACK would then clamp to a finite number. Follows the value through
// nodes that keep an infinity an infinity (Add, Reshape, MaxPool2d, ...); Softmax absorbs -inf (masks).
struct InfinityRisk {
  bool positive = false, negative = false;
};
InfinityRisk infinity_risk(const Graph& graph, uint32_t input_value,
                           const std::vector<std::vector<uint32_t>>& consumers);

// Runs any node with plain loops that propagate NaN and Inf as PyTorch does (Debian's XNNPACK clamps NaN
// to a finite bound). Used for runs whose inputs or constants are not all finite.
std::string run_reference_node(const Graph& graph, const Node& node, const std::vector<OperandView>& inputs,
                               float* output, const Shape& output_shape, const Parallel& parallel);

// Bounds `count` outputs by the node's fused range (NaN stays NaN).
void apply_clamp(const Node& n, float* out, size_t count);

// image_ops.cpp (NHWC; the weight, slope and flag layouts of the blob's nodes).
void transposed_convolution(const Node& n, const OperandView& x, const OperandView& w, const OperandView& bias,
                            float* out, const Shape& out_shape, const Parallel& parallel);
void prelu(const Node& n, const OperandView& x, const OperandView& slope, float* out, const Shape& out_shape,
           const Parallel& parallel);
void resize_bilinear(const Node& n, const OperandView& x, float* out, const Shape& out_shape,
                     const Parallel& parallel);

}  // namespace etrt::xnn
