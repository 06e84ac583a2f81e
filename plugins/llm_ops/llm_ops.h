// The kernels of the llm_ops plugin (operators.def lists them).
#pragma once

#include <optional>

#include "etrt/kernel.hpp"

namespace etrt_llm {

using etrt::plugin::Call;
using etrt::plugin::Tensor;

// The host table, bound at init (plugin_entry.cpp).
extern etrt::plugin::Host host;

// llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *, Tensor(b!) out)
// writes value [B, S, H, D] into cache[:, start_pos:start_pos+S]; `out` is a placeholder.
et_error* update_cache_out(Call call, const Tensor& value, Tensor& cache, int64_t start_pos, Tensor& out);

// llama::custom_sdpa.out: attention of query [B, S, Hq, D] over the first kv_len rows
// of key/value caches [B, L, Hkv, D] (kv_len = start_pos + S, or the mask's width).
et_error* custom_sdpa_out(Call call, const Tensor& query, const Tensor& key, const Tensor& value, int64_t start_pos,
                          const Tensor* attn_mask, double dropout_p, bool is_causal, std::optional<double> scale,
                          Tensor& out);

// llama::sdpa_with_kv_cache.out: update_cache of key and value at start_pos, then custom_sdpa.
et_error* sdpa_with_kv_cache_out(Call call, const Tensor& query, const Tensor& key, const Tensor& value,
                                 Tensor& key_cache, Tensor& value_cache, int64_t start_pos, int64_t seq_len,
                                 const Tensor* attn_mask, double dropout_p, bool is_causal,
                                 std::optional<double> scale, Tensor& out);

}  // namespace etrt_llm
