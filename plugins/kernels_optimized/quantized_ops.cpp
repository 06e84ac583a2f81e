// The operators of ExecuTorch's quantized library (quantized_decomposed::*):
// quantize/dequantize per tensor, per channel and per token, the choice of
// quantization parameters, the 8/4/2-bit embeddings, the int8-weight matmuls
// and the quantized add. Arithmetic follows the reference decompositions in
// torch/ao/quantization/fx/_decomposed.py (float32 for per-tensor parameters
// given as Python numbers, the promoted dtype where they are tensors).
#include <cmath>
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

bool is_quantized_dtype(int32_t d) {
  return d == ET_DTYPE_UINT8 || d == ET_DTYPE_INT8 || d == ET_DTYPE_INT16 || d == ET_DTYPE_INT32;
}

et_error* check_quantized(const char* op, const et_tensor& t, const char* name, ScalarType dtype) {
  if (!is_quantized_dtype(t.dtype))
    return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) +
                               " is not a quantized dtype (uint8, int8, int16, int32)");
  if (t.dtype != static_cast<int32_t>(dtype))
    return invalid(op, std::string(name) + " dtype " + dtype_name(t.dtype) + " must be the dtype argument " +
                           dtype_name(static_cast<int32_t>(dtype)));
  return nullptr;
}

et_error* check_range(const char* op, int64_t quant_min, int64_t quant_max) {
  if (quant_min > quant_max)
    return invalid(op, "quant_min " + str(quant_min) + " must not exceed quant_max " + str(quant_max));
  return nullptr;
}

// A contiguous copy of t's elements as double (parameters and small inputs).
et_error* read_doubles(const char* op, const et_tensor& t, const char* name, std::vector<double>* values) {
  ETRT_TRY(check_data(op, t, name));
  ETRT_TRY(check_storage(op, t, name));
  values->resize(etrt::plugin::numel(t));
  if (!values->empty()) copy_view(contiguous_view(ET_DTYPE_FLOAT64, t.rank, t.sizes, values->data()), view_of(t));
  return nullptr;
}

// A contiguous float32 copy of a float input (float32 or float64).
et_error* read_floats(const char* op, const et_tensor& t, const char* name, std::vector<float>* values) {
  ETRT_TRY(check_data(op, t, name));
  if (t.dtype != ET_DTYPE_FLOAT32 && t.dtype != ET_DTYPE_FLOAT64)
    return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) + " is not supported (float32, float64)");
  values->resize(etrt::plugin::numel(t));
  if (!values->empty()) copy_view(contiguous_view(ET_DTYPE_FLOAT32, t.rank, t.sizes, values->data()), view_of(t));
  return nullptr;
}

// Writes `values` (contiguous, in `dtype`, of out's shape once resized to `shape`) into out.
et_error* write_out(const char* op, et_tensor& out, const int64_t* shape, int64_t rank, int32_t dtype, const void* values) {
  ETRT_TRY(check_storage(op, out, "out"));
  ETRT_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  copy_view(view_of(out), contiguous_view(dtype, static_cast<int32_t>(rank), shape, const_cast<void*>(values)));
  return nullptr;
}

int64_t clamp_q(double v, int64_t lo, int64_t hi) {
  if (v != v) return lo;
  return static_cast<int64_t>(std::min<double>(std::max<double>(v, static_cast<double>(lo)), static_cast<double>(hi)));
}

// ------------------------------------------------------------- per tensor

// q = clamp(round(x * (1 / scale)) + zero_point, quant_min, quant_max), in float32.
et_error* quantize_tensor(const char* op, const et_tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                          int64_t quant_max, ScalarType dtype, et_tensor& out) {
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_quantized(op, out, "out", dtype));
  std::vector<float> x;
  ETRT_TRY(read_floats(op, input, "input", &x));
  const auto inv_scale = static_cast<float>(1.0 / scale);
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    q[i] = clamp_q(static_cast<double>(std::nearbyint(x[i] * inv_scale)) + static_cast<double>(zero_point), quant_min,
                   quant_max);
  return write_out(op, out, input.sizes, input.rank, ET_DTYPE_INT64, q.data());
}

