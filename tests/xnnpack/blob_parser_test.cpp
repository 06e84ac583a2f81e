// The XNNPACK blob parser on graphs built here with the flatbuffers builder:
// every id, index, offset and size it must check, each failing with a message
// naming the problem; and random damage never crashes it.
#include <cstring>
#include <map>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph.h"
#include "xnnpack_blob_generated.h"

namespace fb = etrt::xnnblob;
using etrt::xnn::Graph;
using ::testing::HasSubstr;

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;

struct Builder {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Value>> values;
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  std::vector<flatbuffers::Offset<fb::ConstantEntry>> constants;
  std::vector<uint8_t> constant_region;
  uint32_t num_externals = 0;
  const char* identifier = "XN01";

  Builder() { constants.push_back(fb::CreateConstantEntry(b, 0, 0, 0)); }  // entry 0 is reserved

  void tensor(std::vector<uint32_t> dims, uint32_t id, uint32_t ext = kNone, uint32_t io = 0, uint32_t cidx = 0,
              fb::ElementType type = fb::ElementType::fp32) {
    auto shape = b.CreateVector(dims);
    auto t = fb::CreateTensorValue(b, type, static_cast<uint32_t>(dims.size()), shape, cidx, ext, io, id);
    values.push_back(fb::CreateValue(b, fb::ValueKind::TensorValue, t.Union()));
  }
  // A quantized value: per-tensor (scale, zero point), or per-channel / per-group with scales in constant `scales`.
  void quantized(std::vector<uint32_t> dims, uint32_t id, fb::ElementType type, flatbuffers::Offset<void> params,
                 fb::Quantization kind, uint32_t cidx = 0, uint32_t ext = kNone, uint32_t io = 0) {
    auto shape = b.CreateVector(dims);
    auto t = fb::CreateTensorValue(b, type, static_cast<uint32_t>(dims.size()), shape, cidx, ext, io, id);
    auto q = fb::CreateQuantizedTensorValue(b, t, kind, params);
    values.push_back(fb::CreateValue(b, fb::ValueKind::QuantizedTensorValue, q.Union()));
  }
  void per_tensor(std::vector<uint32_t> dims, uint32_t id, fb::ElementType type, float scale, int zero_point,
                  uint32_t cidx = 0, uint32_t ext = kNone, uint32_t io = 0) {
    quantized(dims, id, type, fb::CreatePerTensor(b, scale, zero_point).Union(), fb::Quantization::PerTensor, cidx,
              ext, io);
  }
  void per_channel(std::vector<uint32_t> dims, uint32_t id, fb::ElementType type, uint32_t cidx, uint32_t scales,
                   uint32_t count, int axis = 0) {
    quantized(dims, id, type, fb::CreatePerChannel(b, 0, axis, scales, count).Union(), fb::Quantization::PerChannel,
              cidx);
  }
  void unary(fb::Operation type, uint32_t in, uint32_t out) {
    node(type, fb::CreateUnary(b, in, out, 0).Union());
  }
  uint32_t bytes_constant(const std::vector<uint8_t>& data) {
    uint64_t offset = constant_region.size();
    constant_region.insert(constant_region.end(), data.begin(), data.end());
    constant_region.resize((constant_region.size() + 3) / 4 * 4, 0);
    constants.push_back(fb::CreateConstantEntry(b, offset, data.size(), 0));
    return static_cast<uint32_t>(constants.size() - 1);
  }
  // A named-data constant; returns its constant index.
  uint32_t named(const std::string& key, uint64_t size) {
    constants.push_back(fb::CreateConstantEntry(b, UINT64_MAX, size, b.CreateString(key)));
    return static_cast<uint32_t>(constants.size() - 1);
  }
  uint32_t inline_constant(const std::vector<float>& data) {
    uint64_t offset = constant_region.size();
    const auto* p = reinterpret_cast<const uint8_t*>(data.data());
    constant_region.insert(constant_region.end(), p, p + data.size() * sizeof(float));
    constants.push_back(fb::CreateConstantEntry(b, offset, data.size() * sizeof(float), 0));
    return static_cast<uint32_t>(constants.size() - 1);
  }
  void node(fb::Operation type, flatbuffers::Offset<void> op, float lo = 0, float hi = 0, bool clamp = false) {
    flatbuffers::Offset<fb::ClampRange> range = clamp ? fb::CreateClampRange(b, lo, hi) : 0;
    nodes.push_back(fb::CreateNode(b, type, op, 7, range));
  }
  void fully_connected(uint32_t in, uint32_t w, uint32_t bias, uint32_t out) {
    node(fb::Operation::FullyConnected, fb::CreateFullyConnected(b, in, w, bias, out, 0).Union());
  }
  std::vector<uint8_t> finish(bool header = true) {
    auto graph = fb::CreateGraph(b, b.CreateString("0"), b.CreateVector(nodes), b.CreateVector(values),
                                 num_externals, 0, 0, 0, 0, b.CreateVector(constants));
    b.Finish(graph, identifier);
    std::vector<uint8_t> fbytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    if (!header) return fbytes;
    auto pad16 = [](size_t n) { return (n + 15) / 16 * 16; };
    std::vector<uint8_t> blob(32, 0);
    std::memcpy(blob.data() + 4, "XH00", 4);
    uint16_t length = 30;
    uint32_t fb_offset = 32, fb_size = static_cast<uint32_t>(fbytes.size());
    uint32_t c_offset = static_cast<uint32_t>(pad16(32 + fbytes.size()));
    uint64_t c_size = constant_region.size();
    std::memcpy(blob.data() + 8, &length, 2);
    std::memcpy(blob.data() + 10, &fb_offset, 4);
    std::memcpy(blob.data() + 14, &fb_size, 4);
    std::memcpy(blob.data() + 18, &c_offset, 4);
    std::memcpy(blob.data() + 22, &c_size, 8);
    blob.insert(blob.end(), fbytes.begin(), fbytes.end());
    blob.resize(c_offset, 0);
    blob.insert(blob.end(), constant_region.begin(), constant_region.end());
    return blob;
  }
};

