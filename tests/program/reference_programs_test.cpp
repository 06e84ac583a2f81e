// Every reference program of tests/models/generated (index.json) through etrt from C++:
// each case's inputs (inputs*.npz) in, outputs against eager PyTorch's (expected*.npz)
// within the model's stated tolerance, for the portable program and, where exported,
// the XNNPACK one. tests/python/test_models.py checks the same and more from Python;
// this one needs no Python, so it also runs where there is none (aarch64 under qemu).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "loader/json.h"
#include "npz_reader.h"

namespace {

using etrt::loader::JsonValue;
using etrt::tools::NpyArray;

const std::string kModels = ETRT_MODELS_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

JsonValue read_json(const std::string& path) {
  etrt::loader::JsonParseResult parsed = etrt::loader::parse_json(read_text(path));
  EXPECT_TRUE(parsed.ok) << path << ": " << parsed.error;
  return parsed.value;
}

const std::string& string_of(const JsonValue& object, const char* key) {
  static const std::string empty;
  const JsonValue* v = object.find(key);
  return v != nullptr && v->type == JsonValue::Type::String ? v->string : empty;
}

double number_of(const JsonValue& object, const char* key) {
  const JsonValue* v = object.find(key);
  return v != nullptr && v->type == JsonValue::Type::Number ? v->number : NAN;
}

// The arrays named <prefix>_0, <prefix>_1, ... of an .npz, in order.
std::vector<NpyArray> arrays_of(const std::string& path, const std::string& prefix) {
  std::map<std::string, NpyArray> all;
  std::string error;
  EXPECT_TRUE(etrt_test::read_npz(path, &all, &error)) << error;
  std::vector<NpyArray> arrays;
  for (size_t i = 0;; ++i) {
    auto it = all.find(prefix + "_" + std::to_string(i));
    if (it == all.end()) break;
    arrays.push_back(std::move(it->second));
  }
  return arrays;
}

// An input tensor over an array's bytes: contiguous, dim order 0, 1, ...
struct InputTensor {
  std::vector<int64_t> strides;
  std::vector<uint8_t> order;
  et_tensor tensor{};

  explicit InputTensor(NpyArray& array) {
    strides.assign(array.shape.size(), 1);
    for (size_t d = array.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * array.shape[d];
    for (size_t d = 0; d < array.shape.size(); ++d) order.push_back(static_cast<uint8_t>(d));
    tensor.struct_size = sizeof tensor;
    tensor.dtype = array.dtype;
    tensor.rank = static_cast<int32_t>(array.shape.size());
    tensor.sizes = array.shape.data();
    tensor.strides = strides.data();
    tensor.dim_order = order.data();
    tensor.data = array.data.data();
    tensor.nbytes = tensor.capacity_bytes = array.data.size();
  }
};

template <typename T>
std::string compare_floats(const et_tensor& got, const NpyArray& want, double rtol, double atol) {
  const auto* a = static_cast<const T*>(got.data);
  const auto* b = reinterpret_cast<const T*>(want.data.data());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.data.size() / sizeof(T); ++i) {
    const double x = a[i], y = b[i];
    const bool close = (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= atol + rtol * std::fabs(y);
    if (!close && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " elements differ; the first, " + std::to_string(first) + ": " +
         std::to_string(static_cast<double>(a[first])) + " vs " + std::to_string(static_cast<double>(b[first]));
}

// "" when `got` matches `want` (np.isclose for floats, exact otherwise), else what differs.
std::string compare(const et_value& value, const NpyArray& want, double rtol, double atol) {
  if (value.tag != ET_VALUE_TENSOR || value.tensor == nullptr) return "not a tensor";
  const et_tensor& got = *value.tensor;
  if (got.dtype != want.dtype) return "dtype " + std::to_string(got.dtype) + ", expected " + std::to_string(want.dtype);
  if (std::vector<int64_t>(got.sizes, got.sizes + got.rank) != want.shape) return "shapes differ";
  if (got.nbytes != want.data.size()) return "sizes in bytes differ";
  if (got.dtype == ET_DTYPE_FLOAT32) return compare_floats<float>(got, want, rtol, atol);
  if (got.dtype == ET_DTYPE_FLOAT64) return compare_floats<double>(got, want, rtol, atol);
  return std::memcmp(got.data, want.data.data(), got.nbytes) == 0 ? "" : "values differ";
}

struct ProgramFile {
  std::string model, file;  // file: portable.pte or xnnpack.pte
};

std::vector<ProgramFile> program_files() {
  std::vector<ProgramFile> files;
  JsonValue index = read_json(kModels + "/index.json");
  const JsonValue* models = index.find("models");
  if (models == nullptr) return files;
  for (const JsonValue& model : models->array) {
    const JsonValue* listed = model.find("files");
    if (listed == nullptr) continue;
    for (const JsonValue& file : listed->array)
      if (file.string == "portable.pte" || file.string == "xnnpack.pte") files.push_back({string_of(model, "dir"), file.string});
  }
  return files;
}

class ReferenceProgram : public ::testing::TestWithParam<ProgramFile> {};

TEST_P(ReferenceProgram, MatchesEagerPyTorch) {
  const std::string dir = kModels + "/" + GetParam().model;
  JsonValue meta = read_json(dir + "/meta.json");
  const JsonValue* tolerance = meta.find("tolerance");
  const JsonValue* methods = meta.find("methods");
  ASSERT_TRUE(tolerance != nullptr && methods != nullptr) << dir << "/meta.json: no tolerance or methods";
  const double rtol = number_of(*tolerance, "rtol"), atol = number_of(*tolerance, "atol");
  ASSERT_FALSE(std::isnan(rtol) || std::isnan(atol)) << dir << "/meta.json: tolerance without rtol and atol";

  etrt::Program program = etrt::Program::load(dir + "/" + GetParam().file);
  size_t checked = 0;
  for (const auto& [method_name, spec] : methods->object) {
    etrt::Method method = program.load_method(method_name);  // one method for all cases: state carries over
    const JsonValue* cases = spec.find("cases");
    ASSERT_NE(cases, nullptr) << method_name;
    for (const JsonValue& c : cases->array) {
      const std::string label = GetParam().file + " " + method_name + "[" + string_of(c, "name") + "]";
      std::vector<NpyArray> inputs = arrays_of(dir + "/" + string_of(c, "inputs_file"), "input");
      std::vector<NpyArray> expected = arrays_of(dir + "/" + string_of(c, "expected_file"), "output");
      ASSERT_EQ(inputs.size(), method.num_inputs()) << label;
      ASSERT_EQ(expected.size(), method.num_outputs()) << label;
      std::vector<InputTensor> tensors(inputs.begin(), inputs.end());
      for (size_t i = 0; i < tensors.size(); ++i) method.set_input(i, tensors[i].tensor);
      method.execute();
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(compare(method.output(i), expected[i], rtol, atol), "") << label << " output " << i;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0u);
}

std::string case_name(const ::testing::TestParamInfo<ProgramFile>& info) {
  std::string name = info.param.model + "_" + info.param.file.substr(0, info.param.file.find('.'));
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllModels, ReferenceProgram, ::testing::ValuesIn(program_files()), case_name);

TEST(ReferencePrograms, IndexListsThem) { EXPECT_GE(program_files().size(), 40u); }

}  // namespace
