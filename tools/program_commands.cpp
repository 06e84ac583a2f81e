// `etrt run` and `etrt inspect`: run a method of a .pte, or describe it
// (and which plugin would serve each operator) without running anything.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "etrt/etrt.hpp"
#include "etrt/half.hpp"
#include "etrt/plugin.hpp"
#include "npy.h"
#include "output_file.h"
#include "terminal_text.h"

namespace {

using etrt::tools::NpyArray;
using etrt::tools::Newlines;
using etrt::tools::terminal_text;

// An error for the terminal: its message may quote names from the program.
void print_error(const char* command, const std::string& message) {
  std::fprintf(stderr, "etrt %s: %s\n", command, terminal_text(message, Newlines::keep).c_str());
}

std::string shape_text(const int64_t* sizes, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

const char* dynamism_text(int32_t dynamism) {
  return dynamism == ET_SHAPE_STATIC ? "static" : dynamism == ET_SHAPE_DYNAMIC_BOUND ? "dynamic (bound)" : "dynamic";
}

const char* tag_text(int32_t tag) {
  switch (tag) {
    case ET_VALUE_INT: return "int";
    case ET_VALUE_BOOL: return "bool";
    case ET_VALUE_DOUBLE: return "double";
    case ET_VALUE_STRING: return "string";
    case ET_VALUE_TENSOR: return "tensor";
    default: return "none";
  }
}

// Which plugin would serve a name, from the manifests, without loading it.
std::string server_of(int32_t kind, const std::string& name, bool* missing) {
  int32_t builtin = 0;
  et_plugin_record record{};
  record.struct_size = sizeof record;
  if (et_planned_server(kind, name.c_str(), &builtin, &record) != ET_OK) {
    *missing = true;
    return "MISSING: no plugin provides it";
  }
  if (builtin) return "etrt (built-in)";
  return std::string(record.name) + (record.state == ET_PLUGIN_LOADED ? " (loaded)" : "");
}

struct Options {
  std::string model, method = "forward", output_dir;
  std::vector<std::string> inputs;
  std::vector<std::string> data_files;  // .ptd: weights kept outside the program
  int iterations = 10;
  // Tracing (the etdump tracer plugin, loaded only when one of these is given).
  bool profile = false;
  std::string etdump_path, debug_buffer_path, trace_path;
  size_t debug_buffer_size = size_t{1} << 30;  // a limit: the buffer only grows to what the runs need
  bool traced() const { return profile || !etdump_path.empty() || !trace_path.empty(); }
};

etrt::Program load_program(const Options& options) {
  etrt::Program program = etrt::Program::load(options.model);
  for (const std::string& path : options.data_files) program.add_data_file(path);
  return program;
}

// One row of the tracer's operator summary (TSV: name, plugin, kind, calls, total ns).
struct ProfileRow {
  std::string name, plugin, kind;
  uint64_t calls = 0, total_ns = 0;
};

std::vector<ProfileRow> parse_summary(const std::string& text) {
  std::vector<ProfileRow> rows;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::vector<std::string> fields;
    for (size_t at = start; at <= end;) {
      size_t tab = text.find('\t', at);
      if (tab == std::string::npos || tab > end) tab = end;
      fields.push_back(text.substr(at, tab - at));
      at = tab + 1;
    }
    if (fields.size() == 5)
      rows.push_back({fields[0], fields[1], fields[2], std::stoull(fields[3]), std::stoull(fields[4])});
    start = end + 1;
  }
  return rows;
}

// The per-operator table of `etrt run --profile`, slowest first.
void print_profile(const std::string& summary, const std::string& method_name) {
  std::vector<ProfileRow> rows = parse_summary(summary), ops;
  uint64_t run_ns = 0, runs = 0;
  for (ProfileRow& row : rows) {
    if (row.kind == "method") {
      run_ns += row.total_ns;
      runs += row.calls;
    } else {
      ops.push_back(std::move(row));
    }
  }
  std::sort(ops.begin(), ops.end(), [](const ProfileRow& a, const ProfileRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  std::printf("\nprofile of method '%s' over %llu traced run(s), %.3f ms in the method:\n",
              terminal_text(method_name).c_str(),
              static_cast<unsigned long long>(runs), static_cast<double>(run_ns) / 1e6);
  std::printf("  %-40s %-20s %8s %12s %12s %7s\n", "operator", "plugin", "calls", "total ms", "mean us", "share");
  for (const ProfileRow& row : ops) {
    double share = run_ns > 0 ? 100.0 * static_cast<double>(row.total_ns) / static_cast<double>(run_ns) : 0.0;
    std::printf("  %-40s %-20s %8llu %12.3f %12.3f %6.1f%%\n", terminal_text(row.name).c_str(),
                row.plugin.empty() ? "etrt (built-in)" : terminal_text(row.plugin).c_str(),
                static_cast<unsigned long long>(row.calls),
                static_cast<double>(row.total_ns) / 1e6,
                static_cast<double>(row.total_ns) / 1e3 / static_cast<double>(std::max<uint64_t>(row.calls, 1)), share);
  }
}

// NumPy has no bfloat16: a bfloat16 input is given as float32 (rounded to nearest
// even here) and a bfloat16 output is written as float32 (exact).
void float32_to_bfloat16(NpyArray* array) {
  std::vector<uint8_t> bits(array->data.size() / 2);
  for (size_t i = 0; i < bits.size() / 2; ++i) {
    float x;
    std::memcpy(&x, array->data.data() + 4 * i, 4);
    const etrt::plugin::BFloat16 b = etrt::plugin::bfloat16_from_float(x);
    std::memcpy(bits.data() + 2 * i, &b, 2);
  }
  array->data = std::move(bits);
  array->dtype = ET_DTYPE_BFLOAT16;
}

void bfloat16_to_float32(NpyArray* array) {
  std::vector<uint8_t> wide(array->data.size() * 2);
  for (size_t i = 0; i < array->data.size() / 2; ++i) {
    etrt::plugin::BFloat16 b;
    std::memcpy(&b, array->data.data() + 2 * i, 2);
    const float x = etrt::plugin::to_float(b);
    std::memcpy(wide.data() + 4 * i, &x, 4);
  }
  array->data = std::move(wide);
  array->dtype = ET_DTYPE_FLOAT32;
}

// Inputs the user did not give: deterministic values of the right shape
// (the upper bound for dynamic shapes); integers are zero so indices stay valid.
NpyArray generated_input(const et_value_info& info, unsigned seed) {
  NpyArray array;
  array.dtype = info.dtype;
  array.shape.assign(info.sizes, info.sizes + info.rank);
  array.data.assign(info.nbytes, 0);
  if (info.dtype == ET_DTYPE_FLOAT32) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    auto* f = reinterpret_cast<float*>(array.data.data());
    for (size_t i = 0; i < info.nbytes / 4; ++i) f[i] = dist(rng);
  }
  return array;
}

void print_summary(const et_value& value, size_t index) {
  if (value.tag != ET_VALUE_TENSOR) {
    if (value.tag == ET_VALUE_DOUBLE) std::printf("  output %zu: double %g\n", index, value.as_double);
    else std::printf("  output %zu: %s %lld\n", index, tag_text(value.tag), static_cast<long long>(value.as_int));
    return;
  }
  const et_tensor& t = *value.tensor;
  size_t n = etrt::plugin::numel(t);
  std::printf("  output %zu: %s %s", index, etrt::plugin::dtype_name(t.dtype), shape_text(t.sizes, t.rank).c_str());
  if (t.dtype == ET_DTYPE_FLOAT32 && n > 0) {
    const auto* f = static_cast<const float*>(t.data);
    double lo = f[0], hi = f[0], sum = 0;
    for (size_t i = 0; i < n; ++i) {
      lo = std::min<double>(lo, f[i]);
      hi = std::max<double>(hi, f[i]);
      sum += f[i];
    }
    std::printf("  min %.6g max %.6g mean %.6g  first:", lo, hi, sum / static_cast<double>(n));
    for (size_t i = 0; i < std::min<size_t>(n, 4); ++i) std::printf(" %.6g", f[i]);
  } else if (t.dtype == ET_DTYPE_INT64 && n > 0) {
    const auto* v = static_cast<const int64_t*>(t.data);
    std::printf("  first:");
    for (size_t i = 0; i < std::min<size_t>(n, 6); ++i) std::printf(" %lld", static_cast<long long>(v[i]));
  }
  std::printf("\n");
}

bool parse_options(int argc, char** argv, Options* options, const char* command) {
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--method") {
      const char* v = next();
      if (!v) return false;
      options->method = v;
    } else if (arg == "--input") {
      const char* v = next();
      if (!v) return false;
      options->inputs.push_back(v);
    } else if (arg == "--iterations") {
      const char* v = next();
      if (!v || std::atoi(v) < 1) return false;
      options->iterations = std::atoi(v);
    } else if (arg == "--data") {
      const char* v = next();
      if (!v) return false;
      options->data_files.push_back(v);
    } else if (arg == "--output-dir") {
      const char* v = next();
      if (!v) return false;
      options->output_dir = v;
    } else if (arg == "--profile") {
      options->profile = true;
    } else if (arg == "--etdump" || arg == "--debug-buffer" || arg == "--trace") {
      const char* v = next();
      if (!v || !*v) return false;
      (arg == "--etdump" ? options->etdump_path : arg == "--trace" ? options->trace_path : options->debug_buffer_path) = v;
    } else if (arg == "--debug-buffer-size") {
      const char* v = next();
      char* end = nullptr;
      unsigned long long size = v ? std::strtoull(v, &end, 10) : 0;
      if (!v || end == v || *end != '\0' || size == 0) return false;
      options->debug_buffer_size = static_cast<size_t>(size);
    } else if (!arg.empty() && arg[0] != '-' && options->model.empty()) {
      options->model = arg;
    } else {
      std::fprintf(stderr, "etrt %s: unexpected argument '%s'\n", command, terminal_text(arg).c_str());
      return false;
    }
  }
  if (!options->debug_buffer_path.empty() && options->etdump_path.empty()) {
    std::fprintf(stderr, "etrt %s: --debug-buffer needs --etdump (the dump says where each tensor is)\n", command);
    return false;
  }
  return !options->model.empty();
}

}  // namespace