// x = (q - zero_point) * scale, in the output dtype (float32 unless out_dtype says otherwise).
et_error* dequantize_tensor(const char* op, const et_tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                            int64_t quant_max, ScalarType dtype, std::optional<ScalarType> out_dtype, et_tensor& out) {
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_quantized(op, input, "input", dtype));
  const int32_t want = out_dtype ? static_cast<int32_t>(*out_dtype) : ET_DTYPE_FLOAT32;
  if (out.dtype != want)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must be " + dtype_name(want));
  if (want != ET_DTYPE_FLOAT32 && want != ET_DTYPE_FLOAT64)
    return unsupported(op, std::string("output dtype ") + dtype_name(want) + " is not supported (float32, float64)");
  std::vector<double> q;
  ETRT_TRY(read_doubles(op, input, "input", &q));
  if (want == ET_DTYPE_FLOAT32) {
    std::vector<float> x(q.size());
    const auto s = static_cast<float>(scale), z = static_cast<float>(zero_point);
    for (size_t i = 0; i < q.size(); ++i) x[i] = (static_cast<float>(q[i]) - z) * s;
    return write_out(op, out, input.sizes, input.rank, ET_DTYPE_FLOAT32, x.data());
  }
  for (double& v : q) v = (v - static_cast<double>(zero_point)) * scale;
  return write_out(op, out, input.sizes, input.rank, ET_DTYPE_FLOAT64, q.data());
}

// A one-element scale or zero point tensor.
et_error* single(const char* op, const et_tensor& t, const char* name, double* value) {
  if (etrt::plugin::numel(t) != 1) return invalid(op, std::string(name) + " must have one element, got shape " + shape_string(t));
  std::vector<double> v;
  ETRT_TRY(read_doubles(op, t, name, &v));
  *value = v[0];
  return nullptr;
}

// quantize_per_tensor.out(input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, out)
et_error* quantize_per_tensor_out(Call call, const Tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                                  int64_t quant_max, ScalarType dtype, Tensor& out) {
  return quantize_tensor(call.op, input, scale, zero_point, quant_min, quant_max, dtype, out);
}

// quantize_per_tensor.Tensor_out(input, Tensor scale, Tensor zero_point, ...)
et_error* quantize_per_tensor_tensor_out(Call call, const Tensor& input, const Tensor& scale, const Tensor& zero_point,
                                         int64_t quant_min, int64_t quant_max, ScalarType dtype, Tensor& out) {
  double s = 0, z = 0;
  ETRT_TRY(single(call.op, scale, "scale", &s));
  ETRT_TRY(single(call.op, zero_point, "zero_point", &z));
  return quantize_tensor(call.op, input, s, static_cast<int64_t>(z), quant_min, quant_max, dtype, out);
}

// dequantize_per_tensor.out(input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype,
//                           *, ScalarType? out_dtype=None, out)
et_error* dequantize_per_tensor_out(Call call, const Tensor& input, double scale, int64_t zero_point, int64_t quant_min,
                                    int64_t quant_max, ScalarType dtype, std::optional<ScalarType> out_dtype, Tensor& out) {
  return dequantize_tensor(call.op, input, scale, zero_point, quant_min, quant_max, dtype, out_dtype, out);
}

// dequantize_per_tensor.Tensor_out(input, Tensor scale, Tensor zero_point, ...)
et_error* dequantize_per_tensor_tensor_out(Call call, const Tensor& input, const Tensor& scale, const Tensor& zero_point,
                                           int64_t quant_min, int64_t quant_max, ScalarType dtype,
                                           std::optional<ScalarType> out_dtype, Tensor& out) {
  double s = 0, z = 0;
  ETRT_TRY(single(call.op, scale, "scale", &s));
  ETRT_TRY(single(call.op, zero_point, "zero_point", &z));
  return dequantize_tensor(call.op, input, s, static_cast<int64_t>(z), quant_min, quant_max, dtype, out_dtype, out);
}

