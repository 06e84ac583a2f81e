#include "run_outputs.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "etrt/half.hpp"
#include "etrt/plugin.hpp"
#include "output_file.h"
#include "program_text.h"

namespace etrt::tools {
namespace {

// Element i of a tensor as a double, for the dtypes that have one; false otherwise.
bool element(const et_tensor& t, size_t i, double* out) {
  const void* data = t.data;
  switch (t.dtype) {
    case ET_DTYPE_FLOAT32: *out = static_cast<const float*>(data)[i]; return true;
    case ET_DTYPE_FLOAT64: *out = static_cast<const double*>(data)[i]; return true;
    case ET_DTYPE_FLOAT16: *out = etrt::plugin::to_float(static_cast<const etrt::plugin::Half*>(data)[i]); return true;
    case ET_DTYPE_BFLOAT16:
      *out = etrt::plugin::to_float(static_cast<const etrt::plugin::BFloat16*>(data)[i]);
      return true;
    case ET_DTYPE_UINT8: *out = static_cast<const uint8_t*>(data)[i]; return true;
    case ET_DTYPE_BOOL: *out = static_cast<const uint8_t*>(data)[i] != 0; return true;
    case ET_DTYPE_INT8: *out = static_cast<const int8_t*>(data)[i]; return true;
    case ET_DTYPE_INT16: *out = static_cast<const int16_t*>(data)[i]; return true;
    case ET_DTYPE_INT32: *out = static_cast<const int32_t*>(data)[i]; return true;
    case ET_DTYPE_INT64: *out = static_cast<double>(static_cast<const int64_t*>(data)[i]); return true;
    default: return false;
  }
}

bool is_integral(int32_t dtype) { return dtype != ET_DTYPE_FLOAT32 && dtype != ET_DTYPE_FLOAT64 &&
                                         dtype != ET_DTYPE_FLOAT16 && dtype != ET_DTYPE_BFLOAT16; }

std::string element_text(const et_tensor& t, size_t i) {
  double x = 0;
  if (!element(t, i, &x)) return "?";
  char buffer[32];
  if (t.dtype == ET_DTYPE_INT64)
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(static_cast<const int64_t*>(t.data)[i]));
  else if (is_integral(t.dtype))
    std::snprintf(buffer, sizeof buffer, "%.0f", x);
  else
    std::snprintf(buffer, sizeof buffer, "%.6g", x);
  return buffer;
}

struct Range {
  double lo = 0, hi = 0, mean = 0;
};

// min, max, mean of a tensor whose dtype has numbers; false when it has none or no elements.
bool range_of(const et_tensor& t, Range* range) {
  const size_t n = etrt::plugin::numel(t);
  double x = 0;
  if (n == 0 || !element(t, 0, &x)) return false;
  range->lo = range->hi = x;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    element(t, i, &x);
    range->lo = std::min(range->lo, x);
    range->hi = std::max(range->hi, x);
    sum += x;
  }
  range->mean = sum / static_cast<double>(n);
  return true;
}

void print_scalar(const et_value& value, size_t index) {
  if (value.tag == ET_VALUE_DOUBLE) std::printf("  output %zu: double %g\n", index, value.as_double);
  else std::printf("  output %zu: %s %lld\n", index, tag_text(value.tag), static_cast<long long>(value.as_int));
}

NpyArray array_of(const et_tensor& t) {
  NpyArray out;
  out.dtype = t.dtype;
  out.shape.assign(t.sizes, t.sizes + t.rank);
  const auto* bytes = static_cast<const uint8_t*>(t.data);
  out.data.assign(bytes, bytes + t.nbytes);
  return out;
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

}  // namespace

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

void print_output(const et_value& value, size_t index, PrintOutput mode) {
  if (mode == PrintOutput::none) return;
  if (value.tag != ET_VALUE_TENSOR) return print_scalar(value, index);
  const et_tensor& t = *value.tensor;
  const size_t n = etrt::plugin::numel(t);
  std::printf("  output %zu: %s %s", index, etrt::plugin::dtype_name(t.dtype), shape_text(t.sizes, t.rank).c_str());
  if (mode == PrintOutput::all) {
    std::printf(":");
    for (size_t i = 0; i < n; ++i) std::printf(" %s", element_text(t, i).c_str());
    std::printf("\n");
    return;
  }
  Range range;
  if (!is_integral(t.dtype) && range_of(t, &range))
    std::printf("  min %.6g max %.6g mean %.6g", range.lo, range.hi, range.mean);
  if (n > 0 && t.dtype != ET_DTYPE_BOOL) {
    std::printf("  first:");
    for (size_t i = 0; i < std::min<size_t>(n, is_integral(t.dtype) ? 6 : 4); ++i)
      std::printf(" %s", element_text(t, i).c_str());
  }
  std::printf("\n");
}

void add_output_json(JsonWriter& json, const et_value& value, size_t index) {
  json.begin_object().integer("index", static_cast<int64_t>(index)).string("kind", tag_text(value.tag));
  if (value.tag == ET_VALUE_DOUBLE) {
    json.number("value", value.as_double);
  } else if (value.tag == ET_VALUE_INT || value.tag == ET_VALUE_BOOL) {
    json.integer("value", value.as_int);
  } else if (value.tag == ET_VALUE_TENSOR) {
    const et_tensor& t = *value.tensor;
    json.string("dtype", etrt::plugin::dtype_name(t.dtype)).begin_array("shape");
    for (int32_t d = 0; d < t.rank; ++d) json.integer({}, t.sizes[d]);
    json.end_array();
    Range range;
    if (range_of(t, &range)) json.number("min", range.lo).number("max", range.hi).number("mean", range.mean);
  }
  json.end_object();
}

bool write_outputs_npy(const etrt::Method& method, size_t count, const std::string& dir, std::string* error) {
  OutputDirectory directory;
  std::string dir_error;
  if (!directory.open(dir, true, &dir_error)) {
    *error = "--output-dir " + dir_error;
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    const et_value& value = method.output(i);
    if (value.tag != ET_VALUE_TENSOR) continue;
    NpyArray out = array_of(*value.tensor);
    if (out.dtype == ET_DTYPE_BFLOAT16) bfloat16_to_float32(&out);
    const std::string name = "output_" + std::to_string(i) + ".npy";
    std::string npy, problem;
    if (!encode_npy(out, &npy, &problem)) {
      *error = directory.path() + "/" + name + ": " + problem;
      return false;
    }
    if (!directory.write(name, npy, error)) return false;
  }
  return true;
}

bool write_outputs_raw(const etrt::Method& method, size_t count, const std::string& base, std::string* error) {
  for (size_t i = 0; i < count; ++i) {
    const et_value& value = method.output(i);
    if (value.tag != ET_VALUE_TENSOR) continue;
    const et_tensor& t = *value.tensor;
    const std::string_view bytes(static_cast<const char*>(t.data), t.nbytes);
    if (!write_output_file(base + "-" + std::to_string(i) + ".bin", bytes, error)) return false;
  }
  return true;
}

}  // namespace etrt::tools
