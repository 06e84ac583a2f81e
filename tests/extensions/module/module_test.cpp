// etrt::extension::Module and its tensors (extensions/module): lazy loading,
// the method cache, metadata, inputs and outputs, .ptd files, ETDump, and the
// errors each bad call gets.
#include "etrt/module/module.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/npy.h"

using namespace etrt::extension;

namespace {

const std::string kModels = ETRT_MODELS_DIR;
const std::string kAdd = kModels + "/op_add/portable.pte";
const std::string kTwoMethods = kModels + "/two_methods/portable.pte";

std::vector<float> values(const Tensor& tensor) {
  const float* data = tensor.const_data_ptr<float>();
  return std::vector<float>(data, data + tensor.numel());
}

TEST(Module, LoadsLazilyAndCachesMethods) {
  Module module(kAdd);
  EXPECT_FALSE(module.is_loaded());
  auto names = module.method_names();
  ASSERT_TRUE(names.ok()) << names.message();
  EXPECT_TRUE(module.is_loaded());
  EXPECT_EQ(*names, (std::unordered_set<std::string>{"forward", "broadcast", "rank0"}));
  EXPECT_EQ(*module.num_methods(), 3u);
  EXPECT_FALSE(module.is_method_loaded("forward"));

  ASSERT_EQ(module.load_forward(), Error::Ok) << module.last_error_message();
  EXPECT_TRUE(module.is_method_loaded("forward"));
  EXPECT_TRUE(module.unload_forward());
  EXPECT_FALSE(module.is_method_loaded("forward"));
  EXPECT_FALSE(module.unload_method("forward"));
}

TEST(Module, ForwardAddsTwoTensors) {
  Module module(kAdd);
  std::vector<float> a(15), b(15);
  for (int i = 0; i < 15; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i);
  auto ta = from_blob(a.data(), {3, 5});
  auto tb = make_tensor_ptr({3, 5}, b);
  auto result = module.forward({ta, tb});
  ASSERT_TRUE(result.ok()) << result.message();
  ASSERT_EQ(result->size(), 1u);
  const Tensor& out = result->at(0).toTensor();
  EXPECT_EQ(out.scalar_type(), ScalarType::Float);
  ASSERT_EQ(out.dim(), 2);
  EXPECT_EQ(out.size(0), 3);
  EXPECT_EQ(out.size(1), 5);
  for (int i = 0; i < 15; ++i) EXPECT_FLOAT_EQ(values(out)[i], 1.5f * static_cast<float>(i));
  EXPECT_TRUE(module.is_method_loaded("forward"));  // forward loaded it

  // Inputs set ahead are kept: the second run changes only the first input.
  ASSERT_EQ(module.set_input(make_tensor_ptr({3, 5}, std::vector<float>(15, 1.0f)), 0), Error::Ok);
  auto again = module.forward();
  ASSERT_TRUE(again.ok()) << again.message();
  for (int i = 0; i < 15; ++i) EXPECT_FLOAT_EQ(values(again->at(0).toTensor())[i], 1.0f + b[i]);
}

TEST(Module, SetInputsAndGetOutputs) {
  Module module(kAdd);
  ASSERT_EQ(module.set_inputs({ones({3, 5}), full({3, 5}, 2.0)}), Error::Ok) << module.last_error_message();
  ASSERT_TRUE(module.forward().ok());
  auto output = module.get_output();
  ASSERT_TRUE(output.ok()) << output.message();
  EXPECT_EQ(values(output->toTensor()), std::vector<float>(15, 3.0f));
  EXPECT_EQ(module.get_outputs()->size(), 1u);

  EXPECT_EQ(module.set_inputs({ones({3, 5})}), Error::InvalidArgument);
  EXPECT_NE(module.last_error_message().find("takes 2 inputs, not 1"), std::string::npos)
      << module.last_error_message();
}

TEST(Module, PreallocatedOutputReceivesTheResult) {
  Module module(kAdd);
  std::vector<float> storage(15, -1.0f);
  ASSERT_EQ(module.set_output(from_blob(storage.data(), {3, 5})), Error::Ok) << module.last_error_message();
  auto result = module.forward({ones({3, 5}), ones({3, 5})});
  ASSERT_TRUE(result.ok()) << result.message();
  EXPECT_EQ(storage, std::vector<float>(15, 2.0f));
  EXPECT_EQ(result->at(0).toTensor().const_data_ptr<float>(), storage.data());

  // A tensor of another dtype or too small is refused, naming the problem.
  auto ints = zeros({3, 5}, ScalarType::Int);
  EXPECT_EQ(module.set_output(ints), Error::InvalidArgument);
  EXPECT_NE(module.last_error_message().find("is Float; the tensor given is Int"), std::string::npos)
      << module.last_error_message();
  EXPECT_EQ(module.set_output(zeros({2, 5})), Error::InvalidArgument);
  EXPECT_NE(module.last_error_message().find("needs 60 bytes"), std::string::npos) << module.last_error_message();
  EXPECT_EQ(module.set_output(EValue(int64_t{3})), Error::InvalidArgument);
}

TEST(Module, MethodMetaFromTheProgramAlone) {
  Module module(kTwoMethods);
  auto meta = module.method_meta("encode");
  ASSERT_TRUE(meta.ok()) << meta.message();
  EXPECT_FALSE(module.is_method_loaded("encode"));
  EXPECT_STREQ(meta->name(), "encode");
  ASSERT_EQ(meta->num_inputs(), 1u);
  EXPECT_EQ(*meta->input_tag(0), Tag::Tensor);
  auto input = meta->input_tensor_meta(0);
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->scalar_type(), ScalarType::Float);
  EXPECT_EQ(std::vector<int32_t>(input->sizes().begin(), input->sizes().end()), (std::vector<int32_t>{3, 16}));
  EXPECT_TRUE(input->is_memory_planned());
  EXPECT_EQ(input->nbytes(), 3u * 16u * 4u);
  EXPECT_EQ(meta->num_backends(), 0u);
  EXPECT_FALSE(meta->uses_backend("XnnpackBackend"));

