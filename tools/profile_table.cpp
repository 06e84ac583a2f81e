#include "profile_table.h"

#include <algorithm>
#include <cstdio>

#include "terminal_text.h"

namespace etrt::tools {

Profile parse_profile(const std::string& summary) {
  Profile profile;
  size_t start = 0;
  while (start < summary.size()) {
    size_t end = summary.find('\n', start);
    if (end == std::string::npos) end = summary.size();
    std::vector<std::string> fields;
    for (size_t at = start; at <= end;) {
      size_t tab = summary.find('\t', at);
      if (tab == std::string::npos || tab > end) tab = end;
      fields.push_back(summary.substr(at, tab - at));
      at = tab + 1;
    }
    start = end + 1;
    if (fields.size() != 5) continue;
    ProfileRow row{fields[0], fields[1], fields[2], std::stoull(fields[3]), std::stoull(fields[4])};
    if (row.kind == "method") {
      profile.run_ns += row.total_ns;
      profile.runs += row.calls;
    } else {
      profile.operators.push_back(std::move(row));
    }
  }
  std::sort(profile.operators.begin(), profile.operators.end(), [](const ProfileRow& a, const ProfileRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return profile;
}

void print_profile(const Profile& profile, const std::string& method_name) {
  std::printf("\nprofile of method '%s' over %llu traced run%s, %.3f ms in the method:\n",
              terminal_text(method_name).c_str(), static_cast<unsigned long long>(profile.runs),
              profile.runs == 1 ? "" : "s", static_cast<double>(profile.run_ns) / 1e6);
  std::printf("  %-40s %-20s %8s %12s %12s %7s\n", "operator", "plugin", "calls", "total ms", "mean us", "share");
  for (const ProfileRow& row : profile.operators) {
    const double share =
        profile.run_ns > 0 ? 100.0 * static_cast<double>(row.total_ns) / static_cast<double>(profile.run_ns) : 0.0;
    std::printf("  %-40s %-20s %8llu %12.3f %12.3f %6.1f%%\n", terminal_text(row.name).c_str(),
                row.plugin.empty() ? "etrt (built-in)" : terminal_text(row.plugin).c_str(),
                static_cast<unsigned long long>(row.calls), static_cast<double>(row.total_ns) / 1e6,
                static_cast<double>(row.total_ns) / 1e3 / static_cast<double>(std::max<uint64_t>(row.calls, 1)),
                share);
  }
}

void add_profile_json(JsonWriter& json, const Profile& profile) {
  json.begin_object("profile")
      .integer("traced_runs", static_cast<int64_t>(profile.runs))
      .number("method_ms", static_cast<double>(profile.run_ns) / 1e6)
      .begin_array("operators");
  for (const ProfileRow& row : profile.operators)
    json.begin_object()
        .string("name", row.name)
        .string("plugin", row.plugin.empty() ? "etrt" : row.plugin)
        .string("kind", row.kind)
        .integer("calls", static_cast<int64_t>(row.calls))
        .number("total_ms", static_cast<double>(row.total_ns) / 1e6)
        .end_object();
  json.end_array().end_object();
}

}  // namespace etrt::tools
