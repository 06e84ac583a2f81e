#include "loader/elf_inspect.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <unordered_set>

namespace etrt::loader {

bool ElfInfo::has_exported(std::string_view name) const {
  for (const ElfSymbol& s : exported) {
    if (s.name == name) return true;
  }
  return false;
}

namespace {

// Only the host's ELF class is parsed in full; a foreign class is rejected
// from e_ident alone.
constexpr bool kHost64 = sizeof(void*) == 8;
using Ehdr = std::conditional_t<kHost64, Elf64_Ehdr, Elf32_Ehdr>;
using Phdr = std::conditional_t<kHost64, Elf64_Phdr, Elf32_Phdr>;
using Shdr = std::conditional_t<kHost64, Elf64_Shdr, Elf32_Shdr>;
using Sym = std::conditional_t<kHost64, Elf64_Sym, Elf32_Sym>;
using Dyn = std::conditional_t<kHost64, Elf64_Dyn, Elf32_Dyn>;
using Verdef = std::conditional_t<kHost64, Elf64_Verdef, Elf32_Verdef>;
using Verdaux = std::conditional_t<kHost64, Elf64_Verdaux, Elf32_Verdaux>;
constexpr unsigned char kHostClass = kHost64 ? ELFCLASS64 : ELFCLASS32;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kHostData = ELFDATA2LSB;
#else
constexpr unsigned char kHostData = ELFDATA2MSB;
#endif

#if defined(__x86_64__)
constexpr unsigned kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kHostMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr unsigned kHostMachine = EM_386;
#elif defined(__arm__)
constexpr unsigned kHostMachine = EM_ARM;
#elif defined(__riscv)
constexpr unsigned kHostMachine = EM_RISCV;
#elif defined(__powerpc64__)
constexpr unsigned kHostMachine = EM_PPC64;
#elif defined(__s390x__)
constexpr unsigned kHostMachine = EM_S390;
#elif defined(__loongarch__)
constexpr unsigned kHostMachine = 258;  // EM_LOONGARCH
#else
constexpr unsigned kHostMachine = EM_NONE;  // unknown host: skip the check
#endif

#ifndef DF_1_PIE
#define DF_1_PIE 0x08000000
#endif

const char* machine_name(unsigned m) {
  switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "PowerPC64";
    case EM_PPC: return "PowerPC";
    case EM_S390: return "s390";
    case EM_MIPS: return "MIPS";
    case EM_SPARCV9: return "SPARC V9";
    case 258: return "LoongArch";
    default: return "an unknown machine";
  }
}

const char* type_name(unsigned t) {
  switch (t) {
    case ET_NONE: return "ET_NONE";
    case ET_REL: return "ET_REL (relocatable object)";
    case ET_EXEC: return "ET_EXEC";
    case ET_DYN: return "ET_DYN";
    case ET_CORE: return "ET_CORE (core dump)";
    default: return "unknown";
  }
}

const char* class_name(unsigned char c) { return c == ELFCLASS32 ? "32-bit" : "64-bit"; }
const char* data_name(unsigned char d) { return d == ELFDATA2LSB ? "little-endian" : "big-endian"; }

__attribute__((format(printf, 1, 2))) std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

using u64 = unsigned long long;

// A read-only byte range [offset, offset + size) of the file.
struct Range {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class Inspector {
 public:
  Inspector(const uint8_t* data, size_t size, ElfInfo* info) : data_(data), size_(size), info_(info) {}

  bool run() {
    return check_ident() && check_header() && check_segments() && read_dynamic() && read_section_table() &&
           check_dynamic_section() && read_version_names() && read_symbols();
  }
  bool run_dependencies_only() { return check_ident() && check_header() && check_segments() && read_dynamic(); }

 private:
  bool fail(std::string message) {
    info_->error = std::move(message);
    return false;
  }

  bool in_bounds(u64 offset, u64 length) const { return offset <= size_ && length <= size_ - offset; }

  // "ends at byte N" without overflowing on hostile offsets.
  static std::string end_of(u64 offset, u64 length) {
    if (length > ~0ull - offset) return format("offset %llu + size %llu (overflow)", offset, length);
    return format("byte %llu", offset + length);
  }

  template <typename T>
  T load(u64 offset) const {
    T value;
    std::memcpy(&value, data_ + offset, sizeof(T));  // unaligned-safe; caller checked bounds
    return value;
  }