struct Parsed {
  std::string error;
  bool unsupported = false;
  Graph graph;
};

std::map<std::string, std::vector<float>> g_named = {
    {"w", std::vector<float>(8 * 4, 0.5f)}, {"b", std::vector<float>(8, 0.25f)}, {"small", std::vector<float>(3)}};

Parsed parse(const std::vector<uint8_t>& blob) {
  Parsed p;
  auto lookup = [](const char* key, const void** data, size_t* size) -> std::string {
    auto it = g_named.find(key);
    if (it == g_named.end()) return "no such key";
    *data = it->second.data();
    *size = it->second.size() * sizeof(float);
    return "";
  };
  p.error = etrt::xnn::parse_blob(blob.data(), blob.size(), lookup, &p.graph, &p.unsupported);
  return p;
}

// input [2,4] -> FullyConnected(w [8,4], b [8]) -> output [2,8], ReLU fused.
Builder linear(uint32_t out_dim = 8, uint32_t weight_cidx_override = 0) {
  Builder g;
  g.num_externals = 2;
  uint32_t w = weight_cidx_override ? weight_cidx_override : g.named("w", 128);
  uint32_t bias = g.named("b", 32);
  g.tensor({2, 4}, 0, 0, 1);
  g.tensor({8, 4}, 1, kNone, 0, w);
  g.tensor({8}, 2, kNone, 0, bias);
  g.tensor({2, out_dim}, 3, 1, 2);
  g.node(fb::Operation::FullyConnected, fb::CreateFullyConnected(g.b, 0, 1, 2, 3, 0).Union(), 0.0f,
         std::numeric_limits<float>::infinity(), true);
  return g;
}

TEST(XnnpackBlob, ValidLinearGraphParses) {
  Parsed p = parse(linear().finish());
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(p.graph.nodes.size(), 1u);
  EXPECT_EQ(p.graph.inputs, std::vector<uint32_t>{0});
  EXPECT_EQ(p.graph.outputs, std::vector<uint32_t>{3});
  EXPECT_EQ(p.graph.nodes[0].out_min, 0.0f);
  EXPECT_TRUE(std::isinf(p.graph.nodes[0].out_max));
  // Named data is used in place, not copied (the program outlives the delegate).
  EXPECT_EQ(p.graph.values[1].data, g_named["w"].data());
}

