// `etrt generate`: text generation with libetrt_llm's TextRunner. Streams the text as it comes,
// then prints the prefill and decode rates and the time to first token (stderr; with --json, one
// JSON object on stdout instead of the streamed text).
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "etrt/etrt.hpp"
#include "etrt/llm/text_runner.h"
#include "json_writer.h"
#include "terminal_text.h"

namespace {

using Clock = std::chrono::steady_clock;

const char* const kUsage =
    "usage: etrt generate MODEL.pte --tokenizer FILE --prompt TEXT [options]\n"
    "\n"
    "Generates text after PROMPT with an LLM program (ExecuTorch's export_llama layout) and its tokenizer\n"
    "(tokenizer.json, tiktoken, SentencePiece .model or llama2.c tokenizer.bin). The text streams to stdout as\n"
    "it comes; then prefill and decode tokens/s and the time to first token go to stderr.\n"
    "\n"
    "options:\n"
    "  --tokenizer FILE       the tokenizer (required)\n"
    "  --prompt TEXT          the prompt (required)\n"
    "  --max-new-tokens N     at most N new tokens (default: up to the context length)\n"
    "  --temperature T        0: greedy (default 0.8)\n"
    "  --top-p P              nucleus sampling mass in (0, 1] (default 1: all tokens)\n"
    "  --top-k K              keep the K most probable tokens (default 0: all)\n"
    "  --seed S               seed of the sampler (default 0), so a run repeats\n"
    "  --data FILE.ptd        weights kept outside the program (repeatable)\n"
    "  --bos N                BOS tokens before the prompt (default 0)\n"
    "  --threads N            size of the thread pool\n"
    "  --json                 print one JSON object (text, token ids, counts, timings) instead of streaming\n";

struct GenerateOptions {
  std::string model, tokenizer, prompt;
  bool has_prompt = false;
  std::vector<std::string> data_files;
  etrt::llm::GenerationConfig config;
  std::optional<size_t> threads;
  bool json = false;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "etrt generate: %s\n\n%s", etrt::tools::terminal_text(message).c_str(), kUsage);
  return 2;
}

// A whole-string number, or nullopt.
std::optional<long long> parse_integer(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE) return std::nullopt;
  return value;
}
std::optional<double> parse_real(const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || value != value) return std::nullopt;
  return value;
}

// Parses argv into `options`; returns an exit code when the command ends here (help, usage error).
std::optional<int> parse(int argc, char** argv, GenerateOptions& options) {
  options.config.echo = false;
  options.config.seed = 0;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--json") {
      options.json = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!options.model.empty()) return usage_error("unexpected argument '" + arg + "' (one MODEL.pte)");
      options.model = arg;
      continue;
    }
    if (i + 1 >= argc) return usage_error(arg + " needs a value");
    const char* value = argv[++i];
    auto integer_in = [&](long long low, long long high) -> std::optional<long long> {
      const auto n = parse_integer(value);
      if (!n || *n < low || *n > high) return std::nullopt;
      return n;
    };
    auto bad_value = [&](const char* wanted) {
      return usage_error(arg + " '" + value + "' is not " + wanted);
    };
    if (arg == "--tokenizer") {
      options.tokenizer = value;
    } else if (arg == "--prompt") {
      options.prompt = value;
      options.has_prompt = true;
    } else if (arg == "--data") {
      options.data_files.emplace_back(value);
    } else if (arg == "--max-new-tokens") {
      const auto n = integer_in(1, INT32_MAX);
      if (!n) return bad_value("a positive integer");
      options.config.max_new_tokens = static_cast<int32_t>(*n);
    } else if (arg == "--temperature") {
      const auto t = parse_real(value);
      if (!t || *t < 0) return bad_value("a number >= 0");
      options.config.temperature = static_cast<float>(*t);
    } else if (arg == "--top-p") {
      const auto p = parse_real(value);
      if (!p || *p <= 0 || *p > 1) return bad_value("a number in (0, 1]");
      options.config.top_p = static_cast<float>(*p);
    } else if (arg == "--top-k") {
      const auto k = integer_in(0, INT32_MAX);
      if (!k) return bad_value("an integer >= 0");
      options.config.top_k = static_cast<int32_t>(*k);
    } else if (arg == "--seed") {
      const auto s = parse_integer(value);
      if (!s || *s < 0) return bad_value("an integer >= 0");
      options.config.seed = static_cast<uint64_t>(*s);
    } else if (arg == "--bos") {
      const auto n = integer_in(0, 16);
      if (!n) return bad_value("an integer in [0, 16]");
      options.config.num_bos = static_cast<int32_t>(*n);
    } else if (arg == "--threads") {
      const auto n = integer_in(1, 1024);
      if (!n) return bad_value("an integer in [1, 1024]");
      options.threads = static_cast<size_t>(*n);
    } else {
      return usage_error("unknown option '" + arg + "'");
    }
  }
  if (options.model.empty()) return usage_error("no MODEL.pte given");
  if (options.tokenizer.empty()) return usage_error("--tokenizer FILE is required");
  if (!options.has_prompt) return usage_error("--prompt TEXT is required");
  return std::nullopt;
}