int run_inspect_command(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, &options, "inspect")) {
    std::fprintf(stderr, "usage: etrt inspect MODEL.pte [--data WEIGHTS.ptd ...]\n");
    return 2;
  }
  try {
    etrt::Program program = load_program(options);
    bool missing = false;
    std::printf("%s\n", terminal_text(options.model).c_str());
    for (const std::string& method : program.method_names()) {
      et_method_info info = program.method_info(method);
      std::printf("\nmethod '%s': %zu instructions, %zu planned buffer(s), %llu bytes planned\n",
                  terminal_text(method).c_str(),
                  info.num_instructions, info.num_planned_buffers, static_cast<unsigned long long>(info.planned_bytes));
      for (int out = 0; out < 2; ++out) {
        size_t count = out ? info.num_outputs : info.num_inputs;
        for (size_t i = 0; i < count; ++i) {
          et_value_info v = program.io_info(method, out, i);
          if (v.tag == ET_VALUE_TENSOR)
            std::printf("  %s %zu: %s %s, %s\n", out ? "output" : "input", i, etrt::plugin::dtype_name(v.dtype),
                        shape_text(v.sizes, v.rank).c_str(), dynamism_text(v.dynamism));
          else
            std::printf("  %s %zu: %s\n", out ? "output" : "input", i, tag_text(v.tag));
        }
      }
      std::printf("  operators (%zu):\n", info.num_operators);
      for (const std::string& op : program.operators(method))
        std::printf("    %-48s %s\n", terminal_text(op).c_str(),
                    terminal_text(server_of(ET_ENTRY_OPERATOR, op, &missing)).c_str());
      if (info.num_delegates > 0) {
        std::printf("  delegates (%zu):\n", info.num_delegates);
        for (const std::string& id : program.delegates(method))
          std::printf("    %-48s %s\n", terminal_text(id).c_str(),
                      terminal_text(server_of(ET_ENTRY_BACKEND, id, &missing)).c_str());
      }
    }
    if (missing) std::printf("\nSome operators or delegates have no provider: loading this program will fail.\n");
    return missing ? 1 : 0;
  } catch (const etrt::Error& error) {
    print_error("inspect", error.what());
    return 1;
  }
}

