#include "etrt/llm/text_runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_set>

namespace etrt::llm {
namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Program load_program(const std::string& model_path, const std::vector<std::string>& data_paths) {
  Program program = Program::load(model_path);
  for (const std::string& data : data_paths) program.add_data_file(data);
  return program;
}

// The scalar a constant method returns as output `index`: an int, a bool, a double, or a tensor of
// one integer element.
int64_t scalar_output(const Method& method, size_t index, const std::string& name) {
  const et_value& value = method.output(index);
  switch (value.tag) {
    case ET_VALUE_INT:
    case ET_VALUE_BOOL:
      return value.as_int;
    case ET_VALUE_DOUBLE:
      return static_cast<int64_t>(value.as_double);
    case ET_VALUE_TENSOR: {
      const et_tensor* t = value.tensor;
      if (t != nullptr && t->data != nullptr) {
        if (t->dtype == ET_DTYPE_INT64 && t->nbytes == sizeof(int64_t)) return *static_cast<const int64_t*>(t->data);
        if (t->dtype == ET_DTYPE_INT32 && t->nbytes == sizeof(int32_t)) return *static_cast<const int32_t*>(t->data);
        if (t->dtype == ET_DTYPE_BOOL && t->nbytes == 1) return *static_cast<const uint8_t*>(t->data);
      }
      break;
    }
    default:
      break;
  }
  throw Error(ET_ERR_INVALID_PROGRAM,
              "constant method " + name + ": output " + std::to_string(index) + " is not an integer scalar");
}

// An int64 input of `count` elements; the arrays must outlive the call that sets it.
et_tensor int64_tensor(const int64_t* data, size_t count, int32_t rank, const int64_t* sizes, const int64_t* strides,
                       const uint8_t* dim_order) {
  et_tensor tensor{};
  tensor.struct_size = sizeof tensor;
  tensor.dtype = ET_DTYPE_INT64;
  tensor.rank = rank;
  tensor.sizes = sizes;
  tensor.dim_order = dim_order;
  tensor.strides = strides;
  tensor.data = const_cast<int64_t*>(data);  // inputs are copied or read, never written
  tensor.nbytes = tensor.capacity_bytes = count * sizeof(int64_t);
  return tensor;
}

}  // namespace

int32_t GenerationConfig::resolve_max_new_tokens(int64_t max_context_len, int64_t num_prompt_tokens) const {
  int64_t budget = max_context_len - num_prompt_tokens;
  if (seq_len != -1) budget = std::min<int64_t>(seq_len, max_context_len) - num_prompt_tokens;
  if (max_new_tokens != -1) budget = std::min<int64_t>(budget, max_new_tokens);
  return static_cast<int32_t>(std::max<int64_t>(budget, 0));
}

TextRunner::TextRunner(const std::string& model_path, const std::string& tokenizer_path,
                       const std::vector<std::string>& data_paths)
    : TextRunner(model_path, load_tokenizer(tokenizer_path), data_paths) {}

TextRunner::TextRunner(const std::string& model_path, std::unique_ptr<Tokenizer> tokenizer,
                       const std::vector<std::string>& data_paths)
    : model_path_(model_path), program_(load_program(model_path, data_paths)), tokenizer_(std::move(tokenizer)) {
  if (!tokenizer_) throw Error(ET_ERR_INVALID_ARGUMENT, "text runner: no tokenizer");
  read_metadata();
}

void TextRunner::read_metadata() {
  const std::vector<std::string> names = program_.method_names();
  auto has = [&](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  // Runs a method without inputs and returns its outputs as integers.
  auto constant = [&](const char* name) {
    Method method = program_.load_method(name);
    if (method.num_inputs() != 0)
      throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": constant method " + name + " takes inputs");
    method.execute();
    std::vector<int64_t> values;
    for (size_t i = 0; i < method.num_outputs(); ++i) values.push_back(scalar_output(method, i, name));
    if (values.empty())
      throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": constant method " + std::string(name) + " returns nothing");
    return values;
  };
  if (!has(kMaxSeqLen))
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": no constant method " + std::string(kMaxSeqLen) +
                                            " (not a program exported for the LLM runner: its metadata is missing)");
  if (!has("forward")) throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": no forward method");
  ModelMetadata m;
  m.max_seq_len = constant(kMaxSeqLen)[0];
  m.max_context_len = has(kMaxContextLen) ? constant(kMaxContextLen)[0] : m.max_seq_len;
  if (has(kVocabSize)) m.vocab_size = constant(kVocabSize)[0];
  m.bos_id = has(kBosId) ? static_cast<uint64_t>(constant(kBosId)[0]) : tokenizer_->bos_id();
  if (has(kEosIds)) {
    for (int64_t id : constant(kEosIds)) m.eos_ids.push_back(static_cast<uint64_t>(id));
  } else {
    m.eos_ids.push_back(tokenizer_->eos_id());
  }
  if (has(kUseKVCache)) m.use_kv_cache = constant(kUseKVCache)[0] != 0;
  if (has(kUseSDPAWithKVCache)) m.use_sdpa_with_kv_cache = constant(kUseSDPAWithKVCache)[0] != 0;
  if (has(kEnableDynamicShape)) m.enable_dynamic_shape = constant(kEnableDynamicShape)[0] != 0;
  if (m.max_seq_len <= 0 || m.max_context_len <= 0)
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": " + kMaxSeqLen + " / " + kMaxContextLen + " not positive");
  if (m.vocab_size && tokenizer_->vocab_size() > static_cast<uint64_t>(*m.vocab_size))
    throw Error(ET_ERR_INVALID_ARGUMENT, "the tokenizer's vocabulary (" + std::to_string(tokenizer_->vocab_size()) +
                                             " ids) does not fit the model's (" + std::to_string(*m.vocab_size) +
                                             " ids, " + kVocabSize + " of " + model_path_ + ")");
  metadata_ = std::move(m);
}

