// Reading a Hugging Face tokenizer.json (and the bos/eos of a tokenizer_config.json beside it).
#include <cctype>

#include <nlohmann/json.hpp>

#include "byte_level.h"
#include "error.h"
#include "hf_components.h"

namespace etrt::llm::detail {

namespace {

using Json = nlohmann::json;
constexpr const char* kFormat = "tokenizer.json";

// GPT-2's pattern, which ByteLevel with use_regex splits with.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  [[noreturn]] void bad(const std::string& path, const std::string& what) const {
    fail_file(name_, kFormat, "'" + path + "' " + what);
  }
  [[noreturn]] void unsupported(const std::string& path, const std::string& what) const {
    fail_unsupported(name_, kFormat, "'" + path + "' " + what);
  }

  const Json& object(const Json& json, const std::string& path) const {
    if (!json.is_object()) bad(path.empty() ? "(the top level)" : path, "is not an object");
    return json;
  }
  const Json& member(const Json& json, const char* key, const std::string& path) const {
    object(json, path);
    const auto it = json.find(key);
    if (it == json.end()) bad(path.empty() ? std::string(key) : path + "." + key, "is missing");
    return *it;
  }
  const Json* optional_member(const Json& json, const char* key) const {
    const auto it = json.find(key);
    return it == json.end() || it->is_null() ? nullptr : &*it;
  }
  std::string string(const Json& json, const std::string& path) const {
    if (!json.is_string()) bad(path, "is not a string");
    return json.get<std::string>();
  }
  bool boolean(const Json& json, const char* key, bool fallback, const std::string& path) const {
    const Json* value = optional_member(json, key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) bad(path + "." + key, "is not a boolean");
    return value->get<bool>();
  }
  uint64_t id(const Json& json, const std::string& path) const {
    if (!json.is_number_unsigned() && !(json.is_number_integer() && json.get<int64_t>() >= 0)) {
      bad(path, "is not a token id (a non-negative integer)");
    }
    const uint64_t value = json.get<uint64_t>();
    if (value > 0xFFFFFFFFull) bad(path, "is larger than a 32-bit token id");
    return value;
  }
  std::string type(const Json& json, const std::string& path) const {
    return string(member(json, "type", path), path + ".type");
  }

 private:
  std::string name_;
};

std::string escape_literal(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80 && !std::isalnum(byte)) out += '\\';
    out += c;
  }
  return out;
}

void read_normalizer(const Reader& reader, const Json& json, const std::string& path, HfComponents& out) {
  if (json.is_null()) return;
  const std::string type = reader.type(json, path);
  if (type == "NFC") {
    out.normalizer.push_back(NormalizationForm::kNfc);
  } else if (type == "NFD") {
    out.normalizer.push_back(NormalizationForm::kNfd);
  } else if (type == "NFKC") {
    out.normalizer.push_back(NormalizationForm::kNfkc);
  } else if (type == "NFKD") {
    out.normalizer.push_back(NormalizationForm::kNfkd);
  } else if (type == "Sequence") {
    const Json& steps = reader.member(json, "normalizers", path);
    if (!steps.is_array()) reader.bad(path + ".normalizers", "is not an array");
    for (size_t i = 0; i < steps.size(); ++i) {
      read_normalizer(reader, steps[i], path + ".normalizers[" + std::to_string(i) + "]", out);
    }
  } else {
    reader.unsupported(path, "is a normalizer of type '" + type +
                                 "'; supported: NFC, NFD, NFKC, NFKD and Sequence of them");
  }
}

