#include "loader/elf_inspect.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace etrt::loader {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

static_assert(sizeof(void*) == 8, "these tests craft 64-bit ELF images");

// ---------------------------------------------------------------------------
// Helpers

std::string find_libc_path() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("/libc.so") != std::string::npos) {
          *static_cast<std::string*>(out) = name;
          return 1;
        }
        return 0;
      },
      &path);
  return path;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

ElfInfo inspect(const Bytes& b) { return inspect_elf(b.data(), b.size()); }

template <typename T>
T get(const Bytes& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

template <typename T>
void put(Bytes* b, size_t off, T v) {
  std::memcpy(b->data() + off, &v, sizeof v);
}

Elf64_Ehdr header(const Bytes& b) { return get<Elf64_Ehdr>(b, 0); }

// Offset of the first section header of `type`, or 0.
size_t section_header_offset(const Bytes& b, uint32_t type) {
  Elf64_Ehdr eh = header(b);
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    size_t off = eh.e_shoff + i * sizeof(Elf64_Shdr);
    if (get<Elf64_Shdr>(b, off).sh_type == type) return off;
  }
  return 0;
}

// A small, hand-assembled shared object with every kind of dynamic symbol
// the filter distinguishes, a .dynamic section and version definitions.
struct SyntheticElf {
  Bytes bytes;
  size_t dynstr_shdr = 0, dynsym_shdr = 0, dynamic_shdr = 0, verdef_shdr = 0;
  size_t dynamic_offset = 0;
};

