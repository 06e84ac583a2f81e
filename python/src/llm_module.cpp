// etrt._llm: the Python face of libetrt_llm (use etrt.llm). Shaped like ExecuTorch's
// executorch.extension.llm.runner._llm_runner for text: GenerationConfig, Stats, TextLLMRunner.
// It links libetrt_llm, which links the process's one libetrt: programs it runs use the registry,
// plugins and thread pool that etrt._etrt sees.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "etrt/etrt.hpp"
#include "etrt/llm/text_runner.h"
#include "glue.h"
#include "text.h"

namespace py = pybind11;
using etrt::llm::GenerationConfig;
using etrt::llm::Stats;
using etrt::llm::TextRunner;

namespace {

std::string config_repr(const GenerationConfig& c) {
  char temperature[32];
  std::snprintf(temperature, sizeof temperature, "%f", static_cast<double>(c.temperature));
  return "<GenerationConfig max_new_tokens=" + std::to_string(c.max_new_tokens) + " seq_len=" +
         std::to_string(c.seq_len) + " temperature=" + temperature + " echo=" + (c.echo ? "True" : "False") +
         " warming=" + (c.warming ? "True" : "False") + ">";
}

// The fields of Stats, in the order ExecuTorch's runner prints them.
#define ETRT_LLM_STATS_FIELDS(X)                                                                        \
  X(model_load_start_ms) X(model_load_end_ms) X(inference_start_ms) X(token_encode_end_ms)              \
  X(prompt_eval_end_ms) X(first_token_ms) X(inference_end_ms) X(aggregate_sampling_time_ms)            \
  X(num_prompt_tokens) X(num_generated_tokens)

std::string stats_json(const Stats& s) {
  std::string out = "{";
#define ETRT_LLM_STATS_JSON(field) out += "\"" #field "\":" + std::to_string(s.field) + ",";
  ETRT_LLM_STATS_FIELDS(ETRT_LLM_STATS_JSON)
#undef ETRT_LLM_STATS_JSON
  out += "\"SCALING_FACTOR_UNITS_PER_SECOND\":" + std::to_string(Stats::SCALING_FACTOR_UNITS_PER_SECOND) + "}";
  return out;
}

// Streamed pieces are bytes: a byte-level or byte-fallback token may carry part of a character.
// They reach Python as text once their characters are whole (an incremental UTF-8 decoder; bytes
// that are no UTF-8 at all become U+FFFD), so the pieces joined are the decoded generation.
class TextStream {
 public:
  explicit TextStream(py::object callback)
      : callback_(std::move(callback)),
        decoder_(py::module_::import("codecs").attr("getincrementaldecoder")("utf-8")("replace")) {}

  void write(const std::string& piece) {
    py::gil_scoped_acquire acquire;
    emit(decoder_.attr("decode")(py::bytes(piece), false));
  }
  void finish() { emit(decoder_.attr("decode")(py::bytes(), true)); }

 private:
  void emit(const py::object& text) {
    if (py::len(text) > 0) callback_(text);
  }
  py::object callback_;
  py::object decoder_;
};

// One call at a time per runner (the TextRunner is not reentrant): a call from another thread waits,
// with the GIL released so the running call's callbacks can take it; a call from the runner's own
// callback is refused by name instead of deadlocking. stop() is always allowed.
class PyTextRunner {
 public:
  PyTextRunner(const std::string& model_path, const std::string& tokenizer_path,
               const std::optional<std::string>& data_path)
      : runner_(model_path, tokenizer_path,
                data_path ? std::vector<std::string>{*data_path} : std::vector<std::string>{}) {}

  // Runs `work` alone on this runner. Called with the GIL held; `work` runs without it.
  template <typename Work>
  void exclusive(const char* call, Work&& work) {
    if (owner_.load() == std::this_thread::get_id())
      throw etrt::Error(ET_ERR_INVALID_STATE, std::string("TextLLMRunner.") + call +
                                                  "() was called from this runner's own callback, while it runs");
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    owner_ = std::this_thread::get_id();
    struct ClearOwner {
      std::atomic<std::thread::id>& owner;
      ~ClearOwner() { owner = std::thread::id(); }
    } clear{owner_};
    work(runner_);
  }