SplitBehavior read_behavior(const Reader& reader, const Json& json, const std::string& path) {
  const std::string behavior = reader.string(json, path);
  if (behavior == "Removed") return SplitBehavior::kRemoved;
  if (behavior == "Isolated") return SplitBehavior::kIsolated;
  if (behavior == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (behavior == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (behavior == "Contiguous") return SplitBehavior::kContiguous;
  reader.bad(path, "is not a split behavior: '" + behavior + "'");
}

void read_pre_tokenizer(const Reader& reader, std::string_view name, const Json& json, const std::string& path,
                        HfComponents& out) {
  if (json.is_null()) return;
  const std::string type = reader.type(json, path);
  HfPreTokenizerStep step;
  if (type == "ByteLevel") {
    step.kind = HfPreTokenizerStep::Kind::kByteLevel;
    step.add_prefix_space = reader.boolean(json, "add_prefix_space", true, path);
    if (reader.boolean(json, "use_regex", true, path)) {
      step.regex = std::make_shared<Regex>(kGpt2Pattern, std::string(name) + ": ByteLevel's pattern");
    }
    out.pre_tokenizer.push_back(std::move(step));
  } else if (type == "Split") {
    const Json& pattern = reader.member(json, "pattern", path);
    reader.object(pattern, path + ".pattern");
    std::string regex;
    if (const Json* text = reader.optional_member(pattern, "Regex")) {
      regex = reader.string(*text, path + ".pattern.Regex");
    } else if (const Json* literal = reader.optional_member(pattern, "String")) {
      regex = escape_literal(reader.string(*literal, path + ".pattern.String"));
    } else {
      reader.bad(path + ".pattern", "has neither 'Regex' nor 'String'");
    }
    step.regex = std::make_shared<Regex>(regex, std::string(name) + ": " + path + ".pattern");
    step.behavior = read_behavior(reader, reader.member(json, "behavior", path), path + ".behavior");
    step.invert = reader.boolean(json, "invert", false, path);
    out.pre_tokenizer.push_back(std::move(step));
  } else if (type == "Sequence") {
    const Json& steps = reader.member(json, "pretokenizers", path);
    if (!steps.is_array()) reader.bad(path + ".pretokenizers", "is not an array");
    for (size_t i = 0; i < steps.size(); ++i) {
      read_pre_tokenizer(reader, name, steps[i], path + ".pretokenizers[" + std::to_string(i) + "]", out);
    }
  } else {
    reader.unsupported(path, "is a pre-tokenizer of type '" + type +
                                 "'; supported: ByteLevel, Split and Sequence of them");
  }
}

void read_merges(const Reader& reader, const Json& merges, HfBpeModel& model) {
  if (!merges.is_array()) reader.bad("model.merges", "is not an array");
  uint64_t rank = 0;
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json& merge = merges[i];
    const std::string path = "model.merges[" + std::to_string(i) + "]";
    std::string left, right;
    if (merge.is_string()) {
      const std::string line = merge.get<std::string>();
      if (line.rfind("#version", 0) == 0) continue;  // a comment line of the old merges.txt form
      const size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        reader.bad(path, "is not two tokens separated by one space");
      }
      left = line.substr(0, space);
      right = line.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2) {
      left = reader.string(merge[0], path + "[0]");
      right = reader.string(merge[1], path + "[1]");
    } else {
      reader.bad(path, "is neither \"left right\" nor [left, right]");
    }
    const auto find = [&](const std::string& token) {
      const auto it = model.vocab.find(token);
      if (it == model.vocab.end()) reader.bad(path, "names '" + token + "', which is not in model.vocab");
      return it->second;
    };
    const uint64_t left_id = find(left), right_id = find(right), merged_id = find(left + right);
    // A pair given twice keeps its last rank, as Hugging Face's map does.
    model.merges[left_id << 32 | right_id] = BpeMerge{rank++, merged_id};
  }
}

void read_model(const Reader& reader, const Json& json, HfComponents& out) {
  reader.object(json, "model");
  if (const Json* type = reader.optional_member(json, "type")) {
    const std::string name = reader.string(*type, "model.type");
    if (name != "BPE") reader.unsupported("model", "is a model of type '" + name + "'; supported: BPE");
  }
  if (const Json* dropout = reader.optional_member(json, "dropout")) {
    if (!dropout->is_number() || dropout->get<double>() != 0.0) {
      reader.unsupported("model.dropout", "is set: BPE dropout samples merges at random");
    }
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (const Json* affix = reader.optional_member(json, key)) {
      if (!reader.string(*affix, std::string("model.") + key).empty()) {
        reader.unsupported(std::string("model.") + key, "is set; byte-level BPE files have none");
      }
    }
  }
  HfBpeModel& model = out.model;
  const Json& vocab = reader.member(json, "vocab", "model");
  reader.object(vocab, "model.vocab");
  model.vocab.reserve(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    model.vocab[token] = reader.id(id, "model.vocab[\"" + token + "\"]");
  }
  read_merges(reader, reader.member(json, "merges", "model"), model);
  model.fuse_unk = reader.boolean(json, "fuse_unk", false, "model");
  model.byte_fallback = reader.boolean(json, "byte_fallback", false, "model");
  model.ignore_merges = reader.boolean(json, "ignore_merges", false, "model");
  if (const Json* unk = reader.optional_member(json, "unk_token")) {
    const std::string token = reader.string(*unk, "model.unk_token");
    const auto it = model.vocab.find(token);
    if (it == model.vocab.end()) reader.bad("model.unk_token", "'" + token + "' is not in model.vocab");
    model.unk_id = it->second;
  }
}