// While the model loads: "loading MODEL (N MB) ... 2.5 s" on stderr, refreshed in place on a
// terminal, so a large model shows it is being read; the final line says how long it took.
class LoadProgress {
 public:
  LoadProgress(const std::string& model, bool quiet) : quiet_(quiet), start_(Clock::now()) {
    if (quiet_) return;
    struct stat info{};
    const double megabytes = ::stat(model.c_str(), &info) == 0 ? static_cast<double>(info.st_size) / 1e6 : 0;
    std::snprintf(label_, sizeof label_, "loading %s (%.1f MB)", etrt::tools::terminal_text(model).c_str(), megabytes);
    std::fprintf(stderr, "%s ...", label_);
    std::fflush(stderr);
    if (isatty(STDERR_FILENO)) {
      ticker_started_ = true;
      ticker_ = std::thread([this] { tick(); });
    }
  }
  ~LoadProgress() { finish(false); }

  void finish(bool loaded) {
    if (quiet_ || finished_) return;
    finished_ = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (ticker_started_) ticker_.join();
    const char* outcome = loaded ? "loaded" : "failed";
    if (ticker_started_) {
      std::fprintf(stderr, "\r%s ... %s in %.2f s\n", label_, outcome, seconds());
    } else {
      std::fprintf(stderr, " %s in %.2f s\n", outcome, seconds());
    }
  }

 private:
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) {
      std::fprintf(stderr, "\r%s ... %.1f s", label_, seconds());
      std::fflush(stderr);
    }
  }

  bool quiet_, finished_ = false, done_ = false, ticker_started_ = false;
  Clock::time_point start_;
  char label_[512] = {};
  std::thread ticker_;
  std::mutex mutex_;
  std::condition_variable wake_;
};

// Ctrl-C ends the generation after the current token (TextRunner::stop only sets an atomic flag).
std::atomic<etrt::llm::TextRunner*> interruptible{nullptr};
extern "C" void stop_generation(int) {
  if (etrt::llm::TextRunner* runner = interruptible.load()) runner->stop();
}

double per_second(int64_t count, double seconds) { return seconds > 0 ? static_cast<double>(count) / seconds : 0; }

}  // namespace

int run_generate_command(int argc, char** argv) {
  GenerateOptions options;
  if (const auto exit_code = parse(argc, argv, options)) return *exit_code;
  try {
    if (options.threads) etrt::Runtime::get().set_num_threads(*options.threads);
    const Clock::time_point load_start = Clock::now();
    LoadProgress progress(options.model, options.json);
    auto runner = std::make_unique<etrt::llm::TextRunner>(options.model, options.tokenizer, options.data_files);
    runner->load();
    progress.finish(true);
    const double load_seconds = std::chrono::duration<double>(Clock::now() - load_start).count();

    std::string text;
    std::optional<Clock::time_point> first_token;
    // The prompt is printed with the first new token, so a refused prompt prints nothing.
    auto on_piece = [&](const std::string& piece) {
      if (!first_token) {
        first_token = Clock::now();
        if (!options.json) std::fwrite(options.prompt.data(), 1, options.prompt.size(), stdout);
      }
      text += piece;
      if (!options.json) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
    };
    interruptible = runner.get();
    auto previous_handler = std::signal(SIGINT, stop_generation);
    const Clock::time_point start = Clock::now();
    try {
      runner->generate(options.prompt, options.config, on_piece);
    } catch (...) {
      std::signal(SIGINT, previous_handler);
      interruptible = nullptr;
      throw;
    }
    const Clock::time_point end = Clock::now();
    std::signal(SIGINT, previous_handler);
    interruptible = nullptr;

    const etrt::llm::Stats& stats = runner->stats();
    const double prefill_seconds = std::chrono::duration<double>(first_token.value_or(end) - start).count();
    const double decode_seconds = std::chrono::duration<double>(end - first_token.value_or(end)).count();
    const double prefill_rate = per_second(stats.num_prompt_tokens, prefill_seconds);
    // The first token comes from the prefill; the decode steps made the others.
    const double decode_rate = per_second(stats.num_generated_tokens, decode_seconds);
    if (options.json) {
      etrt::tools::JsonWriter json;
      json.begin_object().string("model", options.model).string("prompt", options.prompt).string("text", text);
      json.begin_array("tokens");
      for (uint64_t id : runner->generated_tokens()) json.integer({}, static_cast<int64_t>(id));
      json.end_array()
          .integer("prompt_tokens", stats.num_prompt_tokens)
          .integer("generated_tokens", static_cast<int64_t>(runner->generated_tokens().size()))
          .number("time_to_first_token_ms", prefill_seconds * 1e3)
          .number("prefill_tokens_per_second", prefill_rate)
          .number("decode_tokens_per_second", decode_rate)
          .number("load_ms", load_seconds * 1e3)
          .integer("threads", static_cast<int64_t>(etrt::Runtime::get().num_threads()))
          .end_object();
      std::printf("%s\n", json.text().c_str());
    } else {
      std::printf("\n");
      std::fflush(stdout);
      std::fprintf(stderr,
                   "prompt %lld tokens, generated %zu | prefill %.1f tokens/s, decode %.1f tokens/s | "
                   "time to first token %.1f ms | load %.2f s\n",
                   static_cast<long long>(stats.num_prompt_tokens), runner->generated_tokens().size(), prefill_rate,
                   decode_rate, prefill_seconds * 1e3, load_seconds);
    }
    return 0;
  } catch (const etrt::Error& e) {
    std::fprintf(stderr, "\netrt generate: %s\n", etrt::tools::terminal_text(e.what()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\netrt generate: %s\n", etrt::tools::terminal_text(e.what()).c_str());
    return 1;
  }
}