  // Distribution "libfoo.so" files are sometimes ld scripts, not libraries.
  bool looks_like_text() const {
    size_t n = size_ < 64 ? size_ : 64;
    for (size_t i = 0; i < n; ++i) {
      uint8_t c = data_[i];
      if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
      if (c >= 0x7f) return false;
    }
    return true;
  }

  bool check_ident() {
    size_t n = size_ < SELFMAG ? size_ : SELFMAG;
    if (n > 0 && std::memcmp(data_, ELFMAG, n) != 0) {
      std::string bytes;
      for (size_t i = 0; i < n; ++i) bytes += format(i ? " %02x" : "%02x", data_[i]);
      std::string hint;
      if (size_ >= 8 && std::memcmp(data_, "!<arch>\n", 8) == 0) {
        hint = "; it is an ar archive (static library)";
      } else if (looks_like_text()) {
        hint = "; it looks like text, e.g. a linker script";
      }
      return fail("not an ELF file (starts with " + bytes + ", expected 7f 45 4c 46" + hint + ")");
    }
    if (size_ < EI_NIDENT) {
      return fail(format("truncated: %zu bytes, smaller than an ELF header", size_));
    }
    unsigned char cls = data_[EI_CLASS];
    if (cls != ELFCLASS32 && cls != ELFCLASS64) {
      return fail(format("invalid ELF class byte %u (expected 1 for 32-bit or 2 for 64-bit)", cls));
    }
    if (cls != kHostClass) {
      info_->foreign = true;
      return fail(format("ELF class is %s, this host needs %s", class_name(cls), class_name(kHostClass)));
    }
    unsigned char order = data_[EI_DATA];
    if (order != ELFDATA2LSB && order != ELFDATA2MSB) {
      return fail(format("invalid ELF data encoding byte %u (expected 1 or 2)", order));
    }
    if (order != kHostData) {
      info_->foreign = true;
      return fail(format("byte order is %s, this host is %s", data_name(order), data_name(kHostData)));
    }
    if (data_[EI_VERSION] != EV_CURRENT) {
      return fail(format("unsupported ELF version %u, expected %u", data_[EI_VERSION], EV_CURRENT));
    }
    return true;
  }

  bool check_header() {
    if (size_ < sizeof(Ehdr)) {
      return fail(format("truncated: %zu bytes, smaller than an ELF header (%zu bytes)", size_, sizeof(Ehdr)));
    }
    eh_ = load<Ehdr>(0);
    if (kHostMachine != EM_NONE && eh_.e_machine != kHostMachine) {
      info_->foreign = true;
      return fail(format("built for %s (e_machine %u), this host is %s (e_machine %u)", machine_name(eh_.e_machine),
                         unsigned{eh_.e_machine}, machine_name(kHostMachine), kHostMachine));
    }
    if (eh_.e_type != ET_DYN) {
      return fail(format("not a shared object (e_type %s, expected ET_DYN)", type_name(eh_.e_type)));
    }
    return true;
  }

  bool check_segments() {
    if (eh_.e_phnum == 0) return fail("no program headers; not a loadable object");
    if (eh_.e_phentsize != sizeof(Phdr)) {
      return fail(format("corrupt: program header entry size is %u, expected %zu", unsigned{eh_.e_phentsize},
                         sizeof(Phdr)));
    }
    u64 table_size = u64{eh_.e_phnum} * sizeof(Phdr);
    if (!in_bounds(eh_.e_phoff, table_size)) {
      return fail("truncated: program header table ends at " + end_of(eh_.e_phoff, table_size) +
                  format(", file has %zu bytes", size_));
    }
    bool has_load = false;
    for (unsigned i = 0; i < eh_.e_phnum; ++i) {
      Phdr ph = load<Phdr>(eh_.e_phoff + u64{i} * sizeof(Phdr));
      if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
      has_load |= ph.p_type == PT_LOAD;
      if (!in_bounds(ph.p_offset, ph.p_filesz)) {
        return fail(format("truncated: segment %u ends at ", i) + end_of(ph.p_offset, ph.p_filesz) +
                    format(", file has %zu bytes", size_));
      }
    }
    if (!has_load) return fail("no PT_LOAD segments; not a loadable object");
    return true;
  }

