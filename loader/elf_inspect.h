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
  // Built for another class, byte order or machine: the dynamic loader passes
  // over such a file while searching for a library (set with !ok).
  bool foreign = false;
  // Defined dynamic symbols with GLOBAL/WEAK/GNU_UNIQUE binding and
  // DEFAULT/PROTECTED visibility, excluding version-definition symbols.
  std::vector<ElfSymbol> exported;
  // What the dynamic loader reads to bring in the libraries this one needs,
  // from the PT_DYNAMIC segment as the loader reads it (not the section table).
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string soname;               // DT_SONAME or ""
  bool has_rpath = false, has_runpath = false;
  std::string rpath, runpath;       // DT_RPATH, DT_RUNPATH: ':'-separated, as written
  bool no_default_libraries = false;  // DF_1_NODEFLIB: no ld.so.cache, no default directories

  bool has_exported(std::string_view name) const;
};

ElfInfo inspect_elf(const uint8_t* data, size_t size);
// Maps the file read-only; errors like "cannot open: No such file or directory".
ElfInfo inspect_elf_file(const std::string& path);

// Only what the dynamic loader needs to load the file as a dependency: the
// header (class, machine, type), the segments and the dynamic segment. Needs no
// section table and no symbols; `exported` stays empty.
ElfInfo inspect_elf_dependencies(const uint8_t* data, size_t size);

}  // namespace etrt::loader