void read_added_tokens(const Reader& reader, const Json& json, HfComponents& out) {
  if (json.is_null()) return;
  if (!json.is_array()) reader.bad("added_tokens", "is not an array");
  for (size_t i = 0; i < json.size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const Json& entry = reader.object(json[i], path);
    HfAddedToken token;
    token.id = reader.id(reader.member(entry, "id", path), path + ".id");
    token.content = reader.string(reader.member(entry, "content", path), path + ".content");
    token.special = reader.boolean(entry, "special", false, path);
    token.single_word = reader.boolean(entry, "single_word", false, path);
    token.lstrip = reader.boolean(entry, "lstrip", false, path);
    token.rstrip = reader.boolean(entry, "rstrip", false, path);
    token.normalized = reader.boolean(entry, "normalized", !token.special, path);
    out.added_tokens.push_back(std::move(token));
  }
}

void read_decoder(const Reader& reader, const Json& json, HfComponents& out) {
  if (json.is_null()) return;
  const std::string type = reader.type(json, "decoder");
  if (type != "ByteLevel") reader.unsupported("decoder", "is a decoder of type '" + type + "'; supported: ByteLevel");
  out.byte_level_decoder = true;
}

// A tokenizer_config.json's "bos_token": a string or an AddedToken object with "content".
std::optional<std::string> config_token(const Json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return std::nullopt;
}

Json parse(std::string_view text, std::string_view name, const char* what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& error) {
    fail_file(name, what, std::string("not valid JSON: ") + error.what());
  }
}

}  // namespace

HfComponents parse_hf_tokenizer_json(std::string_view content, std::string_view name, std::string_view config_json) {
  const Json json = parse(content, name, kFormat);
  const Reader reader(name);
  reader.object(json, "");
  HfComponents out;
  try {
    if (const Json* normalizer = reader.optional_member(json, "normalizer")) {
      read_normalizer(reader, *normalizer, "normalizer", out);
    }
    if (const Json* pre_tokenizer = reader.optional_member(json, "pre_tokenizer")) {
      read_pre_tokenizer(reader, name, *pre_tokenizer, "pre_tokenizer", out);
    }
    read_model(reader, reader.member(json, "model", ""), out);
    if (const Json* decoder = reader.optional_member(json, "decoder")) read_decoder(reader, *decoder, out);
    if (const Json* added = reader.optional_member(json, "added_tokens")) read_added_tokens(reader, *added, out);
  } catch (const Json::exception& error) {
    fail_file(name, kFormat, std::string("unexpected JSON content: ") + error.what());
  }

  uint64_t size = 0;
  for (const auto& [token, id] : out.model.vocab) size = std::max(size, id + 1);
  for (const HfAddedToken& token : out.added_tokens) size = std::max(size, token.id + 1);
  out.id_to_token.assign(size, std::string());
  out.is_added.assign(size, false);
  for (const auto& [token, id] : out.model.vocab) out.id_to_token[id] = token;
  for (const HfAddedToken& token : out.added_tokens) {
    out.id_to_token[token.id] = token.content;
    out.is_added[token.id] = true;
  }

  if (!config_json.empty()) {
    const Json config = parse(config_json, name, "tokenizer_config.json");
    const auto find_added = [&](const char* key) -> std::optional<uint64_t> {
      const std::optional<std::string> text = config.is_object() ? config_token(config, key) : std::nullopt;
      if (!text) return std::nullopt;
      for (const HfAddedToken& token : out.added_tokens) {
        if (token.content == *text) return token.id;
      }
      fail_file(name, "tokenizer_config.json", std::string(key) + " '" + *text + "' is not an added token");
    };
    out.bos_id = find_added("bos_token");
    out.eos_id = find_added("eos_token");
  }
  return out;
}

}  // namespace etrt::llm::detail