// choose_qparams.Tensor_out(input, int quant_min, int quant_max, float eps, ScalarType dtype, *, scale_out,
// zero_point_out) -> (scale_out, zero_point_out): the affine parameters covering [min(x, 0), max(x, 0)], in float32.
et_error* choose_qparams_out(Call call, const Tensor& input, int64_t quant_min, int64_t quant_max, double eps,
                             ScalarType dtype, Tensor& scale_out, Tensor& zero_point_out) {
  const char* op = call.op;
  ETRT_TRY(check_range(op, quant_min, quant_max));
  std::vector<float> x;
  ETRT_TRY(read_floats(op, input, "input", &x));
  if (x.empty()) return invalid(op, "input is empty: there is no range to quantize");
  float lo = x[0], hi = x[0];
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
  float scale = (hi - lo) / static_cast<float>(quant_max - quant_min);
  scale = std::max(scale, static_cast<float>(eps));
  const double zero = std::clamp<double>(static_cast<double>(quant_min) - std::nearbyint(lo / scale),
                                         static_cast<double>(quant_min), static_cast<double>(quant_max));
  const double s = scale;
  const int64_t one = 1;
  ETRT_TRY(write_out(op, scale_out, &one, scale_out.rank, ET_DTYPE_FLOAT64, &s));
  return write_out(op, zero_point_out, &one, zero_point_out.rank, ET_DTYPE_FLOAT64, &zero);
}

// ------------------------------------------------------------ per channel

// Per-channel parameters along `axis`: scales[c] and zero_points[c] (0 when absent).
struct Channels {
  std::vector<double> scales, zeros;
  int64_t axis = 0, outer = 1, channels = 1, inner = 1;
};

et_error* plan_channels(const char* op, const et_tensor& input, const et_tensor& scales, const et_tensor* zero_points,
                        int64_t axis, Channels* c) {
  ETRT_TRY(normalize_dim(op, axis, input.rank, &c->axis, "axis"));
  if (input.rank == 0) return invalid(op, "input must have at least one dim for per-channel parameters");
  c->channels = input.sizes[c->axis];
  for (int64_t i = 0; i < input.rank; ++i) {
    if (i < c->axis) c->outer *= input.sizes[i];
    if (i > c->axis) c->inner *= input.sizes[i];
  }
  ETRT_TRY(read_doubles(op, scales, "scales", &c->scales));
  if (static_cast<int64_t>(c->scales.size()) != c->channels)
    return invalid(op, "scales " + shape_string(scales) + " must have one entry per channel (" + str(c->channels) +
                           ") of axis " + str(c->axis));
  if (zero_points != nullptr) {
    ETRT_TRY(read_doubles(op, *zero_points, "zero_points", &c->zeros));
    if (c->zeros.size() != c->scales.size())
      return invalid(op, "zero_points " + shape_string(*zero_points) + " must have one entry per channel (" +
                             str(c->channels) + ")");
  } else {
    c->zeros.assign(c->scales.size(), 0.0);
  }
  return nullptr;
}

// quantize_per_channel.out(input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max,
//                          ScalarType dtype, *, out): in double (the scales' dtype).
et_error* quantize_per_channel_out(Call call, const Tensor& input, const Tensor& scales, const Tensor& zero_points,
                                   int64_t axis, int64_t quant_min, int64_t quant_max, ScalarType dtype, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_quantized(op, out, "out", dtype));
  Channels c;
  ETRT_TRY(plan_channels(op, input, scales, &zero_points, axis, &c));
  std::vector<float> x;
  ETRT_TRY(read_floats(op, input, "input", &x));
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t ch = (i / static_cast<size_t>(c.inner)) % static_cast<size_t>(c.channels);
    q[i] = clamp_q(std::nearbyint(static_cast<double>(x[i]) * (1.0 / c.scales[ch])) + c.zeros[ch], quant_min, quant_max);
  }
  return write_out(op, out, input.sizes, input.rank, ET_DTYPE_INT64, q.data());
}