void TextRunner::load() {
  if (is_loaded()) return;
  forward_ = std::make_unique<Method>(program_.load_method("forward"));
  const size_t expected_inputs = metadata_.use_kv_cache ? 2 : 1;
  if (forward_->num_inputs() < expected_inputs) {
    size_t found = forward_->num_inputs();
    forward_.reset();
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": forward takes " + std::to_string(found) +
                                            " inputs, the runner needs tokens" +
                                            (expected_inputs == 2 ? " and the start position" : ""));
  }
}

void TextRunner::load_timed() {
  if (is_loaded()) return;
  stats_.model_load_start_ms = now_ms();
  load();
  stats_.model_load_end_ms = now_ms();
}

std::vector<float> TextRunner::step(const std::vector<int64_t>& tokens, int64_t start_position) {
  const uint8_t dim_order[2] = {0, 1};
  const int64_t token_sizes[2] = {1, static_cast<int64_t>(tokens.size())};
  const int64_t token_strides[2] = {static_cast<int64_t>(tokens.size()), 1};
  et_tensor token_tensor = int64_tensor(tokens.data(), tokens.size(), 2, token_sizes, token_strides, dim_order);
  forward_->set_input(0, token_tensor);
  const int64_t position_value = start_position;
  const int64_t one = 1;
  et_tensor position_tensor = int64_tensor(&position_value, 1, 1, &one, &one, dim_order);
  if (metadata_.use_kv_cache) forward_->set_input(1, position_tensor);
  forward_->execute();

  const et_value& output = forward_->output(0);
  if (output.tag != ET_VALUE_TENSOR || output.tensor == nullptr)
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": forward's first output is not a tensor of logits");
  const et_tensor& logits = *output.tensor;
  if (logits.dtype != ET_DTYPE_FLOAT32)
    throw Error(ET_ERR_NOT_SUPPORTED, model_path_ + ": logits of dtype " + std::to_string(logits.dtype) +
                                          " (the runner reads float32 logits)");
  if (logits.rank < 1 || logits.data == nullptr)
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": forward returned empty logits");
  const size_t vocab = static_cast<size_t>(logits.sizes[logits.rank - 1]);
  const size_t total = logits.nbytes / sizeof(float);
  if (vocab == 0 || total < vocab)
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": forward returned empty logits");
  if (metadata_.vocab_size && vocab != static_cast<size_t>(*metadata_.vocab_size))
    throw Error(ET_ERR_INVALID_PROGRAM, model_path_ + ": logits have " + std::to_string(vocab) + " entries, " +
                                            kVocabSize + " says " + std::to_string(*metadata_.vocab_size));
  // Logits of every position ([1, n, vocab]) or of the last one: the row of the last token.
  const float* last = static_cast<const float*>(logits.data) + (total - vocab);
  return std::vector<float>(last, last + vocab);
}

uint64_t TextRunner::prefill(const std::vector<uint64_t>& prompt, int64_t& position) {
  std::vector<float> logits;
  // In chunks of at most max_seq_len tokens; one chunk per call with a dynamic sequence length
  // (or without a KV cache), one token per call otherwise.
  const bool whole_chunks = metadata_.enable_dynamic_shape || !metadata_.use_kv_cache;
  const size_t chunk = whole_chunks ? static_cast<size_t>(metadata_.max_seq_len) : 1;
  for (size_t begin = 0; begin < prompt.size(); begin += chunk) {
    const size_t end = std::min(prompt.size(), begin + chunk);
    std::vector<int64_t> tokens(prompt.begin() + static_cast<ptrdiff_t>(begin),
                                prompt.begin() + static_cast<ptrdiff_t>(end));
    logits = step(tokens, position);
    position += static_cast<int64_t>(tokens.size());
  }
  // The first token after the prompt is chosen greedily, as ExecuTorch's prefiller does.
  return Sampler::argmax(logits);
}