  void generate(const std::string& prompt, const GenerationConfig& config, const py::object& token_callback,
                const py::object& stats_callback) {
    std::optional<TextStream> stream;
    if (!token_callback.is_none()) stream.emplace(token_callback);
    TextRunner::TokenCallback on_token;
    if (stream) on_token = [&](const std::string& piece) { stream->write(piece); };
    TextRunner::StatsCallback on_stats;
    if (!stats_callback.is_none()) {
      on_stats = [&](const Stats& stats) {
        py::gil_scoped_acquire acquire;
        stats_callback(Stats(stats));  // a copy: Python may keep it
      };
    }
    exclusive("generate", [&](TextRunner& runner) { runner.generate(prompt, config, on_token, on_stats); });
    if (stream) stream->finish();
  }

  // A value a running call changes, read between calls (another thread waits for the running one)
  // or from the running call's own callback (it is paused there).
  template <typename Read>
  auto read(Read&& read_value) {
    if (owner_.load() == std::this_thread::get_id()) return read_value(runner_);
    decltype(read_value(runner_)) value{};
    exclusive("read", [&](TextRunner& runner) { value = read_value(runner); });
    return value;
  }

  // stop(), the metadata and the tokenizer need no exclusion (an atomic flag, values fixed at construction).
  TextRunner& runner() { return runner_; }

 private:
  TextRunner runner_;
  std::mutex mutex_;
  std::atomic<std::thread::id> owner_{};
};

}  // namespace