TEST(XnnpackBlob, HeaderOffsetsAreChecked) {
  std::vector<uint8_t> good = linear().finish();
  auto with = [&](size_t at, uint32_t value) {
    std::vector<uint8_t> blob = good;
    std::memcpy(blob.data() + at, &value, 4);
    return parse(blob).error;
  };
  EXPECT_THAT(with(10, 0xFFFFFF00u), HasSubstr("flatbuffer offset"));
  EXPECT_THAT(with(10, 8), HasSubstr("flatbuffer offset"));
  EXPECT_THAT(with(14, static_cast<uint32_t>(good.size())), HasSubstr("flatbuffer size"));
  EXPECT_THAT(with(14, 4), HasSubstr("flatbuffer size"));
  EXPECT_THAT(with(18, 40), HasSubstr("constant data offset"));
  EXPECT_THAT(with(18, static_cast<uint32_t>(good.size() + 1)), HasSubstr("constant data offset"));
  std::vector<uint8_t> big = good;
  uint64_t huge = UINT64_MAX - 3;
  std::memcpy(big.data() + 22, &huge, 8);
  EXPECT_THAT(parse(big).error, HasSubstr("constant data size"));
  std::vector<uint8_t> tiny(good.begin(), good.begin() + 20);
  EXPECT_THAT(parse(tiny).error, HasSubstr("XH00 header magic but is only 20 bytes"));
}

TEST(XnnpackBlob, IdentifierAndVerifierAreChecked) {
  Builder g = linear();
  g.identifier = "QQ42";
  EXPECT_THAT(parse(g.finish()).error, HasSubstr("identifier is 'QQ42'"));
  std::vector<uint8_t> blob = linear().finish();
  uint32_t bad_root = 0x7FFFFFF0u;
  std::memcpy(blob.data() + 32, &bad_root, 4);
  EXPECT_THAT(parse(blob).error, HasSubstr("flatbuffer verification failed"));
  // Legacy blobs without the header are the flatbuffer alone.
  EXPECT_EQ(parse(linear().finish(/*header=*/false)).error, "");
}

TEST(XnnpackBlob, ValueIdsAndExternalIndicesAreChecked) {
  {
    Builder g = linear();
    g.fully_connected(0, 1, 2, 99);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("output id 99 is not a value"));
  }
  {
    Builder g;
    g.num_externals = 1;
    g.tensor({2}, 0, 0, 1);
    g.tensor({2}, 1, 5, 2);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("external index 5 is outside the 1 external values"));
  }
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 1);
    g.tensor({2}, 1, 0, 2);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("external index 0 is also used by value 0"));
  }
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 1);
    g.tensor({2}, 0, 1, 2);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("reuses id 0"));
  }
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 9);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("unknown flags 9"));
  }
}

TEST(XnnpackBlob, ConstantsAreChecked) {
  EXPECT_THAT(parse(linear(8, 40).finish()).error, HasSubstr("constant index 40 is outside the constant table"));
  {
    Builder g;
    g.num_externals = 2;
    uint32_t w = g.named("not-there", 128);
    g.tensor({2, 4}, 0, 0, 1);
    g.tensor({8, 4}, 1, kNone, 0, w);
    g.tensor({2, 8}, 2, 1, 2);
    g.fully_connected(0, 1, kNone, 2);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("named data 'not-there' is not in the program"));
  }
  {
    Builder g;
    g.num_externals = 2;
    uint32_t w = g.named("small", 128);
    g.tensor({2, 4}, 0, 0, 1);
    g.tensor({8, 4}, 1, kNone, 0, w);
    g.tensor({2, 8}, 2, 1, 2);
    g.fully_connected(0, 1, kNone, 2);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("named data 'small' has 12 bytes, the tensor [8, 4] needs 128"));
  }
  {
    // Constants in the blob's own region: copied (the blob dies after init), bounds checked.
    Builder g;
    g.num_externals = 2;
    uint32_t w = g.inline_constant(std::vector<float>(32, 1.0f));
    g.tensor({2, 4}, 0, 0, 1);
    g.tensor({8, 4}, 1, kNone, 0, w);
    g.tensor({2, 8}, 2, 1, 2);
    g.fully_connected(0, 1, kNone, 2);
    std::vector<uint8_t> blob = g.finish();
    Parsed p = parse(blob);
    ASSERT_EQ(p.error, "");
    EXPECT_EQ(p.graph.values[1].f32()[31], 1.0f);
    const auto* copy = reinterpret_cast<const uint8_t*>(p.graph.values[1].data);
    EXPECT_TRUE(copy < blob.data() || copy >= blob.data() + blob.size()) << "constant not copied out of the blob";
    uint64_t shrunk = 64;
    std::memcpy(blob.data() + 22, &shrunk, 8);
    EXPECT_THAT(parse(blob).error, HasSubstr("outside the blob's constant region"));
  }
}