std::vector<uint64_t> TextRunner::encode_prompt(const std::string& prompt, const GenerationConfig& config,
                                                const char* caller) {
  const std::string where(caller);
  if (prompt.empty()) throw Error(ET_ERR_INVALID_ARGUMENT, where + ": the prompt is empty");
  std::vector<uint64_t> tokens = tokenizer_->encode(prompt, config.num_bos, config.num_eos);
  const int64_t num_tokens = static_cast<int64_t>(tokens.size());
  const int64_t context_left = metadata_.max_context_len - position_;
  if (num_tokens < 1) throw Error(ET_ERR_INVALID_ARGUMENT, where + ": the prompt encodes to no token");
  if (num_tokens >= context_left)
    throw Error(ET_ERR_INVALID_ARGUMENT,
                where + ": the prompt has " + std::to_string(num_tokens) + " tokens, the context has room for " +
                    std::to_string(context_left - 1) + " (" + kMaxContextLen + " " +
                    std::to_string(metadata_.max_context_len) + ", position " + std::to_string(position_) + ")");
  for (uint64_t id : tokens)
    if (metadata_.vocab_size && id >= static_cast<uint64_t>(*metadata_.vocab_size))
      throw Error(ET_ERR_INVALID_ARGUMENT,
                  where + ": prompt token " + std::to_string(id) + " is outside the model's vocabulary");
  return tokens;
}

void TextRunner::prefill(const std::string& prompt, const GenerationConfig& config) {
  load_timed();
  const std::vector<uint64_t> tokens = encode_prompt(prompt, config, "prefill");
  int64_t position = position_;
  prefill(tokens, position);
  position_ = position;  // only once the whole prompt is in the cache
}

void TextRunner::generate(const std::string& prompt, const GenerationConfig& config,
                          const TokenCallback& token_callback, const StatsCallback& stats_callback) {
  load_timed();
  stats_.inference_start_ms = now_ms();
  stop_requested_ = false;
  const std::vector<uint64_t> prompt_tokens = encode_prompt(prompt, config, "generate");
  stats_.token_encode_end_ms = now_ms();
  const int64_t num_prompt_tokens = static_cast<int64_t>(prompt_tokens.size());
  const int64_t context_left = metadata_.max_context_len - position_;
  const int32_t max_new_tokens = config.resolve_max_new_tokens(context_left, num_prompt_tokens);
  if (max_new_tokens <= 0)
    throw Error(ET_ERR_INVALID_ARGUMENT, "generate: no room for a new token (max_new_tokens " +
                                             std::to_string(config.max_new_tokens) + ", seq_len " +
                                             std::to_string(config.seq_len) + ")");

  // This generation's sampler: the runner's random stream (or a new one from config.seed) with
  // this config's temperature, top-k and top-p. Kept only when the generation succeeds.
  Sampler sampler = sampler_;
  sampler.set_options(config.temperature, config.top_k, config.top_p);
  if (config.seed) sampler.reseed(*config.seed);

  if (config.echo && token_callback) token_callback(prompt);
  // Position changes only once the whole generation succeeded or stopped cleanly.
  int64_t position = position_;
  std::vector<uint64_t> generated;
  uint64_t token = prefill(prompt_tokens, position);
  stats_.first_token_ms = stats_.prompt_eval_end_ms = now_ms();
  generated.push_back(token);
  if (token_callback) token_callback(tokenizer_->decode(token, token));

  const std::unordered_set<uint64_t> eos(metadata_.eos_ids.begin(), metadata_.eos_ids.end());
  int64_t decoded = 0;
  // Without a KV cache the whole sequence is fed again at every step.
  std::vector<int64_t> sequence(prompt_tokens.begin(), prompt_tokens.end());
  while (decoded < max_new_tokens - 1) {
    std::vector<int64_t> input;
    if (metadata_.use_kv_cache) {
      input = {static_cast<int64_t>(token)};
    } else {
      sequence.push_back(static_cast<int64_t>(token));
      input = sequence;
    }
    std::vector<float> logits = step(input, position);
    const int64_t sampling_start = now_ms();
    const uint64_t previous = token;
    token = sampler.sample(logits);
    stats_.aggregate_sampling_time_ms += now_ms() - sampling_start;
    ++position;
    ++decoded;
    generated.push_back(token);
    if (token_callback) token_callback(tokenizer_->decode(previous, token));
    if (stop_requested_ || eos.count(token)) break;
  }
  position_ = position;
  sampler_ = sampler;
  generated_tokens_ = std::move(generated);
  stats_.inference_end_ms = now_ms();
  stats_.num_prompt_tokens = num_prompt_tokens;
  stats_.num_generated_tokens = decoded;
  if (stats_callback) stats_callback(stats_);
}

void TextRunner::warmup(const std::string& prompt, int32_t max_new_tokens) {
  GenerationConfig config;
  config.echo = false;
  config.max_new_tokens = max_new_tokens;
  config.warming = true;
  generate(prompt, config);
  reset();
}

void TextRunner::reset() {
  stats_.reset();
  position_ = 0;
  generated_tokens_.clear();
}

}  // namespace etrt::llm