// dequantize_per_channel.out(input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max,
//                            ScalarType dtype, *, ScalarType? out_dtype=None, out)
et_error* dequantize_per_channel_out(Call call, const Tensor& input, const Tensor& scales, const Tensor* zero_points,
                                     int64_t axis, int64_t quant_min, int64_t quant_max, ScalarType dtype,
                                     std::optional<ScalarType> out_dtype, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_quantized(op, input, "input", dtype));
  const int32_t want = out_dtype ? static_cast<int32_t>(*out_dtype) : ET_DTYPE_FLOAT32;
  if (out.dtype != want)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must be " + dtype_name(want));
  Channels c;
  ETRT_TRY(plan_channels(op, input, scales, zero_points, axis, &c));
  std::vector<double> q;
  ETRT_TRY(read_doubles(op, input, "input", &q));
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t ch = (i / static_cast<size_t>(c.inner)) % static_cast<size_t>(c.channels);
    q[i] = (q[i] - c.zeros[ch]) * c.scales[ch];
  }
  return write_out(op, out, input.sizes, input.rank, ET_DTYPE_FLOAT64, q.data());
}

// -------------------------------------------------------------- per token

// Tokens are all dims but the last; one parameter per token.
et_error* token_params(const char* op, const et_tensor& input, const et_tensor& scales, const et_tensor& zero_points,
                       std::vector<double>* s, std::vector<double>* z, int64_t* width) {
  ETRT_TRY(read_doubles(op, scales, "scales", s));
  ETRT_TRY(read_doubles(op, zero_points, "zero_points", z));
  *width = input.rank == 0 ? 1 : input.sizes[input.rank - 1];
  const size_t tokens = *width == 0 ? 0 : etrt::plugin::numel(input) / static_cast<size_t>(*width);
  if (*width > 0 && (s->size() != tokens || z->size() != tokens))
    return invalid(op, "scales " + shape_string(scales) + " and zero_points " + shape_string(zero_points) +
                           " must have one entry per token (" + str(static_cast<int64_t>(tokens)) + " in input " +
                           shape_string(input) + ")");
  return nullptr;
}

// choose_qparams_per_token_asymmetric.out(input, ScalarType dtype, *, scale_out, zero_point_out)
// -> (scale_out, zero_point_out): per token, int8 range [-128, 127], in float32.
et_error* choose_qparams_per_token_out(Call call, const Tensor& input, ScalarType dtype, Tensor& scale_out,
                                       Tensor& zero_point_out) {
  const char* op = call.op;
  std::vector<float> x;
  ETRT_TRY(read_floats(op, input, "input", &x));
  if (input.rank == 0) return invalid(op, "input must have at least one dim (the tokens' values)");
  const int64_t width = input.sizes[input.rank - 1];
  const size_t tokens = width == 0 ? 0 : x.size() / static_cast<size_t>(width);
  if (width == 0) return invalid(op, "input " + shape_string(input) + " has tokens of no values");
  std::vector<double> scales(tokens), zeros(tokens);
  constexpr float qmin = -128, qmax = 127;
  for (size_t t = 0; t < tokens; ++t) {
    const float* row = x.data() + t * static_cast<size_t>(width);
    float lo = row[0], hi = row[0];
    for (int64_t i = 0; i < width; ++i) lo = std::min(lo, row[i]), hi = std::max(hi, row[i]);
    lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
    const float scale = std::max((hi - lo) / (qmax - qmin), std::numeric_limits<float>::epsilon());
    const float dmin = lo / scale, dmax = hi / scale;
    float zero = (qmin + dmin) + (qmax + dmax) > 0 ? qmin - dmin : qmax - dmax;
    zero = std::nearbyint(std::min(std::max(zero, qmin), qmax));
    scales[t] = scale;
    zeros[t] = zero;
  }
  int64_t shape[ET_MAX_RANK];
  std::copy(input.sizes, input.sizes + input.rank, shape);
  shape[input.rank - 1] = 1;
  ETRT_TRY(write_out(op, scale_out, shape, input.rank, ET_DTYPE_FLOAT64, scales.data()));
  return write_out(op, zero_point_out, shape, input.rank, ET_DTYPE_FLOAT64, zeros.data());
}