PYBIND11_MODULE(_llm, m) {
  m.doc() = "etrt's LLM runner over libetrt_llm (use etrt.llm)";
  etrt::python::translate_errors();

  py::class_<GenerationConfig>(m, "GenerationConfig", "How a generation runs (as ExecuTorch's GenerationConfig).")
      .def(py::init([](bool echo, int32_t max_new_tokens, bool warming, int32_t seq_len, float temperature,
                       int32_t num_bos, int32_t num_eos, int32_t top_k, float top_p, std::optional<uint64_t> seed) {
             GenerationConfig c;
             c.echo = echo;
             c.max_new_tokens = max_new_tokens;
             c.warming = warming;
             c.seq_len = seq_len;
             c.temperature = temperature;
             c.num_bos = num_bos;
             c.num_eos = num_eos;
             c.top_k = top_k;
             c.top_p = top_p;
             c.seed = seed;
             return c;
           }),
           py::kw_only(), py::arg("echo") = true, py::arg("max_new_tokens") = -1, py::arg("warming") = false,
           py::arg("seq_len") = -1, py::arg("temperature") = 0.8f, py::arg("num_bos") = 0, py::arg("num_eos") = 0,
           py::arg("top_k") = 0, py::arg("top_p") = 1.0f, py::arg("seed") = py::none())
      .def_readwrite("echo", &GenerationConfig::echo)
      .def_readwrite("max_new_tokens", &GenerationConfig::max_new_tokens)
      .def_readwrite("warming", &GenerationConfig::warming)
      .def_readwrite("seq_len", &GenerationConfig::seq_len)
      .def_readwrite("temperature", &GenerationConfig::temperature)
      .def_readwrite("num_bos", &GenerationConfig::num_bos)
      .def_readwrite("num_eos", &GenerationConfig::num_eos)
      .def_readwrite("top_k", &GenerationConfig::top_k, "etrt: keep the k most probable tokens (0: all)")
      .def_readwrite("top_p", &GenerationConfig::top_p, "etrt: nucleus sampling mass (1: all)")
      .def_readwrite("seed", &GenerationConfig::seed, "etrt: restart the random stream from this seed (None: continue)")
      .def("resolve_max_new_tokens", &GenerationConfig::resolve_max_new_tokens, py::arg("max_context_len"),
           py::arg("num_tokens_occupied"))
      .def("__repr__", &config_repr);

  py::class_<Stats> stats(m, "Stats", "Timings (ms since the epoch) and token counts of the last generation.");
  stats.def(py::init<>())
      .def_readonly_static("SCALING_FACTOR_UNITS_PER_SECOND", &Stats::SCALING_FACTOR_UNITS_PER_SECOND)
      .def("reset", [](Stats& s, bool all_stats) {
             const int64_t load_start = s.model_load_start_ms, load_end = s.model_load_end_ms;
             s.reset();
             if (!all_stats) s.model_load_start_ms = load_start, s.model_load_end_ms = load_end;
           }, py::arg("all_stats") = false)
      .def("to_json_string", &stats_json)
      .def("__repr__", [](const Stats& s) { return "<Stats " + stats_json(s) + ">"; });
#define ETRT_LLM_STATS_BIND(field) stats.def_readwrite(#field, &Stats::field);
  ETRT_LLM_STATS_FIELDS(ETRT_LLM_STATS_BIND)
#undef ETRT_LLM_STATS_BIND

  py::class_<PyTextRunner>(m, "TextLLMRunner", "Text generation with a decoder-only LLM program and its tokenizer.")
      .def(py::init<const std::string&, const std::string&, const std::optional<std::string>&>(),
           py::arg("model_path"), py::arg("tokenizer_path"), py::arg("data_path") = py::none(),
           py::call_guard<py::gil_scoped_release>())
      .def("generate", &PyTextRunner::generate, py::arg("prompt"), py::arg("config"),
           py::arg("token_callback") = py::none(), py::arg("stats_callback") = py::none())
      .def("prefill", [](PyTextRunner& r, const std::string& prompt, const GenerationConfig& config) {
             r.exclusive("prefill", [&](TextRunner& runner) { runner.prefill(prompt, config); });
           }, py::arg("prompt"), py::arg("config") = GenerationConfig{})
      .def("stop", [](PyTextRunner& r) { r.runner().stop(); })
      .def("reset", [](PyTextRunner& r) { r.exclusive("reset", [](TextRunner& runner) { runner.reset(); }); })
      .def("load", [](PyTextRunner& r) { r.exclusive("load", [](TextRunner& runner) { runner.load(); }); })
      .def("is_loaded", [](PyTextRunner& r) { return r.read([](TextRunner& t) { return t.is_loaded(); }); })
      .def("warmup", [](PyTextRunner& r, const std::string& prompt, int32_t max_new_tokens) {
             r.exclusive("warmup", [&](TextRunner& runner) { runner.warmup(prompt, max_new_tokens); });
           }, py::arg("prompt"), py::arg("max_new_tokens") = 15)
      .def("get_vocab_size", [](PyTextRunner& r) -> int64_t {
             const auto& vocab = r.runner().metadata().vocab_size;
             return vocab ? *vocab : -1;
           })
      .def_property_readonly("stats", [](PyTextRunner& r) { return r.read([](TextRunner& t) { return t.stats(); }); })
      .def_property_readonly("position",
                             [](PyTextRunner& r) { return r.read([](TextRunner& t) { return t.position(); }); })
      .def_property_readonly("generated_tokens", [](PyTextRunner& r) {
             return r.read([](TextRunner& t) { return t.generated_tokens(); });
           })
      .def_property_readonly("metadata", [](PyTextRunner& r) {
             const auto& md = r.runner().metadata();
             py::dict d;
             d["max_seq_len"] = md.max_seq_len;
             d["max_context_len"] = md.max_context_len;
             d["vocab_size"] = md.vocab_size ? py::int_(*md.vocab_size) : py::object(py::none());
             d["bos_id"] = md.bos_id;
             d["eos_ids"] = md.eos_ids;
             d["use_kv_cache"] = md.use_kv_cache;
             d["use_sdpa_with_kv_cache"] = md.use_sdpa_with_kv_cache;
             d["enable_dynamic_shape"] = md.enable_dynamic_shape;
             return d;
           })
      .def("encode", [](PyTextRunner& r, const std::string& text, int bos, int eos) {
             return r.runner().tokenizer().encode(text, bos, eos);
           }, py::arg("text"), py::arg("bos") = 0, py::arg("eos") = 0)
      .def("decode", [](PyTextRunner& r, const std::vector<uint64_t>& ids) {
             return etrt::python::message_to_python(r.runner().tokenizer().decode(ids));
           }, py::arg("ids"))
      .def("__repr__", [](PyTextRunner& r) {
             const auto& md = r.runner().metadata();
             return "<TextLLMRunner max_context_len=" + std::to_string(md.max_context_len) +
                    " position=" + std::to_string(r.read([](TextRunner& t) { return t.position(); })) +
                    " loaded=" + (r.read([](TextRunner& t) { return t.is_loaded(); }) ? "True" : "False") + ">";
           });

  etrt::python::define_runtime_functions(m);
}