SyntheticElf build_synthetic() {
  SyntheticElf out;
  std::string strtab(1, '\0');
  auto add_str = [&](const std::string& s) {
    uint32_t off = static_cast<uint32_t>(strtab.size());
    strtab += s;
    strtab.push_back('\0');
    return off;
  };

  struct SymSpec {
    const char* name;
    unsigned bind, type, visibility;
    uint16_t shndx;
    uint64_t value;
  };
  const SymSpec specs[] = {
      {"visible_fn", STB_GLOBAL, STT_FUNC, STV_DEFAULT, 5, 0x1000},
      {"weak_obj", STB_WEAK, STT_OBJECT, STV_DEFAULT, 5, 0x1010},
      {"unique_obj", STB_GNU_UNIQUE, STT_OBJECT, STV_DEFAULT, 5, 0x1020},
      {"ifunc_sym", STB_GLOBAL, STT_GNU_IFUNC, STV_PROTECTED, 5, 0x1030},
      {"hidden_fn", STB_GLOBAL, STT_FUNC, STV_HIDDEN, 5, 0x1040},
      {"internal_fn", STB_GLOBAL, STT_FUNC, STV_INTERNAL, 5, 0x1048},
      {"local_fn", STB_LOCAL, STT_FUNC, STV_DEFAULT, 5, 0x1050},
      {"undefined_fn", STB_GLOBAL, STT_FUNC, STV_DEFAULT, SHN_UNDEF, 0},
      {"MYLIB_1.0", STB_GLOBAL, STT_OBJECT, STV_DEFAULT, SHN_ABS, 0},
      {"abs_not_version", STB_GLOBAL, STT_OBJECT, STV_DEFAULT, SHN_ABS, 0},
  };
  std::vector<Elf64_Sym> syms(1);  // index 0: null symbol
  for (const SymSpec& s : specs) {
    Elf64_Sym sym{};
    sym.st_name = add_str(s.name);
    sym.st_info = static_cast<unsigned char>((s.bind << 4) | s.type);
    sym.st_other = static_cast<unsigned char>(s.visibility);
    sym.st_shndx = s.shndx;
    sym.st_value = s.value;
    syms.push_back(sym);
  }
  std::vector<Elf64_Dyn> dyn = {
      {DT_NEEDED, {add_str("libfoo.so.1")}},
      {DT_NEEDED, {add_str("libbar.so")}},
      {DT_SONAME, {add_str("libsynth.so")}},
      {DT_RUNPATH, {add_str("$ORIGIN:/opt/lib")}},
      {DT_RPATH, {add_str("/old::/older")}},
      {DT_FLAGS_1, {DF_1_NOW}},
      {DT_STRTAB, {0}},  // the string table's address, filled in below
      {DT_STRSZ, {0}},
      {DT_NULL, {0}},
  };
  uint32_t base_name = add_str("libsynth.so");
  uint32_t version_name = static_cast<uint32_t>(strtab.find("MYLIB_1.0"));

  // Two version definitions, each with one auxiliary entry placed right after it.
  Bytes verdef;
  for (int i = 0; i < 2; ++i) {
    Elf64_Verdef vd{};
    vd.vd_version = 1;
    vd.vd_flags = i == 0 ? VER_FLG_BASE : 0;
    vd.vd_ndx = static_cast<uint16_t>(i + 1);
    vd.vd_cnt = 1;
    vd.vd_aux = sizeof(Elf64_Verdef);
    vd.vd_next = i == 0 ? sizeof(Elf64_Verdef) + sizeof(Elf64_Verdaux) : 0;
    Elf64_Verdaux va{};
    va.vda_name = i == 0 ? base_name : version_name;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&vd);
    verdef.insert(verdef.end(), p, p + sizeof vd);
    p = reinterpret_cast<const uint8_t*>(&va);
    verdef.insert(verdef.end(), p, p + sizeof va);
  }

  Bytes& b = out.bytes;
  auto align8 = [&] { b.resize((b.size() + 7) & ~size_t{7}); };
  auto append = [&](const void* data, size_t n) {
    align8();
    size_t off = b.size();
    const uint8_t* p = static_cast<const uint8_t*>(data);
    b.insert(b.end(), p, p + n);
    return off;
  };
  b.resize(sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr));
  size_t strtab_off = append(strtab.data(), strtab.size());
  dyn[6].d_un.d_ptr = strtab_off;  // one segment maps the file at address 0: addresses are offsets
  dyn[7].d_un.d_val = strtab.size();
  size_t dynsym_off = append(syms.data(), syms.size() * sizeof(Elf64_Sym));
  size_t dynamic_off = append(dyn.data(), dyn.size() * sizeof(Elf64_Dyn));
  size_t verdef_off = append(verdef.data(), verdef.size());
  out.dynamic_offset = dynamic_off;

  std::vector<Elf64_Shdr> sh(6);
  sh[1].sh_type = SHT_STRTAB;
  sh[1].sh_offset = strtab_off;
  sh[1].sh_size = strtab.size();
  sh[2].sh_type = SHT_DYNSYM;
  sh[2].sh_offset = dynsym_off;
  sh[2].sh_size = syms.size() * sizeof(Elf64_Sym);
  sh[2].sh_entsize = sizeof(Elf64_Sym);
  sh[2].sh_link = 1;
  sh[3].sh_type = SHT_DYNAMIC;
  sh[3].sh_offset = dynamic_off;
  sh[3].sh_size = dyn.size() * sizeof(Elf64_Dyn);
  sh[3].sh_entsize = sizeof(Elf64_Dyn);
  sh[3].sh_link = 1;
  sh[4].sh_type = SHT_GNU_verdef;
  sh[4].sh_offset = verdef_off;
  sh[4].sh_size = verdef.size();
  sh[4].sh_link = 1;
  sh[4].sh_info = 2;
  sh[5].sh_type = SHT_PROGBITS;  // stands in for .text
  sh[5].sh_offset = 0;
  sh[5].sh_size = 0;
  size_t shoff = append(sh.data(), sh.size() * sizeof(Elf64_Shdr));
  out.dynstr_shdr = shoff + 1 * sizeof(Elf64_Shdr);
  out.dynsym_shdr = shoff + 2 * sizeof(Elf64_Shdr);
  out.dynamic_shdr = shoff + 3 * sizeof(Elf64_Shdr);
  out.verdef_shdr = shoff + 4 * sizeof(Elf64_Shdr);

  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
#if defined(__x86_64__)
  eh.e_machine = EM_X86_64;
#elif defined(__aarch64__)
  eh.e_machine = EM_AARCH64;