TEST(XnnpackBlob, NodeOrderAndShapesAreChecked) {
  EXPECT_THAT(parse(linear(9).finish()).error, HasSubstr("is declared [2, 9] but the node computes [2, 8]"));
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({2, 3}, 0, 0, 1);
    g.tensor({3, 2}, 1);
    g.tensor({3, 2}, 2, 1, 2);
    std::vector<uint32_t> perm = {1, 1};
    g.node(fb::Operation::Transpose, fb::CreateTransposeDirect(g.b, 2, &perm, 0, 1).Union());
    g.node(fb::Operation::Copy, fb::CreateUnary(g.b, 1, 2).Union());
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("is not a permutation"));
  }
  {
    Builder g;  // the stated rank and the lists' lengths disagree
    g.num_externals = 2;
    g.tensor({2, 3}, 0, 0, 1);
    g.tensor({3, 2}, 1, 1, 2);
    std::vector<uint32_t> perm = {1, 0};
    g.node(fb::Operation::Transpose, fb::CreateTransposeDirect(g.b, 3, &perm, 0, 1).Union());
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("node 0 (Transpose): rank 3 but 2 permutation entries"));
  }
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({4, 4}, 0, 0, 1);
    g.tensor({2, 2}, 1, 1, 2);
    std::vector<uint32_t> begins = {0, 0}, sizes = {2, 2, 1};
    g.node(fb::Operation::Slice, fb::CreateSliceDirect(g.b, 2, &begins, &sizes, 0, 1).Union());
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("node 0 (Slice): rank 2 but 2 offsets and 3 sizes"));
  }
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 1);
    g.tensor({2}, 1);
    g.tensor({2}, 2, 1, 2);
    g.node(fb::Operation::Copy, fb::CreateUnary(g.b, 1, 2).Union());  // reads 1 before it exists
    g.node(fb::Operation::Copy, fb::CreateUnary(g.b, 0, 1).Union());
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("is not produced by an earlier node"));
  }
  {
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 1);
    g.tensor({2}, 1, 1, 2);
    EXPECT_THAT(parse(g.finish()).error, HasSubstr("graph has no nodes"));
  }
}

TEST(XnnpackBlob, UnsupportedThingsAreReportedAsSuch) {
  Builder g;
  g.num_externals = 2;
  g.tensor({2}, 0, 0, 1, 0, fb::ElementType::qint8);
  g.tensor({2}, 1, 1, 2);
  Parsed p = parse(g.finish());
  EXPECT_TRUE(p.unsupported);
  EXPECT_THAT(p.error, HasSubstr("qint8"));
  Builder h;
  h.num_externals = 2;
  h.tensor({2}, 0, 0, 1);
  h.tensor({2}, 1, 1, 2);
  h.node(fb::Operation::Attention, fb::CreateAttention(h.b, 0, 0, 0, 0, 0, 1).Union());
  p = parse(h.finish());
  EXPECT_TRUE(p.unsupported);
  EXPECT_THAT(p.error, HasSubstr("Attention is not supported"));
}

// fp32 [2,4] -> Convert -> qint8 -> FullyConnected(qcint8 [8,4], qcint32 [8]) -> qint8 -> Convert -> fp32 [2,8].
struct StaticLinear {
  float weight_scale = 0.5f;
  int input_zero_point = -3;
  uint32_t scale_count = 8;
  bool quantized_input = false;  // the delegate input itself qint8 (refused)
};
Builder static_linear(const StaticLinear& o = {}) {
  Builder g;
  g.num_externals = 2;
  uint32_t w = g.bytes_constant(std::vector<uint8_t>(32, 1));
  uint32_t w_scales = g.inline_constant(std::vector<float>(8, o.weight_scale));
  uint32_t bias = g.bytes_constant(std::vector<uint8_t>(32, 0));
  uint32_t b_scales = g.inline_constant(std::vector<float>(8, 0.01f));
  if (o.quantized_input)
    g.per_tensor({2, 4}, 0, fb::ElementType::qint8, 0.1f, 0, 0, 0, 1);
  else
    g.tensor({2, 4}, 0, 0, 1);
  g.per_tensor({2, 4}, 1, fb::ElementType::qint8, 0.1f, o.input_zero_point);
  g.per_channel({8, 4}, 2, fb::ElementType::qcint8, w, w_scales, o.scale_count);
  g.per_channel({8}, 3, fb::ElementType::qcint32, bias, b_scales, 8);
  g.per_tensor({2, 8}, 4, fb::ElementType::qint8, 0.2f, 5);
  g.tensor({2, 8}, 5, 1, 2);
  g.unary(fb::Operation::Convert, 0, 1);
  g.fully_connected(1, 2, 3, 4);
  g.unary(fb::Operation::Convert, 4, 5);
  return g;
}