  bool read_section_table() {
    if (eh_.e_shoff == 0) return fail("no section headers; cannot read the dynamic symbol table");
    if (eh_.e_shentsize != sizeof(Shdr)) {
      return fail(format("corrupt: section header entry size is %u, expected %zu", unsigned{eh_.e_shentsize},
                         sizeof(Shdr)));
    }
    if (!in_bounds(eh_.e_shoff, sizeof(Shdr))) {
      return fail(format("truncated: section header table at offset %llu is past the end of the file (%zu bytes)",
                         u64{eh_.e_shoff}, size_));
    }
    u64 count = eh_.e_shnum;
    if (count == 0) count = load<Shdr>(eh_.e_shoff).sh_size;  // extended numbering (>= SHN_LORESERVE)
    if (count == 0) return fail("no section headers; cannot read the dynamic symbol table");
    if (count > size_ / sizeof(Shdr) || !in_bounds(eh_.e_shoff, count * sizeof(Shdr))) {
      return fail(format("truncated: section header table (%llu entries at offset %llu) extends past the end of "
                         "the file (%zu bytes)",
                         count, u64{eh_.e_shoff}, size_));
    }
    shnum_ = count;
    for (u64 i = 0; i < shnum_; ++i) {
      Shdr sh = section(i);
      if (sh.sh_type == SHT_DYNSYM && dynsym_index_ == 0) dynsym_index_ = i;
      if (sh.sh_type == SHT_DYNAMIC && dynamic_index_ == 0) dynamic_index_ = i;
      if (sh.sh_type == SHT_GNU_verdef && verdef_index_ == 0) verdef_index_ = i;
    }
    return true;
  }

  // The loader reads the dynamic segment, not this section; a section table that
  // places it outside the file is still a corrupt file.
  bool check_dynamic_section() {
    Range unused;
    return dynamic_index_ == 0 || section_range(dynamic_index_, ".dynamic", &unused);
  }

  Shdr section(u64 index) const { return load<Shdr>(eh_.e_shoff + index * sizeof(Shdr)); }

  // Bounds-checked contents of section `index`, called `what` in messages.
  bool section_range(u64 index, const char* what, Range* out) {
    Shdr sh = section(index);
    if (sh.sh_type == SHT_NOBITS) return fail(format("corrupt: %s section has no file contents", what));
    if (!in_bounds(sh.sh_offset, sh.sh_size)) {
      return fail(format("truncated: %s section (offset %llu, size %llu) ends at ", what, u64{sh.sh_offset},
                         u64{sh.sh_size}) +
                  end_of(sh.sh_offset, sh.sh_size) + format(", file has %zu bytes", size_));
    }
    out->data = data_ + sh.sh_offset;
    out->size = sh.sh_size;
    return true;
  }

  // The string table that section `index` links to through sh_link.
  bool linked_strtab(u64 index, const char* owner, Range* out) {
    u64 link = section(index).sh_link;
    if (link == 0 || link >= shnum_) {
      return fail(format("corrupt: %s section links to string table section %llu, but there are %llu sections",
                         owner, link, shnum_));
    }
    if (section(link).sh_type != SHT_STRTAB) {
      return fail(format("corrupt: %s section links to section %llu, which is not a string table", owner, link));
    }
    return section_range(link, ".dynstr", out);
  }

  bool string_at(const Range& strtab, u64 offset, const char* what, std::string* out) {
    if (offset >= strtab.size) {
      return fail(format("corrupt: %s name offset %llu is outside .dynstr (%zu bytes)", what, offset, strtab.size));
    }
    const void* nul = std::memchr(strtab.data + offset, '\0', strtab.size - offset);
    if (!nul) return fail(format("corrupt: %s name at .dynstr offset %llu is not NUL-terminated", what, offset));
    out->assign(reinterpret_cast<const char*>(strtab.data + offset),
                static_cast<const uint8_t*>(nul) - (strtab.data + offset));
    return true;
  }

  // The file range holding the `size` bytes at virtual address `address`, found through the
  // PT_LOAD segment that maps it (the dynamic segment gives addresses, not offsets).
  bool range_at_address(u64 address, u64 size, const char* what, Range* out) {
    for (unsigned i = 0; i < eh_.e_phnum; ++i) {
      Phdr ph = load<Phdr>(eh_.e_phoff + u64{i} * sizeof(Phdr));
      if (ph.p_type != PT_LOAD || address < ph.p_vaddr || address - ph.p_vaddr >= ph.p_filesz) continue;
      u64 skip = address - ph.p_vaddr;
      if (size > ph.p_filesz - skip)
        return fail(format("corrupt: %s (address 0x%llx, %llu bytes) extends past the segment that maps it", what,
                           address, size));
      out->data = data_ + ph.p_offset + skip;  // in bounds: check_segments checked the segment
      out->size = static_cast<size_t>(size);
      return true;
    }
    return fail(format("corrupt: %s address 0x%llx is not in any loaded segment", what, address));
  }

