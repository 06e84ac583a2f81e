// NAME_fuzz_replay: runs a fuzz entry point (NAME_fuzzer.cpp) once on every
// file given, directories expanded (sorted, not recursive), with whatever
// compiler built it -- so the entry point is exercised in every build, over
// the seed corpus and the corrupt programs, and a fuzzer finding can be
// replayed without clang.
//
//   NAME_fuzz_replay [--rlimit-mb N] [--known-crashes LIST] PATH...
//
// --rlimit-mb caps the address space (RLIMIT_AS) like libFuzzer's
// -rss_limit_mb, so that a program planning gigabytes gets an allocation
// error instead of the machine's memory. AddressSanitizer builds cannot use
// RLIMIT_AS; give them ASAN_OPTIONS=max_allocation_size_mb=N:allocator_may_return_null=1.
//
// LIST names files (one base name a line, '#' comments) that still crash
// because of a reported core bug: those run in a child process, and a crash
// there is reported but not fatal. Any other crash ends the run (and fails
// the ctest); exit status 0 means every input returned.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define ETRT_REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ETRT_REPLAY_ASAN 1
#endif
#endif
#ifndef ETRT_REPLAY_ASAN
#define ETRT_REPLAY_ASAN 0
#endif

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> read_file(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::set<std::string> read_list(const std::string& path) {
  std::set<std::string> names;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(std::remove_if(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
               line.end());
    if (!line.empty()) names.insert(line);
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string program_name = std::filesystem::path(argv[0]).filename().string();
  const char* program = program_name.c_str();
  std::set<std::string> known;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--known-crashes") == 0 && i + 1 < argc) {
      known = read_list(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--rlimit-mb") == 0 && i + 1 < argc) {
      long mb = std::atol(argv[++i]);
#if ETRT_REPLAY_ASAN
      std::fprintf(stderr, "%s: AddressSanitizer build, --rlimit-mb %ld ignored (use ASAN_OPTIONS)\n", program, mb);
#else
      rlimit limit{};
      limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(mb) << 20;
      if (mb > 0 && setrlimit(RLIMIT_AS, &limit) != 0) std::perror("setrlimit");
#endif
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(argv[i], ec)) {
      std::vector<std::string> entries;
      for (const auto& entry : std::filesystem::directory_iterator(argv[i]))
        if (entry.is_regular_file()) entries.push_back(entry.path().string());
      std::sort(entries.begin(), entries.end());
      files.insert(files.end(), entries.begin(), entries.end());
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--rlimit-mb N] [--known-crashes LIST] FILE_OR_DIR...\n", program);
    return 2;
  }
  LLVMFuzzerInitialize(&argc, &argv);
  size_t ran = 0, known_crashed = 0, known_fixed = 0;
  for (const std::string& path : files) {
    bool ok = false;
    std::vector<uint8_t> bytes = read_file(path, &ok);
    if (!ok) {
      std::fprintf(stderr, "%s: cannot read %s\n", program, path.c_str());
      return 2;
    }
    std::string base = std::filesystem::path(path).filename().string();
    std::fprintf(stderr, "replay %s (%zu bytes)\n", path.c_str(), bytes.size());
    if (known.count(base) != 0) {
      std::fflush(nullptr);
      pid_t pid = fork();
      if (pid == 0) {
        LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
        _exit(0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        ++known_fixed;
        std::fprintf(stderr, "  listed as a known crash but returned normally: remove %s from the list\n", base.c_str());
      } else {
        ++known_crashed;
        std::fprintf(stderr, "  KNOWN CRASH still reproduces (%s %d): %s\n", WIFSIGNALED(status) ? "signal" : "exit",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), path.c_str());
      }
      continue;
    }
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++ran;
  }
  std::fprintf(stderr, "%s: %zu inputs returned normally; %zu known crashes still crash, %zu fixed\n", program, ran,
               known_crashed, known_fixed);
  return 0;
}