#endif
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_shoff = shoff;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 2;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = static_cast<uint16_t>(sh.size());
  put(&b, 0, eh);

  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R;
  load.p_offset = 0;
  load.p_filesz = load.p_memsz = b.size();
  load.p_align = 0x1000;
  Elf64_Phdr dynamic{};
  dynamic.p_type = PT_DYNAMIC;
  dynamic.p_flags = PF_R | PF_W;
  dynamic.p_offset = dynamic.p_vaddr = dynamic_off;
  dynamic.p_filesz = dynamic.p_memsz = dyn.size() * sizeof(Elf64_Dyn);
  put(&b, sizeof(Elf64_Ehdr), load);
  put(&b, sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), dynamic);
  return out;
}

std::vector<std::string> names(const ElfInfo& info) {
  std::vector<std::string> out;
  for (const ElfSymbol& s : info.exported) out.push_back(s.name);
  return out;
}

const ElfSymbol* find_symbol(const ElfInfo& info, const std::string& name) {
  for (const ElfSymbol& s : info.exported) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void expect_error(const Bytes& b, const std::string& fragment) {
  ElfInfo info = inspect(b);
  EXPECT_FALSE(info.ok);
  EXPECT_THAT(info.error, HasSubstr(fragment));
  EXPECT_TRUE(info.exported.empty());
}

// ---------------------------------------------------------------------------
// The real C library

class RealLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = find_libc_path();
    ASSERT_FALSE(path_.empty()) << "libc not found among loaded objects";
    bytes_ = read_file(path_);
    ASSERT_GT(bytes_.size(), 4096u);
  }
  std::string path_;
  Bytes bytes_;
};

TEST_F(RealLibraryTest, InspectsTheCLibrary) {
  ElfInfo info = inspect_elf_file(path_);
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_TRUE(info.error.empty());
  EXPECT_TRUE(info.has_exported("malloc"));
  EXPECT_TRUE(info.has_exported("printf"));
  EXPECT_FALSE(info.has_exported("definitely_not_a_libc_symbol"));
  const ElfSymbol* malloc_sym = find_symbol(info, "malloc");
  ASSERT_NE(malloc_sym, nullptr);
  EXPECT_TRUE(malloc_sym->is_function);
  const ElfSymbol* environ_sym = find_symbol(info, "environ");
  ASSERT_NE(environ_sym, nullptr);
  EXPECT_FALSE(environ_sym->is_function);
  EXPECT_THAT(info.soname, HasSubstr("libc.so"));
  // Version nodes such as GLIBC_2.2.5 appear in .dynsym as SHN_ABS symbols.
  for (const ElfSymbol& s : info.exported) EXPECT_NE(s.name.rfind("GLIBC_", 0), 0u) << s.name;
  // Imports (undefined symbols) are not exports.
  EXPECT_FALSE(info.has_exported("_dl_argv"));
  ASSERT_FALSE(info.needed.empty());
  EXPECT_THAT(info.needed[0], HasSubstr("ld-linux"));

  // The in-memory and file entry points agree.
  ElfInfo from_bytes = inspect(bytes_);
  ASSERT_TRUE(from_bytes.ok) << from_bytes.error;
  EXPECT_EQ(names(from_bytes), names(info));
}

TEST_F(RealLibraryTest, NotElf) {
  std::string script = "#!/bin/sh\necho hello\n";
  expect_error(Bytes(script.begin(), script.end()), "not an ELF file (starts with 23 21 2f 62");
  expect_error(Bytes(script.begin(), script.end()), "looks like text");
  expect_error(Bytes{'M', 'Z'}, "not an ELF file (starts with 4d 5a");
  std::string archive = "!<arch>\n/               0           0     0     0       4         `\n";
  expect_error(Bytes(archive.begin(), archive.end()), "ar archive (static library)");
  expect_error(Bytes{0x7f, 'E', 'L', 'G', 0, 0}, "not an ELF file (starts with 7f 45 4c 47");
}