  // The dynamic segment, read as the dynamic loader reads it: what the library
  // needs, its soname and search paths (the section table may say otherwise).
  bool read_dynamic() {
    const Phdr* dynamic = nullptr;
    Phdr found{};
    for (unsigned i = 0; i < eh_.e_phnum && dynamic == nullptr; ++i) {
      found = load<Phdr>(eh_.e_phoff + u64{i} * sizeof(Phdr));
      if (found.p_type == PT_DYNAMIC) dynamic = &found;
    }
    if (dynamic == nullptr) return true;  // nothing needed, no soname
    u64 strtab_address = 0, strtab_size = 0;
    bool has_strtab = false;
    std::vector<std::pair<decltype(Dyn{}.d_tag), u64>> strings;  // tag, offset in the string table
    size_t count = static_cast<size_t>(dynamic->p_filesz / sizeof(Dyn));
    for (size_t i = 0; i < count; ++i) {
      Dyn d;
      std::memcpy(&d, data_ + dynamic->p_offset + i * sizeof(Dyn), sizeof d);
      if (d.d_tag == DT_NULL) break;
      switch (d.d_tag) {
        case DT_STRTAB: strtab_address = d.d_un.d_ptr, has_strtab = true; break;
        case DT_STRSZ: strtab_size = d.d_un.d_val; break;
        case DT_NEEDED:
        case DT_SONAME:
        case DT_RPATH:
        case DT_RUNPATH: strings.emplace_back(d.d_tag, d.d_un.d_val); break;
        case DT_FLAGS_1:
          // glibc refuses to dlopen position-independent executables.
          if (d.d_un.d_val & DF_1_PIE) return fail("a position-independent executable (DF_1_PIE), not a shared object");
          info_->no_default_libraries = (d.d_un.d_val & DF_1_NODEFLIB) != 0;
          break;
        default: break;
      }
    }
    if (strings.empty()) return true;
    if (!has_strtab) return fail("corrupt: the dynamic segment names libraries but has no string table (DT_STRTAB)");
    Range strtab;
    if (!range_at_address(strtab_address, strtab_size, ".dynstr", &strtab)) return false;
    for (const auto& [tag, offset] : strings) {
      const char* what = tag == DT_NEEDED ? "DT_NEEDED" : tag == DT_SONAME ? "DT_SONAME" : tag == DT_RPATH ? "DT_RPATH"
                                                                                                       : "DT_RUNPATH";
      std::string text;
      if (!string_at(strtab, offset, what, &text)) return false;
      if (tag == DT_NEEDED) info_->needed.push_back(std::move(text));
      else if (tag == DT_SONAME) info_->soname = std::move(text);
      else if (tag == DT_RPATH) info_->has_rpath = true, info_->rpath = std::move(text);
      else info_->has_runpath = true, info_->runpath = std::move(text);
    }
    return true;
  }

  // Names of version definitions: the linker also emits them as SHN_ABS
  // symbols with value 0, which are not real exports.
  bool read_version_names() {
    if (verdef_index_ == 0) return true;
    Range vd, strtab;
    if (!section_range(verdef_index_, ".gnu.version_d", &vd) ||
        !linked_strtab(verdef_index_, ".gnu.version_d", &strtab)) {
      return false;
    }
    u64 entries = section(verdef_index_).sh_info;
    u64 offset = 0;
    for (u64 i = 0; i < entries; ++i) {
      if (offset > vd.size || vd.size - offset < sizeof(Verdef)) {
        return fail("corrupt: .gnu.version_d entry extends past the end of the section");
      }
      Verdef def;
      std::memcpy(&def, vd.data + offset, sizeof def);
      if (def.vd_cnt > 0) {
        u64 aux = offset + def.vd_aux;
        if (aux > vd.size || vd.size - aux < sizeof(Verdaux)) {
          return fail("corrupt: .gnu.version_d auxiliary entry extends past the end of the section");
        }
        Verdaux da;
        std::memcpy(&da, vd.data + aux, sizeof da);
        std::string name;
        if (!string_at(strtab, da.vda_name, "version definition", &name)) return false;
        version_names_.insert(std::move(name));
      }
      if (def.vd_next == 0) break;
      offset += def.vd_next;
    }
    return true;
  }

