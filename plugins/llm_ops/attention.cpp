// ExecuTorch's LLM attention operators in float32: KV-cache update and SDPA over a
// cache, with start_pos, causal masking, an optional additive mask, and grouped
// query attention (Hq a multiple of Hkv; query head h reads cache head h / (Hq/Hkv)).
// Layout as ExecuTorch's custom ops define it: [batch, seq, heads, head_dim].
// Tensors are read through their strides, so any dim order works.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "llm_ops.h"

namespace etrt_llm {
namespace {

using etrt::plugin::dtype_name;

std::string shape_of(const Tensor& t) {
  std::string s = "[";
  for (int32_t d = 0; d < t.rank; ++d) s += (d ? ", " : "") + std::to_string(t.sizes[d]);
  return s + "]";
}

et_error* fail(const Call& call, int32_t code, const std::string& what) {
  return host.error(code, std::string(call.op) + ": " + what);
}

et_error* check_4d_float(const Call& call, const char* name, const Tensor& t) {
  if (t.rank != 4)
    return fail(call, ET_ERR_INVALID_ARGUMENT, std::string(name) + " must be 4-D [batch, seq, heads, head_dim], got " +
                                                   shape_of(t));
  if (t.dtype != ET_DTYPE_FLOAT32)
    return fail(call, ET_ERR_NOT_SUPPORTED, std::string(name) + " must be float32, got " + dtype_name(t.dtype));
  return nullptr;
}

// Element (b, s, h, d) of a 4-D tensor, through its strides.
struct View4 {
  float* data;
  int64_t st[4];
  explicit View4(const Tensor& t) : data(static_cast<float*>(t.data)) {
    for (int d = 0; d < 4; ++d) st[d] = t.strides[d];
  }
  float* row(int64_t b, int64_t s, int64_t h) const { return data + b * st[0] + s * st[1] + h * st[2]; }
};

et_error* write_cache(const Call& call, const Tensor& value, Tensor& cache, int64_t start_pos) {
  ETRT_TRY(check_4d_float(call, "value", value));
  ETRT_TRY(check_4d_float(call, "cache", cache));
  for (int d : {0, 2, 3})
    if (value.sizes[d] != cache.sizes[d])
      return fail(call, ET_ERR_INVALID_ARGUMENT, "value " + shape_of(value) + " and cache " + shape_of(cache) +
                                                     " differ in dimension " + std::to_string(d));
  const int64_t seq = value.sizes[1];
  if (start_pos < 0 || start_pos + seq > cache.sizes[1])
    return fail(call, ET_ERR_INVALID_ARGUMENT, "start_pos " + std::to_string(start_pos) + " + " + std::to_string(seq) +
                                                   " rows do not fit the cache's " + std::to_string(cache.sizes[1]));
  if (cache.is_const) return fail(call, ET_ERR_INVALID_ARGUMENT, "cache is a read-only constant");
  const View4 src(value), dst(cache);
  const int64_t batch = value.sizes[0], heads = value.sizes[2], dim = value.sizes[3];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t h = 0; h < heads; ++h) {
        const float* from = src.row(b, s, h);
        float* to = dst.row(b, start_pos + s, h);
        for (int64_t d = 0; d < dim; ++d) to[d * dst.st[3]] = from[d * src.st[3]];
      }
  return nullptr;
}

// One attention problem, checked: out = softmax(q k^T * scale + mask) v over kv_len keys.
struct Attention {
  View4 q, k, v, out;
  const float* mask = nullptr;  // [seq, kv_len] with strides mask_st
  int64_t mask_st[2] = {0, 0};
  int64_t batch = 0, seq = 0, q_heads = 0, kv_heads = 1, dim = 0, kv_len = 0, start_pos = 0;
  bool causal = false;
  float scale = 1;

  void run_row(int64_t b, int64_t h, int64_t i, float* scores) const {
    const int64_t kv_head = h / (q_heads / kv_heads);
    // Causal: query i sits at position start_pos + i and sees keys up to it.
    const int64_t visible = causal ? std::min(kv_len, start_pos + i + 1) : kv_len;
    const float* qi = q.row(b, i, h);
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < visible; ++j) {
      const float* kj = k.row(b, j, kv_head);
      float dot = 0;
      for (int64_t d = 0; d < dim; ++d) dot += qi[d * q.st[3]] * kj[d * k.st[3]];
      float s = dot * scale;
      if (mask) s += mask[i * mask_st[0] + j * mask_st[1]];
      scores[j] = s;
      best = std::max(best, s);
    }
    float total = 0;
    for (int64_t j = 0; j < visible; ++j) total += scores[j] = std::exp(scores[j] - best);
    float* o = out.row(b, i, h);
    for (int64_t d = 0; d < dim; ++d) o[d * out.st[3]] = 0;
    for (int64_t j = 0; j < visible; ++j) {
      const float w = scores[j] / total;
      const float* vj = v.row(b, j, kv_head);
      for (int64_t d = 0; d < dim; ++d) o[d * out.st[3]] += w * vj[d * v.st[3]];
    }
  }
};