TEST_F(RealLibraryTest, SmallerThanHeader) {
  expect_error(Bytes(bytes_.begin(), bytes_.begin() + 12), "truncated: 12 bytes, smaller than an ELF header");
  expect_error(Bytes(bytes_.begin(), bytes_.begin() + 40), "truncated: 40 bytes, smaller than an ELF header");
  expect_error(Bytes(), "truncated: 0 bytes");
  expect_error(Bytes(bytes_.begin(), bytes_.begin() + 3), "truncated: 3 bytes");
}

TEST_F(RealLibraryTest, ThirtyTwoBitClass) {
  // Only e_ident matters for the class check: a bare 52-byte Elf32 header.
  Bytes b(sizeof(Elf32_Ehdr), 0);
  std::memcpy(b.data(), ELFMAG, SELFMAG);
  b[EI_CLASS] = ELFCLASS32;
  b[EI_DATA] = ELFDATA2LSB;
  b[EI_VERSION] = EV_CURRENT;
  put<uint16_t>(&b, offsetof(Elf32_Ehdr, e_type), ET_DYN);
  put<uint16_t>(&b, offsetof(Elf32_Ehdr, e_machine), EM_386);
  expect_error(b, "ELF class is 32-bit, this host needs 64-bit");

  b[EI_CLASS] = 9;
  expect_error(b, "invalid ELF class byte 9");
}

TEST_F(RealLibraryTest, ByteOrderAndVersion) {
  Bytes b = bytes_;
  b[EI_DATA] = ELFDATA2MSB;
  expect_error(b, "byte order is big-endian, this host is little-endian");
  b[EI_DATA] = 0;
  expect_error(b, "invalid ELF data encoding");
  b = bytes_;
  b[EI_VERSION] = 2;
  expect_error(b, "unsupported ELF version 2, expected 1");
}

TEST_F(RealLibraryTest, WrongMachine) {
  Bytes b = bytes_;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_AARCH64);
#if defined(__x86_64__)
  expect_error(b, "built for AArch64 (e_machine 183), this host is x86-64 (e_machine 62)");
#elif defined(__aarch64__)
  ASSERT_TRUE(inspect_elf(b.data(), b.size()).ok);  // the host's own machine
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_X86_64);
  expect_error(b, "built for x86-64 (e_machine 62), this host is AArch64 (e_machine 183)");
#endif
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_RISCV);
  expect_error(b, "built for RISC-V (e_machine 243)");
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_S390);
  expect_error(b, "built for s390");
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_PPC64);
  expect_error(b, "built for PowerPC64");
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_ARM);
  expect_error(b, "built for ARM (e_machine 40)");
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), 0x1234);
  expect_error(b, "(e_machine 4660)");
}

TEST_F(RealLibraryTest, WrongType) {
  Bytes b = bytes_;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_type), ET_EXEC);
  expect_error(b, "not a shared object (e_type ET_EXEC");
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_type), ET_REL);
  expect_error(b, "not a shared object (e_type ET_REL");
}

TEST_F(RealLibraryTest, TruncatedCopies) {
  Bytes half(bytes_.begin(), bytes_.begin() + static_cast<long>(bytes_.size() / 2));
  ElfInfo info = inspect(half);
  EXPECT_FALSE(info.ok);
  EXPECT_THAT(info.error, HasSubstr("truncated: segment "));
  EXPECT_THAT(info.error, HasSubstr("file has " + std::to_string(half.size()) + " bytes"));

  expect_error(Bytes(bytes_.begin(), bytes_.begin() + 100), "truncated: program header table ends at byte");
  expect_error(Bytes(bytes_.begin(), bytes_.begin() + 100), "file has 100 bytes");
}

TEST_F(RealLibraryTest, SectionHeadersPastTheEnd) {
  Bytes b = bytes_;
  put<uint64_t>(&b, offsetof(Elf64_Ehdr, e_shoff), b.size() + 4096);
  expect_error(b, "section header table at offset");
  expect_error(b, "past the end of the file");

  // The table starts inside the file but its last entries do not fit.
  b = bytes_;
  put<uint64_t>(&b, offsetof(Elf64_Ehdr, e_shoff), b.size() - sizeof(Elf64_Shdr));
  expect_error(b, "truncated: section header table");

  b = bytes_;
  put<uint64_t>(&b, offsetof(Elf64_Ehdr, e_shoff), ~0ull - 8);  // overflow bait
  expect_error(b, "section header table");

  b = bytes_;
  put<uint64_t>(&b, offsetof(Elf64_Ehdr, e_shoff), 0);
  expect_error(b, "no section headers; cannot read the dynamic symbol table");

  b = bytes_;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_shentsize), 32);
  expect_error(b, "section header entry size is 32, expected 64");
}