// quantize_per_token.out(input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, *, out)
et_error* quantize_per_token_out(Call call, const Tensor& input, const Tensor& scales, const Tensor& zero_points,
                                 int64_t quant_min, int64_t quant_max, ScalarType dtype, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_quantized(op, out, "out", dtype));
  std::vector<float> x;
  ETRT_TRY(read_floats(op, input, "input", &x));
  std::vector<double> s, z;
  int64_t width = 0;
  ETRT_TRY(token_params(op, input, scales, zero_points, &s, &z, &width));
  const bool in_double = scales.dtype == ET_DTYPE_FLOAT64;  // x * (1 / scales) promotes to the scales' dtype
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t t = i / static_cast<size_t>(width);
    double v;
    if (in_double) v = std::nearbyint(static_cast<double>(x[i]) * (1.0 / s[t]) + z[t]);
    else v = std::nearbyint(x[i] * (1.0f / static_cast<float>(s[t])) + static_cast<float>(z[t]));
    q[i] = clamp_q(v, quant_min, quant_max);
  }
  return write_out(op, out, input.sizes, input.rank, ET_DTYPE_INT64, q.data());
}

// dequantize_per_token.out(input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype,
//                          ScalarType output_dtype, *, out)
et_error* dequantize_per_token_out(Call call, const Tensor& input, const Tensor& scales, const Tensor& zero_points,
                                   int64_t quant_min, int64_t quant_max, ScalarType dtype, ScalarType output_dtype,
                                   Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_quantized(op, input, "input", dtype));
  if (out.dtype != static_cast<int32_t>(output_dtype))
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must be output_dtype " +
                           dtype_name(static_cast<int32_t>(output_dtype)));
  std::vector<double> q, s, z;
  ETRT_TRY(read_doubles(op, input, "input", &q));
  int64_t width = 0;
  ETRT_TRY(token_params(op, input, scales, zero_points, &s, &z, &width));
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t t = i / static_cast<size_t>(width);
    q[i] = (q[i] - z[t]) * s[t];
  }
  return write_out(op, out, input.sizes, input.rank, ET_DTYPE_FLOAT64, q.data());
}

// ------------------------------------------------------------- embeddings