TEST(XnnpackBlobQuantized, StaticPerChannelLinearParses) {
  Parsed p = parse(static_linear().finish());
  ASSERT_EQ(p.error, "");
  EXPECT_TRUE(p.graph.quantized);
  ASSERT_EQ(p.graph.nodes.size(), 3u);
  EXPECT_EQ(p.graph.nodes[0].op, etrt::xnn::Op::Convert);
  const etrt::xnn::Value& w = p.graph.values[2];
  EXPECT_EQ(w.dtype, etrt::xnn::DType::qcint8);
  EXPECT_EQ(w.scales, std::vector<float>(8, 0.5f));
  EXPECT_EQ(p.graph.values[1].zero_point, -3);
  EXPECT_FLOAT_EQ(p.graph.values[4].scale, 0.2f);
  EXPECT_EQ(p.graph.values[3].dtype, etrt::xnn::DType::qcint32);
}

TEST(XnnpackBlobQuantized, BadParametersAreNamed) {
  StaticLinear zero_scale;
  zero_scale.weight_scale = 0.0f;
  Parsed p = parse(static_linear(zero_scale).finish());
  EXPECT_FALSE(p.unsupported);
  EXPECT_THAT(p.error, HasSubstr("is not a positive finite number"));
  StaticLinear zero_point;
  zero_point.input_zero_point = 200;
  p = parse(static_linear(zero_point).finish());
  EXPECT_THAT(p.error, HasSubstr("zero point 200 is outside [-128, 127]"));
  StaticLinear count;
  count.scale_count = 7;
  p = parse(static_linear(count).finish());
  EXPECT_THAT(p.error, HasSubstr("holds 7 scales, 8 expected"));
  StaticLinear io;
  io.quantized_input = true;
  p = parse(static_linear(io).finish());
  EXPECT_TRUE(p.unsupported);
  EXPECT_THAT(p.error, HasSubstr("delegate input or output of type qint8"));
}

// fp32 [3,32] -> Convert -> qdint8 -> FullyConnected(weights, fp32 bias) -> fp32 [3,4].
Builder dynamic_linear(fb::ElementType weight_type, bool convert_to_dynamic = true) {
  Builder g;
  g.num_externals = 2;
  bool four_bit = weight_type == fb::ElementType::qbint4 || weight_type == fb::ElementType::qcint4;
  uint32_t w = g.bytes_constant(std::vector<uint8_t>(four_bit ? 4 * 16 : 4 * 32, 0x19));
  uint32_t bias = g.inline_constant(std::vector<float>(4, 1.0f));
  g.tensor({3, 32}, 0, 0, 1);
  if (convert_to_dynamic)
    g.quantized({3, 32}, 1, fb::ElementType::qdint8, fb::CreatePerTokenDynamic(g.b, 1).Union(),
                fb::Quantization::PerTokenDynamic);
  else
    g.per_tensor({3, 32}, 1, fb::ElementType::qint8, 0.1f, 0);
  if (weight_type == fb::ElementType::qbint4) {
    std::vector<uint8_t> bf16_scales;
    for (int k = 0; k < 8; ++k) bf16_scales.insert(bf16_scales.end(), {0x00, 0x3f});  // 0.5 as bf16
    uint32_t scales = g.bytes_constant(bf16_scales);
    g.quantized({4, 32}, 2, weight_type, fb::CreatePerChannelGroup(g.b, 0, 0, 16, scales, 8).Union(),
                fb::Quantization::PerChannelGroup, w);
  } else {
    g.per_channel({4, 32}, 2, weight_type, w, g.inline_constant(std::vector<float>(4, 0.25f)), 4);
  }
  g.tensor({4}, 3, kNone, 0, bias);
  g.tensor({3, 4}, 4, 1, 2);
  g.unary(fb::Operation::Convert, 0, 1);
  g.fully_connected(1, 2, 3, 4);
  return g;
}