TEST_F(RealLibraryTest, CorruptSections) {
  size_t dynsym = section_header_offset(bytes_, SHT_DYNSYM);
  ASSERT_NE(dynsym, 0u);
  Bytes b = bytes_;
  put<uint64_t>(&b, dynsym + offsetof(Elf64_Shdr, sh_offset), b.size() - 8);
  expect_error(b, "truncated: .dynsym section");

  b = bytes_;
  put<uint64_t>(&b, dynsym + offsetof(Elf64_Shdr, sh_size), ~0ull);
  expect_error(b, ".dynsym section");

  b = bytes_;
  put<uint32_t>(&b, dynsym + offsetof(Elf64_Shdr, sh_link), 60000);
  expect_error(b, "corrupt: .dynsym section links to string table section 60000");

  size_t dynamic = section_header_offset(bytes_, SHT_DYNAMIC);
  ASSERT_NE(dynamic, 0u);
  b = bytes_;
  put<uint64_t>(&b, dynamic + offsetof(Elf64_Shdr, sh_offset), b.size());
  expect_error(b, "truncated: .dynamic section");

  // Shrink .dynstr so that names fall outside it.
  uint32_t link = get<Elf64_Shdr>(bytes_, dynsym).sh_link;
  size_t dynstr = header(bytes_).e_shoff + link * sizeof(Elf64_Shdr);
  b = bytes_;
  put<uint64_t>(&b, dynstr + offsetof(Elf64_Shdr, sh_size), 1);
  expect_error(b, "outside .dynstr (1 bytes)");
  b = bytes_;
  put<uint64_t>(&b, dynstr + offsetof(Elf64_Shdr, sh_offset), b.size() - 10);
  expect_error(b, "truncated: .dynstr section");
}

TEST_F(RealLibraryTest, SegmentPastTheEnd) {
  Bytes b = bytes_;
  Elf64_Ehdr eh = header(b);
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    size_t off = eh.e_phoff + i * sizeof(Elf64_Phdr);
    Elf64_Phdr ph = get<Elf64_Phdr>(b, off);
    if (ph.p_type != PT_LOAD) continue;
    ph.p_filesz = b.size() - ph.p_offset + 1;  // now ends one byte after the file
    put(&b, off, ph);
    expect_error(b, "truncated: segment " + std::to_string(i) + " ends at byte " + std::to_string(b.size() + 1) +
                        ", file has " + std::to_string(b.size()) + " bytes");
    return;
  }
  FAIL() << "no PT_LOAD segment";
}

TEST_F(RealLibraryTest, RandomMutationsNeverCrash) {
  // Mutations target the header, program headers, section headers and the
  // start of .dynsym, where the inspector actually looks.
  Elf64_Ehdr eh = header(bytes_);
  size_t dynsym = get<Elf64_Shdr>(bytes_, section_header_offset(bytes_, SHT_DYNSYM)).sh_offset;
  const size_t regions[][2] = {
      {0, sizeof(Elf64_Ehdr)},
      {eh.e_phoff, eh.e_phnum * sizeof(Elf64_Phdr)},
      {eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr)},
      {dynsym, 64 * sizeof(Elf64_Sym)},
  };
  std::mt19937 rng(4242);
  Bytes b = bytes_;
  int failures = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::vector<std::pair<size_t, uint8_t>> saved;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const auto& r = regions[rng() % 4];
      size_t pos = r[0] + rng() % r[1];
      saved.emplace_back(pos, b[pos]);
      b[pos] = (rng() % 2) ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(0xff);
    }
    ElfInfo info;
    if (iter % 100 == 0) {
      // Exact-size copy so that ASan sees any read past the truncated end.
      size_t cut = rng() % b.size();
      Bytes truncated(b.begin(), b.begin() + static_cast<long>(cut));
      info = inspect(truncated);
    } else {
      info = inspect(b);
    }
    if (!info.ok) {
      ++failures;
      EXPECT_FALSE(info.error.empty());
    }
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) b[it->first] = it->second;
  }
  EXPECT_GT(failures, 0);
  EXPECT_TRUE(inspect(b).ok);  // restored correctly
}

