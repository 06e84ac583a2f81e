// One initialised delegate: the verified graph split into segments (one
// XNNPACK runtime, or one node the plugin runs itself), plus the runtimes and
// buffers built for the input shapes seen so far.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <vector>

#include "etrt/plugin.hpp"
#include "dynamic_linear.h"
#include "graph.h"
#include "plugin_ops.h"
#include "xnn_library.h"

namespace etrt::xnn {

struct Segment {
  bool xnnpack = false;
  std::vector<uint32_t> nodes;    // node indices, in blob order
  std::vector<uint32_t> inputs;   // non-constant values read from outside the segment
  std::vector<uint32_t> outputs;  // values produced here and read elsewhere (or delegate outputs)
};

// Everything that depends on the input shapes and on the thread pool.
struct Plan {
  std::vector<Shape> input_shapes;  // the key
  uint64_t pool_generation = 0;
  std::vector<Shape> shapes;        // of every value
  void* arena = nullptr;            // intermediate buffers (host memory)
  std::vector<size_t> offset;       // per value: arena offset, or SIZE_MAX
  std::vector<size_t> staging;      // per value: arena offset of a padded copy for XNNPACK, or SIZE_MAX
  struct Runtime {
    xnn_runtime_t runtime = nullptr;
    std::vector<uint32_t> externals;             // value index per XNNPACK external id
    std::vector<xnn_external_value> bound;       // what the last setup bound
    bool set_up = false;
  };
  std::vector<Runtime> runtimes;    // per segment (runtime null for plugin segments)
};

struct Stats {
  std::atomic<uint64_t> executes{0};
  std::atomic<uint64_t> plans_built{0};
  std::atomic<uint64_t> xnnpack_invocations{0};
  std::atomic<uint64_t> plugin_node_runs{0};
  std::atomic<uint64_t> setups{0};
  std::atomic<uint64_t> reference_runs{0};  // runs by execute_reference (non-finite or empty inputs, nan_reruns)
  std::atomic<uint64_t> nan_reruns{0};      // XNNPACK runs that raised an invalid operation, done again
};

class Delegate {
 public:
  Delegate(const plugin::Host& host, const Library* lib) : host_(host), lib_(lib) {}
  ~Delegate();
  Delegate(const Delegate&) = delete;
  Delegate& operator=(const Delegate&) = delete;

  // Parses, verifies and compiles; builds the runtimes for the declared shapes.
  et_error* init(const et_backend_init_args& args);
  // ctx: the host's call context, for per-node trace events (may be null).
  et_error* execute(et_exec_context* ctx, et_value* const* args, size_t nargs) {
    return fp16_boundary_ ? execute_fp16_boundary(ctx, args, nargs) : execute_fp32(ctx, args, nargs);
  }

  const Stats& stats() const { return stats_; }
  std::string summary() const;
  // {"xnnpack": {kind: count, ...}, "plugin": {...}}: which node kinds each side runs (the stats line).
  std::string node_kinds_json() const;

 private:
  et_error* execute_fp32(et_exec_context* ctx, et_value* const* args, size_t nargs);
  // fp16_boundary.cpp: fp16 delegate inputs widened to fp32, execute_fp32, fp32 outputs narrowed to fp16.
  et_error* execute_fp16_boundary(et_exec_context* ctx, et_value* const* args, size_t nargs);
  void make_segments();
  void pad_elementwise_constants();
  et_error* build_plan(const std::vector<Shape>& input_shapes, pthreadpool_t pool, uint64_t generation, Plan* plan);
  std::string build_runtime(const Plan& plan, size_t segment, pthreadpool_t pool, Plan::Runtime* out);
  void release(Plan& plan);
  Plan* find_plan(const std::vector<Shape>& input_shapes, uint64_t generation);
  // Gives the delegate's output tensors the computed shapes (resizing them when needed).
  et_error* fit_outputs(const std::vector<Shape>& shapes, const std::vector<et_tensor*>& tensors);
  // Runs every node with the plugin's NaN-propagating reference code, one thread, no plan.
  et_error* execute_reference(const std::vector<Shape>& input_shapes, const std::vector<et_tensor*>& tensors,
                              et_exec_context* traced);
  // Trace events (only when the host traces the call): one per node the plugin
  // runs, one per XNNPACK runtime invocation (Debian's XNNPACK has no
  // per-operator timings), nested in the host's DELEGATE_CALL span.
  bool call_is_traced(et_exec_context* ctx) const;
  void trace_node(et_exec_context* traced, uint32_t node, uint64_t start_ns) const;
  void trace_runtime(et_exec_context* traced, size_t segment, uint64_t start_ns);

  const plugin::Host& host_;
  const Library* lib_;
  Graph graph_;
  std::vector<Segment> segments_;
  std::vector<std::vector<uint32_t>> consumers_;  // per value: consuming node indices
  std::vector<int32_t> segment_of_;               // per node
  std::mutex mutex_;                              // one execute at a time per delegate
  std::vector<std::string> runtime_event_names_;  // per segment, made on the first traced call
  std::list<Plan> plans_;                         // most recently used first
  Stats stats_;
  size_t max_plans_ = 4;
  bool fp16_boundary_ = false;                    // some delegate input or output is fp16
  bool constants_finite_ = true;                  // false: every run takes the reference path
  std::vector<InfinityRisk> infinity_risk_;       // per delegate input
  PreparedWeights prepared_;                      // dynamically quantized linear weights, unpacked once at init
};

}  // namespace etrt::xnn