TEST(XnnpackBlobQuantized, DynamicLinearFoldsItsConvert) {
  for (fb::ElementType type : {fb::ElementType::qcint8, fb::ElementType::qbint4, fb::ElementType::qcint4}) {
    Parsed p = parse(dynamic_linear(type).finish());
    ASSERT_EQ(p.error, "") << fb::EnumNameElementType(type);
    ASSERT_EQ(p.graph.nodes.size(), 1u);
    EXPECT_EQ(p.graph.nodes[0].op, etrt::xnn::Op::DynamicFullyConnected);
    EXPECT_EQ(p.graph.nodes[0].inputs[0], 0u);  // reads the float input directly
    EXPECT_EQ(p.graph.values[4].producer, 0);
  }
  Parsed four = parse(dynamic_linear(fb::ElementType::qbint4).finish());
  EXPECT_EQ(four.graph.values[2].group_size, 16u);
  EXPECT_EQ(four.graph.values[2].scales, std::vector<float>(8, 0.5f));
  Parsed per_channel = parse(dynamic_linear(fb::ElementType::qcint4).finish());
  EXPECT_EQ(per_channel.graph.values[2].dtype, etrt::xnn::DType::qcint4);
  EXPECT_EQ(per_channel.graph.values[2].scales, std::vector<float>(4, 0.25f));
}

TEST(XnnpackBlobQuantized, FourBitWeightsNeedDynamicInput) {
  for (fb::ElementType type : {fb::ElementType::qbint4, fb::ElementType::qcint4}) {
    Parsed p = parse(dynamic_linear(type, /*convert_to_dynamic=*/false).finish());
    EXPECT_TRUE(p.unsupported);
    EXPECT_THAT(p.error, HasSubstr(std::string("4-bit ") + fb::EnumNameElementType(type) +
                                   " weights need dynamically quantized (qdint8) input"));
  }
}

TEST(XnnpackBlob, DamagedBlobsNeverCrash) {
  std::vector<uint8_t> good = linear().finish();
  for (size_t n = 0; n < good.size(); ++n) {  // every truncation
    std::vector<uint8_t> cut(good.begin(), good.begin() + n);
    EXPECT_NE(parse(cut).error, "") << "truncated to " << n;
  }
  std::mt19937 rng(1234);
  size_t rejected = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<uint8_t> blob = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) blob[rng() % blob.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (!parse(blob).error.empty()) ++rejected;
  }
  EXPECT_GT(rejected, 1000u);
}

}  // namespace

namespace {

// input [1,5,5,4] -> ConvTranspose2d (2 groups of 2 -> 3, kernel 3x2, stride (1,2), dilation 2, pad top/bottom 1,
// adjustment `adjust_w`) -> output [1, 7, 11 + adjust_w, 6], declared `out_w` wide.
std::vector<uint8_t> transposed_convolution(uint32_t adjust_w, uint32_t out_w,
                                            std::vector<uint32_t> weights = {6, 3, 2, 2}, uint32_t stride_w = 2) {
  Builder g;
  g.num_externals = 2;
  size_t count = 1;
  for (uint32_t d : weights) count *= d;
  uint32_t w = g.inline_constant(std::vector<float>(count, 0.5f));
  g.tensor({1, 5, 5, 4}, 0, 0, 1);
  g.tensor(weights, 1, kNone, 0, w);
  g.tensor({1, 7, out_w, 6}, 2, 1, 2);
  g.node(fb::Operation::ConvTranspose2d,
         fb::CreateConvolution(g.b, 1, 0, 1, 0, 3, 2, 1, stride_w, 2, 2, 2, 3, 2, 0, adjust_w, 0, 1, kNone, 2, 0)
             .Union());
  return g.finish();
}

}  // namespace

TEST(XnnpackBlobNodes, TransposedConvolutionIsReadWithItsAdjustment) {
  Parsed p = parse(transposed_convolution(1, 12));
  ASSERT_EQ(p.error, "");
  const etrt::xnn::Node& n = p.graph.nodes.at(0);
  EXPECT_EQ(n.op, etrt::xnn::Op::ConvTranspose2d);
  EXPECT_EQ(n.adjust[1], 1u);
  EXPECT_EQ(n.groups, 2u);
  EXPECT_EQ(n.dilation[0], 2u);
  EXPECT_THAT(parse(transposed_convolution(1, 11)).error,
              HasSubstr("is declared [1, 7, 11, 6] but the node computes [1, 7, 12, 6]"));
  EXPECT_THAT(parse(transposed_convolution(0, 11, {6, 3, 2, 4})).error,
              HasSubstr("weights are [6, 3, 2, 4], the node needs [6, 3, 2, 2]"));
  // PyTorch's rule: the adjustment must be below the stride or the dilation (2 and 2 here).
  EXPECT_THAT(parse(transposed_convolution(2, 13)).error,
              HasSubstr("width: output adjustment 2 must be smaller than the stride or the dilation"));
}

