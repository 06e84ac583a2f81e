// `etrt run`: runs a method of a .pte and reports its outputs, latency and the plugins that served it;
// optionally traces the timed runs (profile table, ETDump, debug buffer, Chrome trace).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "etrt/etrt.hpp"
#include "json_writer.h"
#include "npy.h"
#include "output_file.h"
#include "profile_table.h"
#include "program_text.h"
#include "run_options.h"
#include "run_outputs.h"
#include "terminal_text.h"

namespace {

using namespace etrt::tools;

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

// The method's inputs as tensors over arrays this object owns.
struct Inputs {
  std::vector<NpyArray> arrays;
  std::vector<std::vector<int64_t>> strides;
  std::vector<et_tensor> tensors;
};

// False with *error naming the input or file and the problem.
bool prepare_inputs(const etrt::Program& program, const std::string& method, const et_method_info& info,
                    const ProgramOptions& options, Inputs* inputs, std::string* error) {
  if (!options.inputs.empty() && options.inputs.size() != info.num_inputs) {
    *error = "method '" + method + "' takes " + counted(info.num_inputs, "input", "inputs") + ", " +
             std::to_string(options.inputs.size()) + " given";
    return false;
  }
  inputs->arrays.resize(info.num_inputs);
  inputs->strides.resize(info.num_inputs);
  inputs->tensors.resize(info.num_inputs);
  for (size_t i = 0; i < info.num_inputs; ++i) {
    const et_value_info v = program.io_info(method, false, i);
    if (v.tag != ET_VALUE_TENSOR) {
      *error = "input " + std::to_string(i) + " is a " + tag_text(v.tag) + ", which the command line cannot give";
      return false;
    }
    NpyArray& a = inputs->arrays[i];
    if (options.inputs.empty()) {
      a = generated_input(v, static_cast<unsigned>(i + 1));
    } else if (!read_input_file(options.inputs[i], generated_input(v, 0), &a, error)) {
      return false;
    }
    if (v.dtype == ET_DTYPE_BFLOAT16 && a.dtype == ET_DTYPE_FLOAT32) float32_to_bfloat16(&a);
    std::vector<int64_t>& strides = inputs->strides[i];
    strides.assign(a.shape.size(), 1);
    for (size_t d = a.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(a.shape[d], 1);
    et_tensor& t = inputs->tensors[i];
    t.struct_size = sizeof t;
    t.dtype = a.dtype;
    t.rank = static_cast<int32_t>(a.shape.size());
    t.sizes = a.shape.data();
    t.strides = strides.data();
    t.data = a.data.data();
    t.nbytes = t.capacity_bytes = a.data.size();
  }
  return true;
}

struct Latency {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0, first = 0;
};

// Percentiles by nearest rank: the smallest time at least q of the runs took no longer than.
Latency latency_of(const std::vector<double>& times) {
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const auto rank = [&](double q) {
    const size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(r, 1, sorted.size()) - 1];
  };
  double sum = 0;
  for (double t : times) sum += t;
  return {sorted.front(), rank(0.5), rank(0.9), rank(0.99), sorted.back(), sum / static_cast<double>(times.size()),
          times.front()};
}

// A file the tracer writes: what the user asked for it with, and the result it holds.
struct TraceFile {
  const char* flag;
  const std::string* path;
  const char* result;
};

// The "needed N bytes" of the tracer's debug-buffer overflow; 0 when the message has none.
unsigned long long bytes_needed(const std::string& message) {
  const size_t at = message.find("needed ");
  return at == std::string::npos ? 0 : std::strtoull(message.c_str() + at + 7, nullptr, 10);
}

// The tracer's refusal of a result, said in the command line's terms: a debug buffer too small names the
// flag that sizes it, the bytes the traced runs needed and what one run needs.
std::string trace_error_text(const etrt::Error& error, const ProgramOptions& options, int traced_runs) {
  const unsigned long long needed = bytes_needed(error.what());
  if (error.code() != ET_ERR_OUT_OF_MEMORY || options.debug_buffer_path.empty() || needed == 0) return error.what();
  const unsigned long long per_run = (needed + traced_runs - 1) / static_cast<unsigned long long>(traced_runs);
  return "the debug buffer of " + std::to_string(options.debug_buffer_size) + " bytes (--debug-buffer-size) is too " +
         "small: the " + counted(static_cast<size_t>(traced_runs), "traced run", "traced runs") + " needed " +
         std::to_string(needed) + " bytes, about " + std::to_string(per_run) + " per run; give --debug-buffer-size " +
         std::to_string(needed) + " or more, or trace fewer runs (--iterations)";
}

// Writes every file the user asked the tracer for. One that cannot be had or written does not stop the
// others: a debug buffer too small still leaves the Chrome trace. False when any failed.
bool write_trace_files(const etrt::TraceSession& trace, const ProgramOptions& options, int traced_runs,
                       JsonWriter* json) {
  const TraceFile files[] = {{"--trace", &options.trace_path, "chrome_trace"},
                             {"--etdump", &options.etdump_path, "etdump"},
                             {"--debug-buffer", &options.debug_buffer_path, "debug_buffer"}};
  bool all_written = true;
  std::string last_refusal;
  if (json) json->begin_array("files");
  for (const TraceFile& file : files) {
    if (file.path->empty()) continue;
    std::string error;
    try {
      if (write_output_file(*file.path, trace.result(file.result), &error)) {
        if (json) json->begin_object().string("kind", file.result).string("path", *file.path).boolean("written", true).end_object();
        else std::printf("%s written to %s\n", file.result, terminal_text(*file.path).c_str());
        continue;
      }
    } catch (const etrt::Error& refused) {
      error = trace_error_text(refused, options, traced_runs);
    }
    all_written = false;
    if (json) json->begin_object().string("kind", file.result).string("path", *file.path).boolean("written", false)
                  .string("error", error).end_object();
    // The ETDump and the debug buffer are refused for the same reason: said once.
    print_error("run", std::string(file.flag) + " " + *file.path + " not written" +
                           (error == last_refusal ? " (the same reason)" : ": " + error));
    last_refusal = error;
  }
  if (json) json->end_array();
  return all_written;
}

void add_latency_json(JsonWriter& json, const Latency& latency, const ProgramOptions& options, double load_ms) {
  json.begin_object("latency_ms")
      .integer("runs", options.iterations)
      .integer("warmup_runs", options.warmup)
      .number("min", latency.min)
      .number("p50", latency.p50)
      .number("p90", latency.p90)
      .number("p99", latency.p99)
      .number("max", latency.max)
      .number("mean", latency.mean)
      .number("first", latency.first)
      .end_object()
      .number("method_load_ms", load_ms);
}

void add_plugins_json(JsonWriter& json) {
  json.begin_array("plugins_loaded");
  for (const etrt::PluginInfo& plugin : etrt::Runtime::get().plugins())
    if (plugin.loaded())
      json.begin_object()
          .string("name", plugin.name)
          .string("version", plugin.version)
          .string("library", plugin.library_path)
          .end_object();
  json.end_array();
}

void print_plugins_text() {
  std::printf("plugins loaded:");
  for (const etrt::PluginInfo& plugin : etrt::Runtime::get().plugins())
    if (plugin.loaded())
      std::printf(" %s %s (%s)", terminal_text(plugin.name).c_str(), terminal_text(plugin.version).c_str(),
                  terminal_text(plugin.library_path).c_str());
  std::printf("\n");
}

int run(const ProgramOptions& options) {
  if (options.threads > 0) etrt::Runtime::get().set_num_threads(options.threads);
  etrt::Program program = load_program(options);
  const std::string method_name = method_to_run(program, options);
  const et_method_info info = program.method_info(method_name);
  const auto load_start = std::chrono::steady_clock::now();
  etrt::Method method = program.load_method(method_name);
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();

  Inputs inputs;
  std::string error;
  if (!prepare_inputs(program, method_name, info, options, &inputs, &error)) {
    print_error("run", error);
    return 1;
  }
  if (options.inputs.empty() && !options.json)
    std::printf("no --input given: using generated inputs of the declared shapes\n");

  // Inputs are set for every run, as a caller must: the program may reuse their memory.
  const auto run_once = [&]() {
    for (size_t i = 0; i < inputs.tensors.size(); ++i) method.set_input(i, inputs.tensors[i]);
    method.execute();
  };
  for (int i = 0; i < options.warmup; ++i) run_once();

  std::unique_ptr<etrt::TraceSession> trace;
  if (options.traced()) {
    trace = std::make_unique<etrt::TraceSession>(
        "etdump", options.debug_buffer_path.empty() ? 0 : options.debug_buffer_size, options.model);
    method.set_trace_session(trace.get());
  }
  std::vector<double> times;
  for (int iteration = 0; iteration < options.iterations; ++iteration) {
    const auto start = std::chrono::steady_clock::now();
    run_once();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  const Latency latency = latency_of(times);
  const size_t threads = et_threadpool_size();

  JsonWriter json;
  JsonWriter* json_out = options.json ? &json : nullptr;
  if (options.json) {
    json.begin_object().string("program", options.model).string("method", method_name)
        .string("inputs", options.inputs.empty() ? "generated" : "files").begin_array("outputs");
    for (size_t i = 0; i < info.num_outputs; ++i) add_output_json(json, method.output(i), i);
    json.end_array();
    add_latency_json(json, latency, options, load_ms);
    json.integer("threads", static_cast<int64_t>(threads));
    add_plugins_json(json);
  } else {
    std::printf("%s, method '%s': %s\n", terminal_text(options.model).c_str(), terminal_text(method_name).c_str(),
                counted(info.num_outputs, "output", "outputs").c_str());
    for (size_t i = 0; i < info.num_outputs; ++i) print_output(method.output(i), i, options.print_output);
    const std::string warmup = options.warmup > 0 ? ", after " + counted(options.warmup, "warm-up run", "warm-up runs") : "";
    std::printf("latency over %s%s: min %.4f ms, median %.4f ms, p90 %.4f ms, p99 %.4f ms, max %.4f ms "
                "(first %.3f ms; method load %.3f ms; %s)\n",
                counted(options.iterations, "run", "runs").c_str(), warmup.c_str(), latency.min, latency.p50,
                latency.p90, latency.p99, latency.max, latency.first, load_ms,
                counted(threads, "thread", "threads").c_str());
    print_plugins_text();
  }

  bool complete = true;
  if (trace != nullptr) {
    if (options.profile) {
      const Profile profile = parse_profile(trace->result("operator_summary"));
      if (options.json) add_profile_json(json, profile);
      else print_profile(profile, method_name);
    }
    complete = write_trace_files(*trace, options, options.iterations, json_out);
  }

  const std::pair<const std::string*, bool (*)(const etrt::Method&, size_t, const std::string&, std::string*)>
      output_files[] = {{&options.output_dir, write_outputs_npy}, {&options.output_file_base, write_outputs_raw}};
  for (const auto& [target, write] : output_files) {
    if (target->empty()) continue;
    if (!write(method, info.num_outputs, *target, &error)) {
      print_error("run", error);
      complete = false;
    } else if (!options.json) {
      std::printf("outputs written to %s%s\n", terminal_text(*target).c_str(),
                  target == &options.output_file_base ? "-<i>.bin" : "");
    }
  }
  if (options.json) {
    json.boolean("complete", complete).end_object();
    std::printf("%s\n", json.text().c_str());
  }
  return complete ? 0 : 1;
}

}  // namespace

int run_run_command(int argc, char** argv) {
  ProgramOptions options;
  if (const int exit_code = parse_program_options(Command::run, argc, argv, &options); exit_code >= 0) return exit_code;
  try {
    return run(options);
  } catch (const etrt::Error& error) {
    print_error("run", error.what());
    return 1;
  }
}