  auto missing = meta->input_tensor_meta(1);
  EXPECT_EQ(missing.error(), Error::InvalidArgument);
  EXPECT_NE(missing.message().find("no input 1"), std::string::npos) << missing.message();
  EXPECT_THROW(missing.get(), etrt::Error);  // reading a failed Result's value

  auto xnnpack = Module(kModels + "/two_methods/xnnpack.pte").method_meta("forward");
  ASSERT_TRUE(xnnpack.ok()) << xnnpack.message();
  EXPECT_TRUE(xnnpack->uses_backend("XnnpackBackend"));
  EXPECT_STREQ(*xnnpack->get_backend_name(0), "XnnpackBackend");
}

TEST(Module, ExecutesANamedMethod) {
  Module module(kTwoMethods);
  auto encoded = module.execute("encode", zeros({3, 16}));
  ASSERT_TRUE(encoded.ok()) << encoded.message();
  EXPECT_EQ(encoded->at(0).toTensor().size(0), 3);
  EXPECT_TRUE(module.is_method_loaded("encode"));
  EXPECT_FALSE(module.is_method_loaded("forward"));
  auto first = module.get("forward", zeros({2, 16}));
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_EQ(first->toTensor().size(1), 16);
}

TEST(Module, ErrorsNameTheProblemAndLeaveTheModuleUsable) {
  Module absent("/nonexistent/model.pte");
  EXPECT_NE(absent.load(), Error::Ok);
  EXPECT_NE(absent.last_error_message().find("/nonexistent/model.pte"), std::string::npos)
      << absent.last_error_message();
  EXPECT_FALSE(absent.is_loaded());
  auto forward = absent.forward();
  EXPECT_FALSE(forward.ok());
  EXPECT_NE(forward.message().find("/nonexistent/model.pte"), std::string::npos) << forward.message();

  Module module(kAdd);
  EXPECT_EQ(module.load_method("backward"), Error::NotFound);
  EXPECT_NE(module.last_error_message().find("backward"), std::string::npos) << module.last_error_message();
  EXPECT_FALSE(module.method_meta("backward").ok());

  auto wrong_dtype = module.forward({zeros({3, 5}, ScalarType::Long), zeros({3, 5})});
  EXPECT_EQ(wrong_dtype.error(), Error::InvalidArgument);
  EXPECT_FALSE(wrong_dtype.message().empty());
  auto wrong_shape = module.forward({zeros({4, 5}), zeros({3, 5})});
  EXPECT_EQ(wrong_shape.error(), Error::InvalidArgument);
  EXPECT_EQ(module.set_input(zeros({3, 5}), 2), Error::InvalidArgument);
  EXPECT_NE(module.last_error_message().find("there is no input 2"), std::string::npos);
  EXPECT_EQ(module.load_method("forward", reinterpret_cast<HierarchicalAllocator*>(&module)), Error::NotSupported);

  auto good = module.forward({ones({3, 5}), ones({3, 5})});
  ASSERT_TRUE(good.ok()) << good.message();
  EXPECT_EQ(values(good->at(0).toTensor()), std::vector<float>(15, 2.0f));
  EXPECT_EQ(module.last_error_message(), "");
}