et_error* attend(const Call& call, const Tensor& query, const Tensor& key, const Tensor& value, int64_t start_pos,
                 const Tensor* attn_mask, double dropout_p, bool is_causal, std::optional<double> scale,
                 Tensor& out) {
  ETRT_TRY(check_4d_float(call, "query", query));
  ETRT_TRY(check_4d_float(call, "key", key));
  ETRT_TRY(check_4d_float(call, "value", value));
  ETRT_TRY(check_4d_float(call, "out", out));
  for (int d = 0; d < 4; ++d)
    if (key.sizes[d] != value.sizes[d])
      return fail(call, ET_ERR_INVALID_ARGUMENT, "key " + shape_of(key) + " and value " + shape_of(value) + " differ");
  const int64_t batch = query.sizes[0], seq = query.sizes[1], q_heads = query.sizes[2], dim = query.sizes[3];
  const int64_t kv_heads = key.sizes[2];
  if (key.sizes[0] != batch || key.sizes[3] != dim)
    return fail(call, ET_ERR_INVALID_ARGUMENT, "query " + shape_of(query) + " and key " + shape_of(key) +
                                                   " differ in batch or head_dim");
  if (kv_heads <= 0 || q_heads % kv_heads != 0)
    return fail(call, ET_ERR_INVALID_ARGUMENT, std::to_string(q_heads) + " query heads are not a multiple of " +
                                                   std::to_string(kv_heads) + " key/value heads");
  if (dropout_p != 0.0)
    return fail(call, ET_ERR_NOT_SUPPORTED, "dropout_p must be 0 (inference), got " + std::to_string(dropout_p));
  if (attn_mask && is_causal)
    return fail(call, ET_ERR_INVALID_ARGUMENT, "attn_mask and is_causal cannot both be set");
  if (start_pos < 0) return fail(call, ET_ERR_INVALID_ARGUMENT, "start_pos " + std::to_string(start_pos) + " < 0");
  Attention a{View4(query), View4(key), View4(value), View4(out)};
  a.batch = batch, a.seq = seq, a.q_heads = q_heads, a.kv_heads = kv_heads, a.dim = dim;
  a.start_pos = start_pos, a.causal = is_causal;
  a.scale = static_cast<float>(scale ? *scale : 1.0 / std::sqrt(static_cast<double>(dim)));
  if (attn_mask) {
    const Tensor& m = *attn_mask;
    if (m.dtype != ET_DTYPE_FLOAT32 || m.rank != 2 || m.sizes[0] != seq)
      return fail(call, ET_ERR_INVALID_ARGUMENT, "attn_mask must be a float32 [seq=" + std::to_string(seq) +
                                                     ", keys] tensor, got " + dtype_name(m.dtype) + " " + shape_of(m));
    a.mask = static_cast<const float*>(m.data);
    a.mask_st[0] = m.strides[0], a.mask_st[1] = m.strides[1];
    a.kv_len = m.sizes[1];  // the mask's width is the number of keys
  } else {
    a.kv_len = start_pos + seq;
  }
  if (a.kv_len > key.sizes[1])
    return fail(call, ET_ERR_INVALID_ARGUMENT, std::to_string(a.kv_len) + " keys needed (start_pos " +
                                                   std::to_string(start_pos) + ", seq " + std::to_string(seq) +
                                                   ") but the cache holds " + std::to_string(key.sizes[1]));
  ETRT_TRY(host.api()->tensor_resize(&out, query.sizes, 4));
  a.out = View4(out);
  const size_t rows = static_cast<size_t>(batch * q_heads * seq);
  // A row costs ~kv_len * dim * 4 flops; a few rows are worth a task.
  const size_t grain = std::max<size_t>(1, 16384 / static_cast<size_t>(std::max<int64_t>(1, a.kv_len * dim)));
  host.parallel_for(rows, grain, [&](size_t begin, size_t end) {
    std::vector<float> scores(static_cast<size_t>(std::max<int64_t>(1, a.kv_len)));
    for (size_t r = begin; r < end; ++r) {
      const auto row = static_cast<int64_t>(r);
      a.run_row(row / (q_heads * seq), row / seq % q_heads, row % seq, scores.data());
    }
  });
  return nullptr;
}

}  // namespace

et_error* update_cache_out(Call call, const Tensor& value, Tensor& cache, int64_t start_pos, Tensor& out) {
  return write_cache(call, value, cache, start_pos);
}

et_error* custom_sdpa_out(Call call, const Tensor& query, const Tensor& key, const Tensor& value, int64_t start_pos,
                          const Tensor* attn_mask, double dropout_p, bool is_causal, std::optional<double> scale,
                          Tensor& out) {
  return attend(call, query, key, value, start_pos, attn_mask, dropout_p, is_causal, scale, out);
}

et_error* sdpa_with_kv_cache_out(Call call, const Tensor& query, const Tensor& key, const Tensor& value,
                                 Tensor& key_cache, Tensor& value_cache, int64_t start_pos, int64_t seq_len,
                                 const Tensor* attn_mask, double dropout_p, bool is_causal,
                                 std::optional<double> scale, Tensor& out) {
  if (query.rank != 4 || seq_len != query.sizes[1])
    return fail(call, ET_ERR_INVALID_ARGUMENT, "seq_len " + std::to_string(seq_len) + " must be query's dimension 1, "
                                                   "query is " + shape_of(query));
  ETRT_TRY(write_cache(call, key, key_cache, start_pos));
  ETRT_TRY(write_cache(call, value, value_cache, start_pos));
  return attend(call, query, key_cache, value_cache, start_pos, attn_mask, dropout_p, is_causal, scale, out);
}

}  // namespace etrt_llm
