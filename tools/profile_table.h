// The per-operator table of `etrt run --profile`, from the etdump tracer's operator summary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "json_writer.h"

namespace etrt::tools {

// One row of the tracer's operator summary (TSV: name, plugin, kind, calls, total ns).
struct ProfileRow {
  std::string name, plugin, kind;
  uint64_t calls = 0, total_ns = 0;
};

struct Profile {
  std::vector<ProfileRow> operators;  // slowest first
  uint64_t runs = 0, run_ns = 0;      // the method's own rows: traced runs and their time
};

Profile parse_profile(const std::string& summary);
void print_profile(const Profile& profile, const std::string& method_name);
void add_profile_json(JsonWriter& json, const Profile& profile);

}  // namespace etrt::tools
