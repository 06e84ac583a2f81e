// Weights in a separate .ptd file (ExecuTorch's external constants): programs
// exported by tests/data_file/export_external.py run with their data attached,
// and every way the data can be wrong or missing is an error naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "data_file_generated.h"
#include "etrt/etrt.hpp"
#include "tools/npy.h"

namespace {

using ::testing::HasSubstr;

const std::string kDir = ETRT_DATA_FILE_DIR;

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

etrt::tools::NpyArray npy(const std::string& name) {
  etrt::tools::NpyArray array;
  std::string error;
  EXPECT_TRUE(etrt::tools::read_npy(kDir + "/" + name, &array, &error)) << error;
  return array;
}

// Runs `forward` on input.npy and returns its float output.
std::vector<float> run(const etrt::Program& program) {
  etrt::tools::NpyArray input = npy("input.npy");
  std::vector<int64_t> strides(input.shape.size(), 1);
  for (size_t i = input.shape.size(); i-- > 1;) strides[i - 1] = strides[i] * input.shape[i];
  std::vector<uint8_t> dim_order(input.shape.size());
  for (size_t i = 0; i < dim_order.size(); ++i) dim_order[i] = static_cast<uint8_t>(i);
  et_tensor tensor{};
  tensor.struct_size = sizeof tensor;
  tensor.dtype = ET_DTYPE_FLOAT32;
  tensor.rank = static_cast<int32_t>(input.shape.size());
  tensor.sizes = input.shape.data();
  tensor.strides = strides.data();
  tensor.dim_order = dim_order.data();
  tensor.data = input.data.data();
  tensor.nbytes = input.data.size();
  tensor.capacity_bytes = input.data.size();
  etrt::Method method = program.load_method("forward");
  method.set_input(0, tensor);
  method.execute();
  const et_tensor* out = method.output(0).tensor;
  const auto* begin = static_cast<const float*>(out->data);
  return {begin, begin + out->nbytes / sizeof(float)};
}

void expect_matches_eager(const std::vector<float>& got) {
  etrt::tools::NpyArray expected = npy("expected.npy");
  const auto* want = reinterpret_cast<const float*>(expected.data.data());
  ASSERT_EQ(got.size(), expected.data.size() / sizeof(float));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "element " << i;
}

template <typename Body>
etrt::Error error_of(Body body) {
  try {
    body();
  } catch (const etrt::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return etrt::Error(ET_OK, "");
}

class DataFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DataFileTest, RunsWithItsDataAttachedAndMatchesEager) {
  etrt::Program program = etrt::Program::load(kDir + "/" + GetParam() + ".pte");
  program.add_data_file(kDir + "/" + GetParam() + ".ptd");
  expect_matches_eager(run(program));
}

TEST_P(DataFileTest, DataFromBytesWorksLikeAFile) {
  etrt::Program program = etrt::Program::load(kDir + "/" + GetParam() + ".pte");
  std::vector<uint8_t> bytes = read_bytes(kDir + "/" + GetParam() + ".ptd");
  program.add_data_bytes(bytes.data(), bytes.size(), "weights");
  bytes.assign(bytes.size(), 0);  // the runtime keeps its own copy
  expect_matches_eager(run(program));
}

TEST_P(DataFileTest, MissingDataNamesWhatIsMissing) {
  etrt::Program program = etrt::Program::load(kDir + "/" + GetParam() + ".pte");
  etrt::Error error = error_of([&] { run(program); });
  EXPECT_NE(error.code(), ET_OK);
  EXPECT_THAT(error.what(), HasSubstr("not found"));
  EXPECT_THAT(error.what(), HasSubstr("no data file attached"));
  // The process stays usable: attaching the data afterwards works.
  program.add_data_file(kDir + "/" + GetParam() + ".ptd");
  expect_matches_eager(run(program));
}

INSTANTIATE_TEST_SUITE_P(Exports, DataFileTest, ::testing::Values("linear_portable", "linear_xnnpack"));

TEST(DataFileErrors, WrongDataFileNamesTheKeyAndTheFiles) {
  etrt::Program program = etrt::Program::load(kDir + "/linear_portable.pte");
  program.add_data_file(kDir + "/linear_xnnpack.ptd");  // valid, but other keys
  etrt::Error error = error_of([&] { run(program); });
  EXPECT_EQ(error.code(), ET_ERR_NOT_FOUND);
  EXPECT_THAT(error.what(), HasSubstr("external tensor '"));
  EXPECT_THAT(error.what(), HasSubstr("linear_xnnpack.ptd"));
}

TEST(DataFileErrors, SameFileTwiceIsRefused) {
  etrt::Program program = etrt::Program::load(kDir + "/linear_portable.pte");
  program.add_data_file(kDir + "/linear_portable.ptd");
  etrt::Error error = error_of([&] { program.add_data_file(kDir + "/linear_portable.ptd"); });
  EXPECT_EQ(error.code(), ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(error.what(), HasSubstr("already attached"));
}

etrt::Error attach_bytes_error(std::vector<uint8_t> bytes) {
  etrt::Program program = etrt::Program::load(kDir + "/linear_portable.pte");
  return error_of([&] { program.add_data_bytes(bytes.data(), bytes.size(), "broken.ptd"); });
}

TEST(DataFileErrors, CorruptFilesAreRefusedWithTheReason) {
  std::vector<uint8_t> good = read_bytes(kDir + "/linear_portable.ptd");
  ASSERT_GT(good.size(), 512u);

  EXPECT_THAT(attach_bytes_error({}).what(), HasSubstr("no FT01 identifier"));
  EXPECT_THAT(attach_bytes_error(read_bytes(kDir + "/linear_portable.pte")).what(), HasSubstr("not a data file"));

  std::vector<uint8_t> truncated(good.begin(), good.begin() + static_cast<long>(good.size() / 2));
  EXPECT_THAT(attach_bytes_error(truncated).what(), HasSubstr("broken.ptd"));

  std::vector<uint8_t> no_header = good;
  std::memcpy(no_header.data() + 8, "XX01", 4);
  EXPECT_THAT(attach_bytes_error(no_header).what(), HasSubstr("no FH01 header"));

  std::vector<uint8_t> huge_segments = good;  // segment data size (header bytes 40..47) beyond the file
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(huge_segments.data() + 40, &huge, sizeof huge);
  EXPECT_THAT(attach_bytes_error(huge_segments).what(), HasSubstr("outside the file"));

  std::vector<uint8_t> flipped = good;  // the flatbuffer's root offset points outside it
  flipped[0] = 0xff;
  flipped[1] = 0xff;
  EXPECT_THAT(attach_bytes_error(flipped).what(), HasSubstr("failed verification"));
}

// A data file built here: one key with the given layout and bytes.
std::vector<uint8_t> make_data_file(const std::string& key, etrt::pte::ScalarType type, std::vector<int32_t> sizes,
                                    size_t bytes) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<uint8_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint8_t>(i);
  auto layout = etrt::ptd::CreateTensorLayout(builder, type, builder.CreateVector(sizes), builder.CreateVector(order));
  auto named = etrt::ptd::CreateNamedData(builder, builder.CreateString(key), 0, layout);
  std::vector<flatbuffers::Offset<etrt::ptd::DataSegment>> segments{etrt::ptd::CreateDataSegment(builder, 0, bytes)};
  auto root = etrt::ptd::CreateDataFile(builder, 0, builder.CreateVector(segments),
                                        builder.CreateVector(std::vector<decltype(named)>{named}));
  builder.Finish(root, "FT01");
  // The header goes right after the identifier, as the exporter writes it; the
  // flatbuffer's offsets are relative to its start, so shift by a padded header.
  std::vector<uint8_t> flat(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  const size_t header = 48;  // 40 bytes, padded to 16
  std::vector<uint8_t> file(flat.size() + header);
  std::memcpy(file.data() + 8 + header, flat.data() + 8, flat.size() - 8);
  uint32_t root_offset = 0;
  std::memcpy(&root_offset, flat.data(), 4);
  root_offset += header;
  std::memcpy(file.data(), &root_offset, 4);
  std::memcpy(file.data() + 4, "FT01", 4);
  const uint64_t flat_offset = header, flat_size = flat.size();
  const uint64_t base = (file.size() + 63) / 64 * 64, data_size = bytes;
  std::memcpy(file.data() + 8, "FH01", 4);
  const uint32_t length = 40;
  std::memcpy(file.data() + 12, &length, 4);
  std::memcpy(file.data() + 16, &flat_offset, 8);
  std::memcpy(file.data() + 24, &flat_size, 8);
  std::memcpy(file.data() + 32, &base, 8);
  std::memcpy(file.data() + 40, &data_size, 8);
  file.resize(base + bytes, 0);
  return file;
}

etrt::Error load_with(const std::vector<uint8_t>& data) {
  etrt::Program program = etrt::Program::load(kDir + "/linear_portable.pte");
  program.add_data_bytes(data.data(), data.size(), "made.ptd");
  // l1.weight is float32 [16, 8]; the other keys are missing either way, l1.weight is checked first.
  return error_of([&] { run(program); });
}

TEST(DataFileErrors, LayoutDifferentFromTheProgramIsRefused) {
  EXPECT_THAT(load_with(make_data_file("l1.weight", etrt::pte::ScalarType::FLOAT, {16, 8}, 16 * 8 * 4)).what(),
              HasSubstr("external tensor '"));  // right layout: fails later, on a missing key
  EXPECT_THAT(load_with(make_data_file("l1.weight", etrt::pte::ScalarType::DOUBLE, {16, 8}, 16 * 8 * 8)).what(),
              HasSubstr("the data file has float64, the program expects float32"));
  EXPECT_THAT(load_with(make_data_file("l1.weight", etrt::pte::ScalarType::FLOAT, {8, 16}, 16 * 8 * 4)).what(),
              HasSubstr("shape or dim order"));
  EXPECT_THAT(load_with(make_data_file("l1.weight", etrt::pte::ScalarType::FLOAT, {16, 8}, 100)).what(),
              HasSubstr("holds 100 bytes, the tensor needs 512"));
}

}  // namespace