namespace {

// input [1,2,2,C] -> PReLU(slope [slope_count], constant unless !constant_slope) -> output.
Parsed prelu(uint32_t channels, uint32_t slope_count, bool constant_slope = true) {
  Builder g;
  g.num_externals = constant_slope ? 2 : 3;
  uint32_t s = g.inline_constant(std::vector<float>(slope_count, 0.25f));
  g.tensor({1, 2, 2, channels}, 0, 0, 1);
  if (constant_slope) g.tensor({slope_count}, 1, kNone, 0, s); else g.tensor({slope_count}, 1, 2, 1);
  g.tensor({1, 2, 2, channels}, 2, 1, 2);
  g.node(fb::Operation::PRelu, fb::CreateBinary(g.b, 0, 1, 2, 0).Union());
  return parse(g.finish());
}

}  // namespace

TEST(XnnpackBlobNodes, PReluSlopesArePerChannel) {
  Parsed per_channel = prelu(3, 3);
  ASSERT_EQ(per_channel.error, "");
  EXPECT_EQ(per_channel.graph.nodes.at(0).op, etrt::xnn::Op::PRelu);
  // nn.PReLU()'s one shared slope becomes one per channel (XNNPACK reads one per channel).
  Parsed shared = prelu(3, 1);
  ASSERT_EQ(shared.error, "");
  const etrt::xnn::Value& slope = shared.graph.values.at(shared.graph.nodes.at(0).inputs.at(1));
  ASSERT_EQ(slope.dims, etrt::xnn::Shape{3});
  EXPECT_EQ(std::vector<float>(slope.f32(), slope.f32() + 3), std::vector<float>(3, 0.25f));
  EXPECT_THAT(prelu(3, 2).error, HasSubstr("slope [2] must be [3], one per channel"));
  EXPECT_THAT(prelu(3, 3, false).error, HasSubstr("slope must be constant"));
}

TEST(XnnpackBlobNodes, ResizeBilinearFlagsAndShapeAreChecked) {
  auto resize = [](uint32_t flags, uint32_t out_h) {
    Builder g;
    g.num_externals = 2;
    g.tensor({1, 4, 5, 3}, 0, 0, 1);
    g.tensor({1, out_h, 10, 3}, 1, 1, 2);
    g.node(fb::Operation::ResizeBilinear, fb::CreateResizeBilinear(g.b, 8, 10, 0, 1, flags).Union());
    return parse(g.finish());
  };
  Parsed p = resize(8, 8);
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.graph.nodes.at(0).new_size[0], 8u);
  EXPECT_THAT(resize(12, 8).error, HasSubstr("flags 12 (align-corners 8 or TensorFlow legacy 4, not both)"));
  EXPECT_THAT(resize(0, 9).error, HasSubstr("is declared [1, 9, 10, 3] but the node computes [1, 8, 10, 3]"));
}

TEST(XnnpackBlobNodes, ArgMaxPoolingIsRefusedByName) {
  Builder g;
  g.num_externals = 3;
  g.tensor({1, 4, 5, 3}, 0, 0, 1);
  g.tensor({1, 1, 5, 3}, 1, 1, 2);
  g.tensor({1, 1, 5, 3}, 2, 2, 2);
  g.node(fb::Operation::ArgMaxPool2d, fb::CreateArgMaxPool2d(g.b, 0, 0, 0, 0, 4, 1, 0, 1, 2, 0).Union());
  Parsed p = parse(g.finish());
  EXPECT_TRUE(p.unsupported);
  EXPECT_THAT(p.error, HasSubstr("ArgMaxPool2d (max pooling with indices) is not supported"));
}