TEST(Module, ExternalWeightsFromAPtdFile) {
  const std::string dir = ETRT_DATA_FILE_DIR;
  etrt::tools::NpyArray input, expected;
  std::string problem;
  ASSERT_TRUE(etrt::tools::read_npy(dir + "/input.npy", &input, &problem)) << problem;
  ASSERT_TRUE(etrt::tools::read_npy(dir + "/expected.npy", &expected, &problem)) << problem;

  Module without(dir + "/linear_portable.pte");
  auto refused = without.forward(from_blob(input.data.data(), {2, 8}));
  EXPECT_FALSE(refused.ok());

  Module module(dir + "/linear_portable.pte", dir + "/linear_portable.ptd");
  auto result = module.forward(from_blob(input.data.data(), {2, 8}));
  ASSERT_TRUE(result.ok()) << result.message();
  const float* want = reinterpret_cast<const float*>(expected.data.data());
  std::vector<float> got = values(result->at(0).toTensor());
  ASSERT_EQ(got.size(), 8u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f);
}

TEST(Module, ETDumpOfTheRuns) {
  Module module(kAdd, Module::LoadMode::MmapUseMlock, std::make_unique<ETDumpGen>());
  ASSERT_TRUE(module.forward({ones({3, 5}), ones({3, 5})}).ok());
  auto* etdump = dynamic_cast<ETDumpGen*>(module.event_tracer());
  ASSERT_NE(etdump, nullptr);
  ETDumpResult trace = etdump->get_etdump_data();
  ASSERT_NE(trace.buf, nullptr) << etdump->last_error();
  std::string bytes(static_cast<const char*>(trace.buf), trace.size);
  std::free(trace.buf);
  EXPECT_GT(trace.size, 16u);
  EXPECT_NE(bytes.find("aten::add.out"), std::string::npos);  // the operator's event

  ETDumpGen unused;
  EXPECT_EQ(unused.get_etdump_data().buf, nullptr);
  EXPECT_EQ(unused.last_error(), "no method was traced yet");
}

TEST(Tensor, OwnsOrBorrows) {
  float blob[6] = {1, 2, 3, 4, 5, 6};
  auto borrowed = from_blob(blob, {2, 3});
  EXPECT_EQ(borrowed->const_data_ptr<float>(), blob);
  EXPECT_EQ(borrowed->nbytes(), 24u);
  EXPECT_EQ(std::vector<int32_t>(borrowed->strides().begin(), borrowed->strides().end()),
            (std::vector<int32_t>{3, 1}));

  auto owned = clone_tensor_ptr(borrowed);
  blob[0] = 100;
  EXPECT_EQ(owned->const_data_ptr<float>()[0], 1.0f);
  EXPECT_NE(owned->const_data_ptr<float>(), blob);

  bool deleted = false;
  {
    auto with_deleter = from_blob(blob, {6}, ScalarType::Float, [&](void* p) { deleted = p == blob; });
    EValue kept(with_deleter);
  }
  EXPECT_TRUE(deleted);

  auto converted = make_tensor_ptr({2}, std::vector<int>{7, -3}, {}, {}, ScalarType::Float);
  EXPECT_EQ(converted->scalar_type(), ScalarType::Float);
  EXPECT_EQ(converted->const_data_ptr<float>()[1], -3.0f);
  auto scalar = make_tensor_ptr(int64_t{5});
  EXPECT_EQ(scalar->dim(), 0);
  EXPECT_EQ(scalar->scalar_type(), ScalarType::Long);
  EXPECT_EQ(make_tensor_ptr({1.0, 2.0, 3.0})->scalar_type(), ScalarType::Double);
  EXPECT_EQ(ones({2}, ScalarType::Bool)->const_data_ptr<uint8_t>()[1], 1);

  auto dynamic = zeros({4, 2});
  EXPECT_EQ(resize_tensor_ptr(dynamic, {2, 2}), Error::Ok);
  EXPECT_EQ(dynamic->numel(), 4);
  EXPECT_EQ(resize_tensor_ptr(dynamic, {5, 2}), Error::InvalidArgument);  // beyond its bytes
}

TEST(Tensor, BadShapesAreRefused) {
  EXPECT_THROW(make_tensor_ptr({2, 2}, std::vector<float>{1, 2, 3}), etrt::Error);
  EXPECT_THROW(empty({-1}), etrt::Error);
  EXPECT_THROW(from_blob(nullptr, {2, 2}, {0, 0}, {}), etrt::Error);
  EXPECT_THROW(full({2}, 1.0, ScalarType::Half), etrt::Error);
  EXPECT_THROW(empty({65536, 65536, 65536, 65536, 65536}), etrt::Error);  // its byte count overflows
  EXPECT_THROW(EValue{TensorPtr{}}, etrt::Error);
  EValue number(int64_t{4});
  EXPECT_THROW(number.toTensor(), etrt::Error);
  EXPECT_EQ(EValue(3).toInt(), 3);
  EXPECT_TRUE(EValue(2.5).isDouble());
  EXPECT_TRUE(EValue(true).isBool());
}

}  // namespace
