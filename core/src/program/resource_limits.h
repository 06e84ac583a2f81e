// How much memory a program may make etrt commit to, read once from the
// environment (secure_getenv: ignored in setuid/setgid processes).
//
//   ETRT_MAX_PLANNED_MEMORY  bytes of planned memory one method may use (default 32G)
//   ETRT_MAX_FILE_SIZE       bytes of a .pte or .ptd file etrt reads (default 16G)
//
// Values take a K, M, G or T suffix (powers of 1024). A malformed value is
// reported once and the default applies.
#pragma once

#include <cstdint>
#include <string>

namespace etrt {

uint64_t planned_memory_limit();
uint64_t file_size_limit();

// "32 GiB (ETRT_MAX_PLANNED_MEMORY)": the limit and how to raise it, for error messages.
std::string planned_memory_limit_text();
std::string file_size_limit_text();

}  // namespace etrt