// embedding_{byte,4bit,2bit}: rows of a `bits`-bit packed weight [V, D * bits / 8]
// dequantized per row (scales [V]) or per group (scales [V, G]), then gathered.
// Packed values are stored shifted by 2^(bits-1); the first value of a byte is
// in its high bits for 4-bit and its low bits for 2-bit (ExecuTorch's packing).
template <int kBits>
et_error* embedding_quantized(const char* op, const et_tensor& weight, const et_tensor& weight_scales,
                              const et_tensor* weight_zero_points, int64_t quant_min, int64_t quant_max,
                              const et_tensor& indices, std::optional<ScalarType> dtype, et_tensor& out) {
  ETRT_TRY(check_range(op, quant_min, quant_max));
  ETRT_TRY(check_data(op, weight, "weight"));
  if (weight.dtype != ET_DTYPE_INT8 && weight.dtype != ET_DTYPE_UINT8)
    return unsupported(op, std::string("weight dtype ") + dtype_name(weight.dtype) + " is not supported (int8, uint8)");
  if (weight.rank != 2) return invalid(op, "weight must be 2-D, got shape " + shape_string(weight));
  if (weight_scales.rank != 1 && weight_scales.rank != 2)
    return invalid(op, "weight_scales must be 1-D or 2-D, got shape " + shape_string(weight_scales));
  const int64_t V = weight.sizes[0], D = weight.sizes[1] * (8 / kBits);
  if (weight_scales.sizes[0] != V)
    return invalid(op, "weight_scales " + shape_string(weight_scales) + " must have one row per weight row (" + str(V) + ")");
  const int64_t groups = weight_scales.rank == 2 ? weight_scales.sizes[1] : 1;
  if (groups <= 0 || D % groups != 0)
    return invalid(op, "the embedding dim " + str(D) + " must divide into the " + str(groups) + " scale groups");
  const int32_t want = dtype ? static_cast<int32_t>(*dtype) : weight_scales.dtype;
  if (out.dtype != want)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must be " + dtype_name(want));
  std::vector<double> scales, zeros;
  ETRT_TRY(read_doubles(op, weight_scales, "weight_scales", &scales));
  if (weight_zero_points != nullptr) {
    ETRT_TRY(read_doubles(op, *weight_zero_points, "weight_zero_points", &zeros));
    if (zeros.size() != scales.size())
      return invalid(op, "weight_zero_points " + shape_string(*weight_zero_points) + " must have the shape of weight_scales " +
                             shape_string(weight_scales));
  }
  std::vector<double> idx;
  ETRT_TRY(check_data(op, indices, "indices"));
  if (indices.dtype != ET_DTYPE_INT64 && indices.dtype != ET_DTYPE_INT32)
    return invalid(op, std::string("indices must be an int64 or int32 tensor, got ") + dtype_name(indices.dtype));
  ETRT_TRY(read_doubles(op, indices, "indices", &idx));
  for (double i : idx)
    if (i < 0 || i >= static_cast<double>(V))
      return invalid(op, "index " + str(static_cast<int64_t>(i)) + " is out of range for " + str(V) + " embeddings");
  int64_t shape[ET_MAX_RANK];
  if (indices.rank + 1 > ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  std::copy(indices.sizes, indices.sizes + indices.rank, shape);
  shape[indices.rank] = D;
  const View w = view_of(weight);
  const int64_t group_size = D / groups;
  std::vector<float> rows(idx.size() * static_cast<size_t>(D));
  for (size_t r = 0; r < idx.size(); ++r) {
    const auto row = static_cast<int64_t>(idx[r]);
    for (int64_t j = 0; j < D; ++j) {
      constexpr int kPerByte = 8 / kBits;
      const int64_t byte_at = row * w.strides[0] + (j / kPerByte) * w.strides[1];
      const auto byte = static_cast<uint8_t>(w.data[byte_at]);
      int64_t value;
      if constexpr (kBits == 8) value = weight.dtype == ET_DTYPE_INT8 ? static_cast<int8_t>(byte) : byte;
      else if constexpr (kBits == 4) value = (j % 2 == 0 ? byte >> 4 : byte & 0xF) - 8;
      else value = ((byte >> (2 * (j % 4))) & 0x3) - 2;
      const size_t g = static_cast<size_t>(row * groups + j / group_size);
      const float zero = zeros.empty() ? 0.0f : static_cast<float>(zeros[g]);
      rows[r * static_cast<size_t>(D) + static_cast<size_t>(j)] =
          (static_cast<float>(value) - zero) * static_cast<float>(scales[g]);
    }
  }
  return write_out(op, out, shape, indices.rank + 1, ET_DTYPE_FLOAT32, rows.data());
}

// embedding_<b>.out(weight, weight_scales, weight_zero_points?, int weight_quant_min, int weight_quant_max,
//                   Tensor indices, *, out)
template <int kBits>
et_error* embedding_q_out(Call call, const Tensor& weight, const Tensor& weight_scales, const Tensor* weight_zero_points,
                          int64_t quant_min, int64_t quant_max, const Tensor& indices, Tensor& out) {
  return embedding_quantized<kBits>(call.op, weight, weight_scales, weight_zero_points, quant_min, quant_max, indices,
                                    std::nullopt, out);
}

// embedding_<b>.dtype_out(..., Tensor indices, *, ScalarType? dtype=None, out)
template <int kBits>
et_error* embedding_q_dtype_out(Call call, const Tensor& weight, const Tensor& weight_scales,
                                const Tensor* weight_zero_points, int64_t quant_min, int64_t quant_max,
                                const Tensor& indices, std::optional<ScalarType> dtype, Tensor& out) {
  return embedding_quantized<kBits>(call.op, weight, weight_scales, weight_zero_points, quant_min, quant_max, indices,
                                    dtype, out);
}

// ---------------------------------------------------------- int8 matmuls

// out[m, n] = sum_k input[m, k] * weight_at(k, n) * scale_at(k, n) (zero points subtracted from the weight).
template <typename WeightAt, typename ParamAt>
void dequantized_matmul(const std::vector<float>& input, int64_t M, int64_t K, int64_t N, const WeightAt& weight_at,
                        const ParamAt& param_at, std::vector<float>* out) {
  out->assign(static_cast<size_t>(M * N), 0.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float total = 0;
      for (int64_t k = 0; k < K; ++k) {
        float scale, zero;
        param_at(k, n, &scale, &zero);
        total += input[static_cast<size_t>(m * K + k)] * ((weight_at(k, n) - zero) * scale);
      }
      (*out)[static_cast<size_t>(m * N + n)] = total;
    }
}

et_error* int8_weight(const char* op, const et_tensor& weight) {
  ETRT_TRY(check_data(op, weight, "weight"));
  if (weight.dtype != ET_DTYPE_INT8) return unsupported(op, std::string("weight dtype ") + dtype_name(weight.dtype) + " is not supported (int8)");
  if (weight.rank != 2) return invalid(op, "weight must be 2-D, got shape " + shape_string(weight));
  return nullptr;
}

// mixed_mm.out(input [M, K], weight [K, N] int8, weight_scales [K], weight_zero_points? [K], *, out [M, N])
et_error* mixed_mm_out(Call call, const Tensor& input, const Tensor& weight, const Tensor& weight_scales,
                       const Tensor* weight_zero_points, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(int8_weight(op, weight));
  if (input.rank != 2 || input.sizes[1] != weight.sizes[0])
    return invalid(op, "input " + shape_string(input) + " and weight " + shape_string(weight) + " cannot be multiplied");
  const int64_t M = input.sizes[0], K = input.sizes[1], N = weight.sizes[1];
  std::vector<float> x, y;
  std::vector<double> s, z;
  ETRT_TRY(read_floats(op, input, "input", &x));
  ETRT_TRY(read_doubles(op, weight_scales, "weight_scales", &s));
  if (static_cast<int64_t>(s.size()) != K) return invalid(op, "weight_scales " + shape_string(weight_scales) + " must have K=" + str(K) + " entries");
  if (weight_zero_points != nullptr) ETRT_TRY(read_doubles(op, *weight_zero_points, "weight_zero_points", &z));
  if (!z.empty() && z.size() != s.size()) return invalid(op, "weight_zero_points must have the shape of weight_scales");
  const View w = view_of(weight);
  dequantized_matmul(
      x, M, K, N, [&](int64_t k, int64_t n) { return static_cast<float>(reinterpret_cast<const int8_t*>(w.data)[k * w.strides[0] + n * w.strides[1]]); },
      [&](int64_t k, int64_t, float* scale, float* zero) {
        *scale = static_cast<float>(s[static_cast<size_t>(k)]);
        *zero = z.empty() ? 0.0f : static_cast<float>(z[static_cast<size_t>(k)]);
      },
      &y);
  const int64_t shape[2] = {M, N};
  if (out.dtype != input.dtype) return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input's");
  return write_out(op, out, shape, 2, ET_DTYPE_FLOAT32, y.data());
}

// mixed_linear.out(input [*, K], weight [N, K] int8, weight_scales [N] or [N, G], weight_zero_points?,
//                  ScalarType? dtype=None, *, out [*, N])
et_error* mixed_linear_out(Call call, const Tensor& input, const Tensor& weight, const Tensor& weight_scales,
                           const Tensor* weight_zero_points, std::optional<ScalarType> dtype, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(int8_weight(op, weight));
  if (input.rank < 1 || input.sizes[input.rank - 1] != weight.sizes[1])
    return invalid(op, "input " + shape_string(input) + " and weight " + shape_string(weight) + " cannot be multiplied");
  const int64_t K = weight.sizes[1], N = weight.sizes[0];
  const int64_t M = K == 0 ? 0 : static_cast<int64_t>(etrt::plugin::numel(input)) / K;
  std::vector<float> x, y;
  std::vector<double> s, z;
  ETRT_TRY(read_floats(op, input, "input", &x));
  ETRT_TRY(read_doubles(op, weight_scales, "weight_scales", &s));
  const int64_t groups = weight_scales.rank == 2 ? weight_scales.sizes[1] : 1;
  if (weight_scales.rank < 1 || weight_scales.sizes[0] != N || groups <= 0 || K % groups != 0)
    return invalid(op, "weight_scales " + shape_string(weight_scales) + " must be [N] or [N, G] with G dividing K=" + str(K));
  if (weight_zero_points != nullptr) ETRT_TRY(read_doubles(op, *weight_zero_points, "weight_zero_points", &z));
  if (!z.empty() && z.size() != s.size()) return invalid(op, "weight_zero_points must have the shape of weight_scales");
  const int32_t want = dtype ? static_cast<int32_t>(*dtype) : input.dtype;
  if (out.dtype != want) return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must be " + dtype_name(want));
  const View w = view_of(weight);
  const int64_t group_size = K / groups;
  dequantized_matmul(
      x, M, K, N, [&](int64_t k, int64_t n) { return static_cast<float>(reinterpret_cast<const int8_t*>(w.data)[n * w.strides[0] + k * w.strides[1]]); },
      [&](int64_t k, int64_t n, float* scale, float* zero) {
        const size_t g = static_cast<size_t>(n * groups + k / group_size);
        *scale = static_cast<float>(s[g]);
        *zero = z.empty() ? 0.0f : static_cast<float>(z[g]);
      },
      &y);
  int64_t shape[ET_MAX_RANK];
  std::copy(input.sizes, input.sizes + input.rank, shape);
  shape[input.rank - 1] = N;
  return write_out(op, out, shape, input.rank, ET_DTYPE_FLOAT32, y.data());
}

// add.out(a, float a_scale, int a_zero_point, int a_quant_min, int a_quant_max, b, ... b ..., float out_scale,
//         int out_zero_point, int out_quant_min, int out_quant_max, *, out): dequantize, add (broadcast), quantize.
et_error* quantized_add_out(Call call, const Tensor& a, double a_scale, int64_t a_zero_point, int64_t a_quant_min,
                            int64_t a_quant_max, const Tensor& b, double b_scale, int64_t b_zero_point,
                            int64_t b_quant_min, int64_t b_quant_max, double out_scale, int64_t out_zero_point,
                            int64_t out_quant_min, int64_t out_quant_max, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_range(op, out_quant_min, out_quant_max));
  for (auto [t, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}, std::pair{static_cast<const et_tensor*>(&out), "out"}})
    if (!is_quantized_dtype(t->dtype))
      return unsupported(op, std::string(name) + " dtype " + dtype_name(t->dtype) + " is not a quantized dtype");
  int64_t shape[ET_MAX_RANK], rank = 0;
  if (!broadcast_shapes(a.sizes, a.rank, b.sizes, b.rank, shape, &rank))
    return invalid(op, "shapes " + shape_string(a) + " and " + shape_string(b) + " are not broadcastable");
  std::vector<double> qa, qb;
  ETRT_TRY(read_doubles(op, a, "a", &qa));
  ETRT_TRY(read_doubles(op, b, "b", &qb));
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i) total *= shape[i];
  // a and b broadcast to the result's shape, as double.
  auto widen = [&](const et_tensor& t, const std::vector<double>& v) {
    std::vector<double> wide(static_cast<size_t>(total));
    if (total == 0) return wide;
    const View x = contiguous_view(ET_DTYPE_FLOAT64, t.rank, t.sizes, const_cast<double*>(v.data()))
                       .broadcast_to(static_cast<int32_t>(rank), shape);
    copy_view(contiguous_view(ET_DTYPE_FLOAT64, x.rank, shape, wide.data()), x);
    return wide;
  };
  const std::vector<double> wa = widen(a, qa), wb = widen(b, qb);
  const auto inv = static_cast<float>(1.0 / out_scale);
  std::vector<int64_t> q(static_cast<size_t>(total));
  for (size_t i = 0; i < q.size(); ++i) {
    const float x = (static_cast<float>(wa[i]) - static_cast<float>(a_zero_point)) * static_cast<float>(a_scale);
    const float y = (static_cast<float>(wb[i]) - static_cast<float>(b_zero_point)) * static_cast<float>(b_scale);
    q[i] = clamp_q(static_cast<double>(out_zero_point) + std::nearbyint(inv * (x + y)), out_quant_min, out_quant_max);
  }
  return write_out(op, out, shape, rank, ET_DTYPE_INT64, q.data());
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> quantized_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_QUANTIZED_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