int run_run_command(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, &options, "run")) {
    std::fprintf(stderr,
                 "usage: etrt run MODEL.pte [--data WEIGHTS.ptd ...] [--method NAME] [--input FILE.npy ...]\n"
                 "                [--iterations N] [--output-dir DIR] [--profile]\n"
                 "                [--etdump FILE [--debug-buffer FILE [--debug-buffer-size BYTES]]] [--trace FILE.json]\n");
    return 2;
  }
  try {
    etrt::Program program = load_program(options);
    et_method_info info = program.method_info(options.method);
    auto load_start = std::chrono::steady_clock::now();
    etrt::Method method = program.load_method(options.method);
    double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();

    if (!options.inputs.empty() && options.inputs.size() != info.num_inputs) {
      print_error("run", "method '" + options.method + "' takes " + std::to_string(info.num_inputs) + " inputs, " +
                             std::to_string(options.inputs.size()) + " given");
      return 1;
    }
    std::vector<NpyArray> arrays(info.num_inputs);
    std::vector<std::vector<int64_t>> strides(info.num_inputs);
    std::vector<et_tensor> tensors(info.num_inputs);
    for (size_t i = 0; i < info.num_inputs; ++i) {
      et_value_info v = program.io_info(options.method, false, i);
      if (v.tag != ET_VALUE_TENSOR) {
        std::fprintf(stderr, "etrt run: input %zu is a %s, which the command line cannot give\n", i, tag_text(v.tag));
        return 1;
      }
      std::string error;
      if (options.inputs.empty()) {
        arrays[i] = generated_input(v, static_cast<unsigned>(i + 1));
      } else if (!etrt::tools::read_npy(options.inputs[i], &arrays[i], &error)) {
        print_error("run", error);
        return 1;
      }
      NpyArray& a = arrays[i];
      if (v.dtype == ET_DTYPE_BFLOAT16 && a.dtype == ET_DTYPE_FLOAT32) float32_to_bfloat16(&a);
      strides[i].assign(a.shape.size(), 1);
      for (size_t d = a.shape.size(); d-- > 1;) strides[i][d - 1] = strides[i][d] * std::max<int64_t>(a.shape[d], 1);
      et_tensor& t = tensors[i];
      t.struct_size = sizeof t;
      t.dtype = a.dtype;
      t.rank = static_cast<int32_t>(a.shape.size());
      t.sizes = a.shape.data();
      t.strides = strides[i].data();
      t.data = a.data.data();
      t.nbytes = t.capacity_bytes = a.data.size();
    }
    if (options.inputs.empty()) std::printf("no --input given: using generated inputs of the declared shapes\n");

    std::unique_ptr<etrt::TraceSession> trace;
    if (options.traced()) {
      trace = std::make_unique<etrt::TraceSession>(
          "etdump", options.debug_buffer_path.empty() ? 0 : options.debug_buffer_size, options.model);
      method.set_trace_session(trace.get());
    }

    std::vector<double> times;
    for (int iteration = 0; iteration < options.iterations; ++iteration) {
      auto start = std::chrono::steady_clock::now();
      // Inputs are set for every run, as a caller must: the program may reuse their memory.
      for (size_t i = 0; i < tensors.size(); ++i) method.set_input(i, tensors[i]);
      method.execute();
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    std::printf("%s, method '%s': %zu output(s)\n", terminal_text(options.model).c_str(),
                terminal_text(options.method).c_str(), info.num_outputs);
    for (size_t i = 0; i < info.num_outputs; ++i) print_summary(method.output(i), i);
    std::printf("latency over %d runs: min %.4f ms, median %.4f ms (first %.3f ms; method load %.3f ms; %zu threads)\n",
                options.iterations, sorted.front(), sorted[sorted.size() / 2], times.front(), load_ms,
                et_threadpool_size());
    std::printf("plugins loaded:");
    for (const etrt::PluginInfo& plugin : etrt::Runtime::get().plugins())
      if (plugin.loaded())
        std::printf(" %s %s (%s)", terminal_text(plugin.name).c_str(), terminal_text(plugin.version).c_str(),
                    terminal_text(plugin.library_path).c_str());
    std::printf("\n");

    if (trace != nullptr) {
      if (options.profile) print_profile(trace->result("operator_summary"), options.method);
      const std::pair<const std::string*, const char*> files[] = {
          {&options.etdump_path, "etdump"}, {&options.debug_buffer_path, "debug_buffer"},
          {&options.trace_path, "chrome_trace"}};
      for (const auto& [path, what] : files) {
        if (path->empty()) continue;
        std::string error;
        if (!etrt::tools::write_output_file(*path, trace->result(what), &error)) {
          print_error("run", error);
          return 1;
        }
        std::printf("%s written to %s\n", what, terminal_text(*path).c_str());
      }
    }

    if (!options.output_dir.empty()) {
      etrt::tools::OutputDirectory directory;
      std::string dir_error;
      if (!directory.open(options.output_dir, true, &dir_error)) {
        print_error("run", "--output-dir " + dir_error);
        return 1;
      }
      for (size_t i = 0; i < info.num_outputs; ++i) {
        const et_value& value = method.output(i);
        if (value.tag != ET_VALUE_TENSOR) continue;
        NpyArray out;
        out.dtype = value.tensor->dtype;
        out.shape.assign(value.tensor->sizes, value.tensor->sizes + value.tensor->rank);
        const auto* bytes = static_cast<const uint8_t*>(value.tensor->data);
        out.data.assign(bytes, bytes + value.tensor->nbytes);
        if (out.dtype == ET_DTYPE_BFLOAT16) bfloat16_to_float32(&out);
        const std::string name = "output_" + std::to_string(i) + ".npy";
        std::string npy, error;
        if (!etrt::tools::encode_npy(out, &npy, &error)) {
          print_error("run", directory.path() + "/" + name + ": " + error);
          return 1;
        }
        if (!directory.write(name, npy, &error)) {
          print_error("run", error);
          return 1;
        }
      }
      std::printf("outputs written to %s\n", terminal_text(options.output_dir).c_str());
    }
    return 0;
  } catch (const etrt::Error& error) {
    print_error("run", error.what());
    return 1;
  }
}