TEST(XnnpackBlobNodes, Fp16ValuesAreComputedInFp32) {
  // fp16 [2,4] -> FullyConnected(fp16 weights [8,4] = 1.5, -2.0 alternating) -> fp16 [2,8].
  Builder g;
  g.num_externals = 2;
  std::vector<uint8_t> halves;
  for (int k = 0; k < 32; ++k) {
    uint16_t h = k % 2 == 0 ? 0x3E00 : 0xC000;  // 1.5, -2.0
    halves.push_back(static_cast<uint8_t>(h & 0xFF));
    halves.push_back(static_cast<uint8_t>(h >> 8));
  }
  uint32_t w = g.bytes_constant(halves);
  g.tensor({2, 4}, 0, 0, 1, 0, fb::ElementType::fp16);
  g.tensor({8, 4}, 1, kNone, 0, w, fb::ElementType::fp16);
  g.tensor({2, 8}, 2, 1, 2, 0, fb::ElementType::fp16);
  g.fully_connected(0, 1, kNone, 2);
  Parsed p = parse(g.finish());
  ASSERT_EQ(p.error, "");
  EXPECT_TRUE(p.graph.values[0].fp16 && p.graph.values[2].fp16);
  const etrt::xnn::Value& weights = p.graph.values[1];
  ASSERT_TRUE(weights.fp16 && weights.is_constant());
  EXPECT_EQ(weights.dtype, etrt::xnn::DType::fp32);  // widened at init
  EXPECT_EQ(weights.f32()[0], 1.5f);
  EXPECT_EQ(weights.f32()[31], -2.0f);
}

namespace {

// input [2,4] -> Convert to a quantized value whose union names `kind` but holds no table -> Convert -> output.
Parsed quantization_without_table(fb::Quantization kind) {
  Builder g;
  g.num_externals = 2;
  fb::ElementType type = kind == fb::Quantization::PerTensor         ? fb::ElementType::qint8
                         : kind == fb::Quantization::PerChannel      ? fb::ElementType::qcint8
                         : kind == fb::Quantization::PerTokenDynamic ? fb::ElementType::qdint8
                                                                     : fb::ElementType::qbint4;
  g.tensor({2, 4}, 0, 0, 1);
  g.quantized({2, 4}, 1, type, flatbuffers::Offset<void>(), kind);
  g.tensor({2, 4}, 2, 1, 2);
  g.unary(fb::Operation::Convert, 0, 1);
  g.unary(fb::Operation::Convert, 1, 2);
  return parse(g.finish());
}

}  // namespace

// The flatbuffer verifier accepts a union whose type names a member while the member's table is absent; each
// union of the blob (a value's kind, a quantized value's quantization, a node's operation) refuses that by name.
TEST(XnnpackBlobUnions, QuantizationTypeWithoutItsTableIsRefused) {
  for (fb::Quantization kind : {fb::Quantization::PerTensor, fb::Quantization::PerChannel,
                                fb::Quantization::PerTokenDynamic, fb::Quantization::PerChannelGroup}) {
    Parsed p = quantization_without_table(kind);
    EXPECT_FALSE(p.unsupported) << fb::EnumNameQuantization(kind);
    EXPECT_THAT(p.error, HasSubstr(std::string("value 1 (id 1): its quantization is ") +
                                   fb::EnumNameQuantization(kind) + " but holds no table"));
  }
}

TEST(XnnpackBlobUnions, ValueKindWithoutItsTableIsRefused) {
  for (fb::ValueKind kind : {fb::ValueKind::TensorValue, fb::ValueKind::QuantizedTensorValue}) {
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 1);
    g.values.push_back(fb::CreateValue(g.b, kind, flatbuffers::Offset<void>()));
    g.tensor({2}, 2, 1, 2);
    g.unary(fb::Operation::Copy, 0, 2);
    EXPECT_THAT(parse(g.finish()).error,
                HasSubstr(std::string("value 1: its kind is ") + fb::EnumNameValueKind(kind) + " but holds no table"));
  }
}

TEST(XnnpackBlobUnions, EveryOperationWithoutItsTableIsRefused) {
  for (int k = 1; k <= static_cast<int>(fb::Operation::MAX); ++k) {
    auto op = static_cast<fb::Operation>(k);
    Builder g;
    g.num_externals = 2;
    g.tensor({2}, 0, 0, 1);
    g.tensor({2}, 1, 1, 2);
    g.node(op, flatbuffers::Offset<void>());
    Parsed p = parse(g.finish());
    EXPECT_THAT(p.error, HasSubstr(std::string("node 0: its operation is ") + fb::EnumNameOperation(op) +
                                   " but holds no table"));
    EXPECT_FALSE(p.unsupported) << fb::EnumNameOperation(op);
  }
}
