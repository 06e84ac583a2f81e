// Pre-dlopen inspection of plugin shared objects: checks that a file can be
// loaded on this host and reads its dynamic symbol table, so mismatches get
// a precise message instead of dlopen's terse one. Every offset and size in
// the file is bounds-checked; corrupt input yields an error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace etrt::loader {

struct ElfSymbol {
  std::string name;
  bool is_function = false;  // STT_FUNC or STT_GNU_IFUNC
  bool is_gnu_unique = false;
};

struct ElfInfo {
  bool ok = false;
  std::string error;  // set when !ok; does not include the file name
  // Defined dynamic symbols with GLOBAL/WEAK/GNU_UNIQUE binding and
  // DEFAULT/PROTECTED visibility, excluding version-definition symbols.
  std::vector<ElfSymbol> exported;
  std::vector<std::string> needed;   // DT_NEEDED
  std::string soname;                // DT_SONAME or ""
  std::vector<std::string> runpath;  // DT_RUNPATH and DT_RPATH entries split on ':'

  bool has_exported(std::string_view name) const;
};

ElfInfo inspect_elf(const uint8_t* data, size_t size);
// Maps the file read-only; errors like "cannot open: No such file or directory".
ElfInfo inspect_elf_file(const std::string& path);

}  // namespace etrt::loader