  bool read_symbols() {
    if (dynsym_index_ == 0) return true;  // no dynamic symbols: nothing exported
    Range syms, strtab;
    if (!section_range(dynsym_index_, ".dynsym", &syms) || !linked_strtab(dynsym_index_, ".dynsym", &strtab)) {
      return false;
    }
    u64 entsize = section(dynsym_index_).sh_entsize;
    if (entsize != 0 && entsize != sizeof(Sym)) {
      return fail(format("corrupt: .dynsym entry size is %llu, expected %zu", entsize, sizeof(Sym)));
    }
    if (syms.size % sizeof(Sym) != 0) {
      return fail(format("corrupt: .dynsym size %zu is not a multiple of the entry size %zu", syms.size, sizeof(Sym)));
    }
    size_t count = syms.size / sizeof(Sym);
    for (size_t i = 1; i < count; ++i) {  // entry 0 is the reserved null symbol
      Sym s;
      std::memcpy(&s, syms.data + i * sizeof(Sym), sizeof s);
      unsigned bind = s.st_info >> 4, type = s.st_info & 0xf, visibility = s.st_other & 0x3;
      if (s.st_shndx == SHN_UNDEF) continue;
      if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
      if (visibility != STV_DEFAULT && visibility != STV_PROTECTED) continue;
      ElfSymbol sym;
      if (!string_at(strtab, s.st_name, "symbol", &sym.name)) return false;
      if (sym.name.empty()) continue;
      if (s.st_shndx == SHN_ABS && s.st_value == 0 && version_names_.count(sym.name)) continue;
      sym.is_function = type == STT_FUNC || type == STT_GNU_IFUNC;
      sym.is_gnu_unique = bind == STB_GNU_UNIQUE;
      info_->exported.push_back(std::move(sym));
    }
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  ElfInfo* info_;
  Ehdr eh_{};
  u64 shnum_ = 0;
  u64 dynsym_index_ = 0, dynamic_index_ = 0, verdef_index_ = 0;
  std::unordered_set<std::string> version_names_;
};

}  // namespace

namespace {

ElfInfo inspect_with(bool (Inspector::*steps)(), const uint8_t* data, size_t size) {
  ElfInfo info;
  try {
    Inspector inspector(data, size, &info);
    if ((inspector.*steps)()) {
      info.ok = true;
    } else {
      ElfInfo failed;
      failed.error = std::move(info.error);
      failed.foreign = info.foreign;
      info = std::move(failed);
    }
  } catch (...) {
    // Only allocation can throw; building the message may fail as well.
    info = ElfInfo{};
    try {
      info.error = "out of memory while reading the ELF file";
    } catch (...) {
    }
  }
  return info;
}

}  // namespace

ElfInfo inspect_elf(const uint8_t* data, size_t size) { return inspect_with(&Inspector::run, data, size); }

ElfInfo inspect_elf_dependencies(const uint8_t* data, size_t size) {
  return inspect_with(&Inspector::run_dependencies_only, data, size);
}

ElfInfo inspect_elf_file(const std::string& path) {
  ElfInfo info;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; S_ISREG below refuses it.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      info.error = std::string("cannot open: ") + std::strerror(errno);
      return info;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      info.error = std::string("cannot stat: ") + std::strerror(errno);
      ::close(fd);
      return info;
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      info.error = "not a regular file";
      return info;
    }
    size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) {
      ::close(fd);
      return inspect_elf(nullptr, 0);
    }
    // Mapping avoids copying large plugins; like dlopen itself, this assumes
    // the file is not truncated while we read it.
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    ::close(fd);
    if (map == MAP_FAILED) {
      info.error = std::string("cannot map: ") + std::strerror(map_errno);
      return info;
    }
    info = inspect_elf(static_cast<const uint8_t*>(map), size);
    ::munmap(map, size);
  } catch (...) {
    info = ElfInfo{};
    try {
      info.error = "out of memory while reading the ELF file";
    } catch (...) {
    }
  }
  return info;
}

}  // namespace etrt::loader