// ---------------------------------------------------------------------------
// Synthetic shared object

TEST(SyntheticElfTest, SymbolFiltering) {
  SyntheticElf s = build_synthetic();
  ElfInfo info = inspect(s.bytes);
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_EQ(names(info), (std::vector<std::string>{"visible_fn", "weak_obj", "unique_obj", "ifunc_sym",
                                                   "abs_not_version"}));
  EXPECT_TRUE(find_symbol(info, "visible_fn")->is_function);
  EXPECT_FALSE(find_symbol(info, "visible_fn")->is_gnu_unique);
  EXPECT_FALSE(find_symbol(info, "weak_obj")->is_function);
  EXPECT_TRUE(find_symbol(info, "unique_obj")->is_gnu_unique);
  EXPECT_TRUE(find_symbol(info, "ifunc_sym")->is_function);
  EXPECT_FALSE(info.has_exported("hidden_fn"));
  EXPECT_FALSE(info.has_exported("local_fn"));
  EXPECT_FALSE(info.has_exported("undefined_fn"));
  EXPECT_FALSE(info.has_exported("MYLIB_1.0"));
}

TEST(SyntheticElfTest, DynamicSection) {
  SyntheticElf s = build_synthetic();
  ElfInfo info = inspect(s.bytes);
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_EQ(info.needed, (std::vector<std::string>{"libfoo.so.1", "libbar.so"}));
  EXPECT_EQ(info.soname, "libsynth.so");
  EXPECT_TRUE(info.has_runpath);
  EXPECT_EQ(info.runpath, "$ORIGIN:/opt/lib");
  EXPECT_TRUE(info.has_rpath);
  EXPECT_EQ(info.rpath, "/old::/older");  // the empty entry is kept: the loader reads it as "."
  EXPECT_FALSE(info.no_default_libraries);
}

TEST(SyntheticElfTest, DependenciesComeFromTheDynamicSegmentAsTheLoaderReadsThem) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  // The section table may say anything: the dynamic loader never reads it.
  put<uint32_t>(&b, s.dynamic_shdr + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS);
  ElfInfo info = inspect_elf_dependencies(b.data(), b.size());
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_EQ(info.needed, (std::vector<std::string>{"libfoo.so.1", "libbar.so"}));
  EXPECT_EQ(info.soname, "libsynth.so");
  // Without any section table: still readable as a dependency, not as a plugin (no symbols).
  put<uint64_t>(&b, offsetof(Elf64_Ehdr, e_shoff), 0);
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_shnum), 0);
  info = inspect_elf_dependencies(b.data(), b.size());
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_EQ(info.runpath, "$ORIGIN:/opt/lib");
  EXPECT_TRUE(info.exported.empty());
  EXPECT_FALSE(inspect(b).ok);
}

TEST(SyntheticElfTest, NoDefaultLibrariesFlag) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint64_t>(&b, s.dynamic_offset + 5 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un), DF_1_NODEFLIB);
  ElfInfo info = inspect_elf_dependencies(b.data(), b.size());
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_TRUE(info.no_default_libraries);
}

TEST(SyntheticElfTest, ForeignLibraryIsMarkedSoTheSearchPassesOverIt) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_machine), EM_S390 == header(b).e_machine ? EM_X86_64 : EM_S390);
  ElfInfo info = inspect_elf_dependencies(b.data(), b.size());
  EXPECT_FALSE(info.ok);
  EXPECT_TRUE(info.foreign);
  b = s.bytes;
  b[EI_CLASS] = ELFCLASS32;
  info = inspect_elf_dependencies(b.data(), b.size());
  EXPECT_FALSE(info.ok);
  EXPECT_TRUE(info.foreign);
  b = s.bytes;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_type), ET_EXEC);  // wrong, not foreign: the loader fails on it
  info = inspect_elf_dependencies(b.data(), b.size());
  EXPECT_FALSE(info.ok);
  EXPECT_FALSE(info.foreign);
}

