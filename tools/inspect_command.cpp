// `etrt inspect`: a program's methods, inputs and outputs, operators and delegates, and which plugin would
// serve each, from the manifests, without loading a plugin or running anything.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "etrt/etrt.hpp"
#include "etrt/plugin.hpp"
#include "json_writer.h"
#include "program_text.h"
#include "run_options.h"
#include "terminal_text.h"

namespace {

using namespace etrt::tools;

struct Provider {
  std::string plugin;  // empty when built in or missing
  bool builtin = false, loaded = false, missing = false;
  std::string text() const {
    if (missing) return "MISSING: no plugin provides it";
    if (builtin) return "etrt (built-in)";
    return plugin + (loaded ? " (loaded)" : "");
  }
};

// Which plugin would serve a name, from the manifests, without loading it.
Provider provider_of(int32_t kind, const std::string& name) {
  Provider provider;
  int32_t builtin = 0;
  et_plugin_record record{};
  record.struct_size = sizeof record;
  if (et_planned_server(kind, name.c_str(), &builtin, &record) != ET_OK) {
    provider.missing = true;
  } else if (builtin) {
    provider.builtin = true;
  } else {
    provider.plugin = record.name;
    provider.loaded = record.state == ET_PLUGIN_LOADED;
  }
  return provider;
}

// Delegate ids in order of first appearance, each with how many of the method's delegates name it: a
// program lowered to XNNPACK often holds a dozen subgraphs of the same backend.
std::vector<std::pair<std::string, size_t>> grouped(const std::vector<std::string>& ids) {
  std::vector<std::pair<std::string, size_t>> groups;
  for (const std::string& id : ids) {
    auto it = groups.begin();
    while (it != groups.end() && it->first != id) ++it;
    if (it == groups.end()) groups.emplace_back(id, 1);
    else ++it->second;
  }
  return groups;
}

void add_io_json(JsonWriter& json, const char* key, const etrt::Program& program, const std::string& method,
                 bool outputs, size_t count) {
  json.begin_array(key);
  for (size_t i = 0; i < count; ++i) {
    const et_value_info v = program.io_info(method, outputs, i);
    json.begin_object().integer("index", static_cast<int64_t>(i)).string("kind", tag_text(v.tag));
    if (v.tag == ET_VALUE_TENSOR) {
      json.string("dtype", etrt::plugin::dtype_name(v.dtype)).begin_array("shape");
      for (int32_t d = 0; d < v.rank; ++d) json.integer({}, v.sizes[d]);
      json.end_array()
          .string("shape_dynamism", v.dynamism == ET_SHAPE_STATIC ? "static"
                                    : v.dynamism == ET_SHAPE_DYNAMIC_BOUND ? "dynamic_bound"
                                                                           : "dynamic_unbound")
          .integer("nbytes", static_cast<int64_t>(v.nbytes));
    }
    json.end_object();
  }
  json.end_array();
}

void add_provider_json(JsonWriter& json, const Provider& provider) {
  if (provider.missing) json.null("provider");
  else json.string("provider", provider.builtin ? "etrt" : provider.plugin);
  json.boolean("missing", provider.missing);
}

// Prints the description; true when something has no provider.
bool print_text(const etrt::Program& program, const std::string& path, const std::vector<std::string>& data_files) {
  bool missing = false, external_weights = false;
  std::printf("%s\n", terminal_text(path).c_str());
  for (const std::string& method : program.method_names()) {
    const et_method_info info = program.method_info(method);
    std::printf("\nmethod '%s': %s, %s, %llu bytes planned\n", terminal_text(method).c_str(),
                counted(info.num_instructions, "instruction", "instructions").c_str(),
                counted(info.num_planned_buffers, "planned buffer", "planned buffers").c_str(),
                static_cast<unsigned long long>(info.planned_bytes));
    for (int out = 0; out < 2; ++out) {
      const size_t count = out ? info.num_outputs : info.num_inputs;
      for (size_t i = 0; i < count; ++i) {
        const et_value_info v = program.io_info(method, out, i);
        if (v.tag == ET_VALUE_TENSOR)
          std::printf("  %s %zu: %s %s, %s\n", out ? "output" : "input", i, etrt::plugin::dtype_name(v.dtype),
                      shape_text(v.sizes, v.rank).c_str(), dynamism_text(v.dynamism));
        else
          std::printf("  %s %zu: %s\n", out ? "output" : "input", i, tag_text(v.tag));
      }
    }
    std::printf("  operators (%zu):\n", info.num_operators);
    for (const std::string& op : program.operators(method)) {
      const Provider provider = provider_of(ET_ENTRY_OPERATOR, op);
      missing |= provider.missing;
      std::printf("    %-48s %s\n", terminal_text(op).c_str(), terminal_text(provider.text()).c_str());
    }
    if (info.num_delegates > 0) {
      std::printf("  delegates (%zu):\n", info.num_delegates);
      for (const auto& [id, count] : grouped(program.delegates(method))) {
        const Provider provider = provider_of(ET_ENTRY_BACKEND, id);
        missing |= provider.missing;
        std::printf("    %-32s %15s  %s\n", terminal_text(id).c_str(), counted(count, "subgraph", "subgraphs").c_str(),
                    terminal_text(provider.text()).c_str());
      }
    }
    const std::vector<std::string> external = program.external_tensors(method);
    if (!external.empty()) {
      external_weights = true;
      std::printf("  weights in a .ptd file (%zu):", external.size());
      for (const std::string& key : external) std::printf(" %s", terminal_text(key).c_str());
      std::printf("\n");
    }
  }
  if (missing) std::printf("\nSome operators or delegates have no provider: loading this program will fail.\n");
  if (external_weights && data_files.empty())
    std::printf("\nThis program keeps weights outside it: give their .ptd file with --data to run it.\n");
  return missing;
}

bool print_json(const etrt::Program& program, const std::string& path) {
  bool missing = false, external_weights = false;
  JsonWriter json;
  json.begin_object().string("program", path).begin_array("methods");
  for (const std::string& method : program.method_names()) {
    const et_method_info info = program.method_info(method);
    json.begin_object()
        .string("name", method)
        .integer("instructions", static_cast<int64_t>(info.num_instructions))
        .integer("planned_buffers", static_cast<int64_t>(info.num_planned_buffers))
        .integer("planned_bytes", static_cast<int64_t>(info.planned_bytes));
    add_io_json(json, "inputs", program, method, false, info.num_inputs);
    add_io_json(json, "outputs", program, method, true, info.num_outputs);
    json.begin_array("operators");
    for (const std::string& op : program.operators(method)) {
      const Provider provider = provider_of(ET_ENTRY_OPERATOR, op);
      missing |= provider.missing;
      json.begin_object().string("name", op);
      add_provider_json(json, provider);
      json.end_object();
    }
    json.end_array().begin_array("delegates");
    for (const auto& [id, count] : grouped(program.delegates(method))) {
      const Provider provider = provider_of(ET_ENTRY_BACKEND, id);
      missing |= provider.missing;
      json.begin_object().string("backend", id).integer("subgraphs", static_cast<int64_t>(count));
      add_provider_json(json, provider);
      json.end_object();
    }
    json.end_array().begin_array("external_tensors");
    for (const std::string& key : program.external_tensors(method)) {
      json.string({}, key);
      external_weights = true;
    }
    json.end_array().end_object();
  }
  json.end_array().boolean("missing_providers", missing).boolean("needs_data_file", external_weights).end_object();
  std::printf("%s\n", json.text().c_str());
  return missing;
}

}  // namespace

int run_inspect_command(int argc, char** argv) {
  ProgramOptions options;
  if (const int exit_code = parse_program_options(Command::inspect, argc, argv, &options); exit_code >= 0) return exit_code;
  try {
    const etrt::Program program = load_program(options);
    const bool missing = options.json ? print_json(program, options.model)
                                       : print_text(program, options.model, options.data_files);
    return missing ? 1 : 0;
  } catch (const etrt::Error& error) {
    print_error("inspect", error.what());
    return 1;
  }
}