TEST(SyntheticElfTest, CorruptDynamicSegment) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint64_t>(&b, s.dynamic_offset + 7 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un), 1ull << 40);  // DT_STRSZ
  EXPECT_THAT(inspect_elf_dependencies(b.data(), b.size()).error,
              HasSubstr("corrupt: .dynstr (address 0x"));
  b = s.bytes;
  put<uint64_t>(&b, s.dynamic_offset + 6 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un), 1ull << 40);  // DT_STRTAB
  EXPECT_THAT(inspect_elf_dependencies(b.data(), b.size()).error, HasSubstr("is not in any loaded segment"));
  b = s.bytes;
  put<int64_t>(&b, s.dynamic_offset + 6 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_tag), DT_DEBUG);
  EXPECT_THAT(inspect_elf_dependencies(b.data(), b.size()).error, HasSubstr("has no string table (DT_STRTAB)"));
  // Mutations of the dynamic segment never crash the reader.
  std::mt19937 rng(2024);
  size_t dynamic_size = 9 * sizeof(Elf64_Dyn);
  for (int iter = 0; iter < 3000; ++iter) {
    b = s.bytes;
    for (int e = 0; e < 3; ++e) b[s.dynamic_offset + rng() % dynamic_size] = static_cast<uint8_t>(rng());
    ElfInfo info = inspect_elf_dependencies(b.data(), b.size());
    if (!info.ok) {
      EXPECT_FALSE(info.error.empty());
    }
  }
}

TEST(SyntheticElfTest, WithoutVersionDefinitionsAbsSymbolsAreKept) {
  SyntheticElf s = build_synthetic();
  put<uint32_t>(&s.bytes, s.verdef_shdr + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS);
  ElfInfo info = inspect(s.bytes);
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_TRUE(info.has_exported("MYLIB_1.0"));
}

TEST(SyntheticElfTest, CorruptDynamicEntries) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint64_t>(&b, s.dynamic_offset + offsetof(Elf64_Dyn, d_un), 1u << 30);  // first DT_NEEDED
  expect_error(b, "corrupt: DT_NEEDED name offset 1073741824 is outside .dynstr");

  // A string running to the end of .dynstr without a terminator.
  b = s.bytes;
  uint64_t strsize = get<uint64_t>(b, s.dynstr_shdr + offsetof(Elf64_Shdr, sh_size));
  put<uint64_t>(&b, s.dynstr_shdr + offsetof(Elf64_Shdr, sh_size), strsize - 1);
  expect_error(b, "is not NUL-terminated");

  b = s.bytes;
  put<uint64_t>(&b, s.dynamic_offset + 5 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un), DF_1_PIE);
  expect_error(b, "position-independent executable");
}

TEST(SyntheticElfTest, CorruptSymbolTable) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint64_t>(&b, s.dynsym_shdr + offsetof(Elf64_Shdr, sh_entsize), 16);
  expect_error(b, "corrupt: .dynsym entry size is 16, expected 24");

  b = s.bytes;
  uint64_t size = get<uint64_t>(b, s.dynsym_shdr + offsetof(Elf64_Shdr, sh_size));
  put<uint64_t>(&b, s.dynsym_shdr + offsetof(Elf64_Shdr, sh_size), size - 5);
  expect_error(b, "not a multiple of the entry size");

  b = s.bytes;
  put<uint32_t>(&b, s.dynsym_shdr + offsetof(Elf64_Shdr, sh_link), 2);  // links to itself
  expect_error(b, "which is not a string table");

  b = s.bytes;
  put<uint32_t>(&b, s.dynsym_shdr + offsetof(Elf64_Shdr, sh_type), SHT_NOBITS);
  put<uint32_t>(&b, s.dynstr_shdr + offsetof(Elf64_Shdr, sh_type), SHT_NOBITS);
  put<uint32_t>(&b, s.dynamic_shdr + offsetof(Elf64_Shdr, sh_link), 1);
  expect_error(b, "not a string table");
}

TEST(SyntheticElfTest, CorruptVersionDefinitions) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint32_t>(&b, s.verdef_shdr + offsetof(Elf64_Shdr, sh_info), 5);  // more entries than present
  Bytes first = b;
  // The chain ends with vd_next == 0, so extra claimed entries are harmless.
  EXPECT_TRUE(inspect(first).ok);
  uint64_t vd_off = get<uint64_t>(b, s.verdef_shdr + offsetof(Elf64_Shdr, sh_offset));
  put<uint32_t>(&b, vd_off + offsetof(Elf64_Verdef, vd_next), 0x7fffffff);
  expect_error(b, "corrupt: .gnu.version_d entry extends past the end of the section");
  b = s.bytes;
  put<uint32_t>(&b, vd_off + offsetof(Elf64_Verdef, vd_aux), 0x1000);
  expect_error(b, "auxiliary entry extends past the end");
}

TEST(SyntheticElfTest, ProgramHeaderChecks) {
  SyntheticElf s = build_synthetic();
  Bytes b = s.bytes;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_phentsize), 40);
  expect_error(b, "program header entry size is 40, expected 56");

  b = s.bytes;
  put<uint16_t>(&b, offsetof(Elf64_Ehdr, e_phnum), 0);
  expect_error(b, "no program headers");

  b = s.bytes;
  put<uint32_t>(&b, sizeof(Elf64_Ehdr) + offsetof(Elf64_Phdr, p_type), PT_NOTE);
  expect_error(b, "no PT_LOAD segments");

  b = s.bytes;  // PT_DYNAMIC (segment 1) past the end
  put<uint64_t>(&b, sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + offsetof(Elf64_Phdr, p_offset), ~0ull - 2);
  expect_error(b, "truncated: segment 1 ends at offset");
}

TEST(SyntheticElfTest, RandomMutationsNeverCrash) {
  SyntheticElf s = build_synthetic();
  std::mt19937 rng(777);
  int ok = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    Bytes b = s.bytes;
    int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % b.size();
      switch (rng() % 4) {
        case 0: b[pos] = static_cast<uint8_t>(rng()); break;
        case 1: b[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 2: b[pos] = (rng() % 2) ? 0xff : 0x00; break;
        case 3: b.resize(std::max<size_t>(1, pos)); break;  // exact-size truncation
      }
    }
    ElfInfo info = inspect(b);
    if (info.ok) {
      ++ok;
    } else {
      EXPECT_FALSE(info.error.empty());
    }
  }
  EXPECT_GT(ok, 0);
}

// ---------------------------------------------------------------------------
// File entry point

TEST(ElfFileTest, FileErrors) {
  ElfInfo info = inspect_elf_file("/nonexistent/etrt/plugin.so");
  EXPECT_FALSE(info.ok);
  EXPECT_EQ(info.error, "cannot open: No such file or directory");

  info = inspect_elf_file("/tmp");
  EXPECT_FALSE(info.ok);
  EXPECT_THAT(info.error, HasSubstr("not a regular file"));

  char tmpl[] = "/tmp/etrt_elf_test_XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  info = inspect_elf_file(tmpl);
  EXPECT_FALSE(info.ok);
  EXPECT_THAT(info.error, HasSubstr("truncated: 0 bytes"));
  unlink(tmpl);
}

TEST(ElfFileTest, PositionIndependentExecutableIsRejected) {
  // This test binary itself: with a PIE toolchain it is ET_DYN + DF_1_PIE,
  // otherwise ET_EXEC. Either way it is not a loadable library.
  ElfInfo info = inspect_elf_file("/proc/self/exe");
  EXPECT_FALSE(info.ok);
  EXPECT_THAT(info.error, ::testing::AnyOf(HasSubstr("position-independent executable"),
                                           HasSubstr("not a shared object (e_type ET_EXEC")));
}

}  // namespace
}  // namespace etrt::loader
