#include "loader/library_search.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace etrt::loader {
namespace {

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void add_unique(std::vector<std::string>* list, const std::string& value) {
  if (!value.empty() && std::find(list->begin(), list->end(), value) == list->end()) list->push_back(value);
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// ---- the objects of this process, read from memory as the loader mapped them

struct MemoryRange {
  uintptr_t start = 0, end = 0;
};

// The NUL-terminated string at `offset` of the string table, or false when it leaves the table.
bool string_in(const char* table, size_t size, uint64_t offset, std::string* out) {
  if (offset >= size) return false;
  const void* end = std::memchr(table + offset, '\0', size - offset);
  if (end == nullptr) return false;
  out->assign(table + offset, static_cast<const char*>(end) - (table + offset));
  return true;
}

void read_loaded_dynamic(const dl_phdr_info* info, LoadedObject* object) {
  const ElfW(Phdr)* dynamic = nullptr;
  std::vector<MemoryRange> segments;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = &ph;
    if (ph.p_type == PT_LOAD)
      segments.push_back({info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
  }
  if (dynamic == nullptr) return;
  auto mapped = [&](uintptr_t start, size_t size) {
    return std::any_of(segments.begin(), segments.end(),
                       [&](const MemoryRange& r) { return start >= r.start && size <= r.end - start; });
  };
  uintptr_t dynamic_start = info->dlpi_addr + dynamic->p_vaddr;
  size_t count = dynamic->p_memsz / sizeof(ElfW(Dyn));
  if (!mapped(dynamic_start, count * sizeof(ElfW(Dyn)))) return;
  const auto* entries = reinterpret_cast<const ElfW(Dyn)*>(dynamic_start);
  uintptr_t strtab = 0;
  size_t strsz = 0;
  uint64_t soname = ~0ull, rpath = ~0ull, runpath = ~0ull;
  for (size_t i = 0; i < count && entries[i].d_tag != DT_NULL; ++i) {
    const ElfW(Dyn)& d = entries[i];
    switch (d.d_tag) {
      case DT_STRTAB: strtab = d.d_un.d_ptr; break;
      case DT_STRSZ: strsz = d.d_un.d_val; break;
      case DT_SONAME: soname = d.d_un.d_val; break;
      case DT_RPATH: rpath = d.d_un.d_val; break;
      case DT_RUNPATH: runpath = d.d_un.d_val; break;
      case DT_FLAGS_1: object->search.no_default_libraries = (d.d_un.d_val & DF_1_NODEFLIB) != 0; break;
      default: break;
    }
  }
  // The loader rewrites these addresses in place on most machines; where it does not, they are offsets.
  if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;
  if (strtab == 0 || !mapped(strtab, strsz)) return;
  const char* table = reinterpret_cast<const char*>(strtab);
  if (soname != ~0ull) string_in(table, strsz, soname, &object->soname);
  object->search.has_runpath = runpath != ~0ull && string_in(table, strsz, runpath, &object->search.runpath);
  // The loader ignores DT_RPATH when DT_RUNPATH is present.
  object->search.has_rpath = !object->search.has_runpath && rpath != ~0ull &&
                             string_in(table, strsz, rpath, &object->search.rpath);
}

std::string program_origin() {
  char buffer[PATH_MAX];
  ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return length > 0 ? directory_of(std::string(buffer, static_cast<size_t>(length))) : "";
}

std::vector<LoadedObject> loaded_objects(const std::string& origin_of_program) {
  struct Collector {
    std::vector<LoadedObject> objects;
    const std::string* program_origin;
  } collector{{}, &origin_of_program};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* c = static_cast<Collector*>(data);
        LoadedObject object;
        object.is_program = c->objects.empty();  // the loader lists the program first
        object.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        object.search.name = object.is_program ? "the program" : object.path;
        object.search.origin = object.is_program ? *c->program_origin : directory_of(object.path);
        read_loaded_dynamic(info, &object);
        c->objects.push_back(std::move(object));
        return 0;
      },
      &collector);
  return std::move(collector.objects);
}

// LD_LIBRARY_PATH as the loader read it when the process started (a later setenv changes
// nothing for it): from the start-up environment, which /proc/self/environ shows.
bool startup_library_path(std::string* value) {
  int fd = ::open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const char* now = secure_getenv("LD_LIBRARY_PATH");
    if (now != nullptr) *value = now;
    return now != nullptr;
  }
  std::string environ_text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) environ_text.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  static const std::string kKey = "LD_LIBRARY_PATH=";
  size_t start = 0;
  while (start < environ_text.size()) {
    size_t end = environ_text.find('\0', start);
    if (end == std::string::npos) end = environ_text.size();
    if (environ_text.compare(start, kKey.size(), kKey) == 0) {
      *value = environ_text.substr(start + kKey.size(), end - start - kKey.size());
      return true;
    }
    start = end + 1;
  }
  return false;
}

// What the loader was configured with, fixed for the life of the process.
struct StartupFacts {
  bool secure = false;
  bool has_library_path = false;
  std::string library_path, program_origin;
  std::vector<std::string> lib_values, platform_values, legacy_subdirs, default_dirs;
};

StartupFacts read_startup_facts() {
  StartupFacts facts;
  facts.secure = ::getauxval(AT_SECURE) != 0;
  if (!facts.secure) facts.has_library_path = startup_library_path(&facts.library_path);
  facts.program_origin = program_origin();
  // $LIB is the loader's own library directory (lib/<multiarch> on Debian, lib64 on Fedora):
  // where the C library it loaded lives, relative to / or /usr.
  for (const LoadedObject& object : loaded_objects(facts.program_origin)) {
    if (object.soname.rfind("libc.so.", 0) != 0 || object.path.empty()) continue;
    std::string dir = directory_of(object.path);
    if (dir.rfind("/usr/", 0) == 0) dir.erase(0, 4);
    if (dir.size() > 1) add_unique(&facts.lib_values, dir.substr(1));
  }
  if (facts.lib_values.empty()) facts.lib_values = {"lib", "lib64"};
  if (const char* platform = reinterpret_cast<const char*>(::getauxval(AT_PLATFORM)))
    add_unique(&facts.platform_values, platform);
#if defined(__x86_64__)
  // glibc names the platform after the CPU generation when it can.
  add_unique(&facts.platform_values, "haswell");
  add_unique(&facts.platform_values, "xeon_phi");
  facts.legacy_subdirs = {"tls", "avx512_1"};
#else
  facts.legacy_subdirs = {"tls"};
#endif
  for (const std::string& platform : facts.platform_values) add_unique(&facts.legacy_subdirs, platform);
  for (const std::string& lib : facts.lib_values) {
    add_unique(&facts.default_dirs, "/" + lib);
    add_unique(&facts.default_dirs, "/usr/" + lib);
  }
  add_unique(&facts.default_dirs, "/lib");
  add_unique(&facts.default_dirs, "/usr/lib");
  return facts;
}

bool identifier_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The length of the substitution token naming `name` at `text` ("$NAME" or "${NAME}"), or 0.
size_t token_length(const std::string& text, size_t at, const std::string& name) {
  if (text.compare(at, 2, "${") == 0) {
    return text.compare(at + 2, name.size(), name) == 0 && text.compare(at + 2 + name.size(), 1, "}") == 0
               ? name.size() + 3
               : 0;
  }
  if (text.compare(at + 1, name.size(), name) != 0) return 0;
  size_t after = at + 1 + name.size();
  return after < text.size() && identifier_char(text[after]) ? 0 : name.size() + 1;
}

void add_entries(std::vector<SearchStep>* steps, const std::string& list, const char* separators,
                 const std::string& origin, const SearchEnvironment& env, const std::string& source) {
  for (const std::string& entry : split_search_list(list, separators)) {
    std::vector<std::string> dirs = expand_entry(entry, origin, env);
    for (const std::string& dir : dirs) {
      SearchStep step;
      step.directory = dir;
      step.entry = entry;
      step.source = source;
      // In secure mode the loader drops some $ORIGIN entries: whether it looks there is not certain.
      step.certain = dirs.size() == 1 && !(env.secure && uses_origin(entry));
      steps->push_back(std::move(step));
    }
  }
}

void add_rpath(std::vector<SearchStep>* steps, const SearchPaths& object, const SearchEnvironment& env) {
  if (object.has_rpath && !object.has_runpath)
    add_entries(steps, object.rpath, ":", object.origin, env, "DT_RPATH of " + object.name);
}

void find_legacy(const std::string& dir, const SearchEnvironment& env, int depth, std::vector<std::string>* out) {
  if (depth == 0) return;
  for (const std::string& name : env.legacy_subdirs) {
    std::string sub = dir + "/" + name;
    if (!is_directory(sub)) continue;
    find_legacy(sub, env, depth - 1, out);
    out->push_back(sub);
  }
}

}  // namespace

SearchEnvironment process_search_environment() {
  static const StartupFacts facts = read_startup_facts();
  SearchEnvironment env;
  env.secure = facts.secure;
  env.has_library_path = facts.has_library_path;
  env.library_path = facts.library_path;
  env.program_origin = facts.program_origin;
  env.lib_values = facts.lib_values;
  env.platform_values = facts.platform_values;
  env.legacy_subdirs = facts.legacy_subdirs;
  env.default_dirs = facts.default_dirs;
  env.loaded = loaded_objects(facts.program_origin);
  return env;
}

std::vector<std::string> split_search_list(const std::string& list, const char* separators) {
  std::vector<std::string> entries;
  size_t start = 0;
  while (true) {
    size_t end = list.find_first_of(separators, start);
    entries.push_back(list.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return entries;
    start = end + 1;
  }
}

bool uses_origin(const std::string& entry) {
  for (size_t at = entry.find('$'); at != std::string::npos; at = entry.find('$', at + 1))
    if (token_length(entry, at, "ORIGIN") != 0) return true;
  return false;
}

std::vector<std::string> expand_entry(const std::string& entry, const std::string& origin,
                                      const SearchEnvironment& env) {
  if (entry.empty()) return {"."};
  std::vector<std::string> results{""};
  const std::vector<std::string> origins{origin};
  size_t at = 0;
  while (at < entry.size()) {
    const std::vector<std::string>* values = nullptr;
    size_t length = 0;
    if (entry[at] == '$') {
      if ((length = token_length(entry, at, "ORIGIN")) != 0) values = &origins;
      else if ((length = token_length(entry, at, "LIB")) != 0) values = &env.lib_values;
      else if ((length = token_length(entry, at, "PLATFORM")) != 0) values = &env.platform_values;
    }
    if (values == nullptr) {  // plain text, or a token the loader does not know (kept as written)
      for (std::string& result : results) result += entry[at];
      ++at;
      continue;
    }
    std::vector<std::string> next;
    for (const std::string& result : results)
      for (const std::string& value : *values) next.push_back(result + value);
    results = std::move(next);
    at += length;
  }
  return results;
}

std::vector<SearchStep> search_steps(const std::vector<const SearchPaths*>& chain, const SearchEnvironment& env) {
  std::vector<SearchStep> steps;
  const SearchPaths& requester = *chain.front();
  if (!requester.has_runpath) {
    for (const SearchPaths* object : chain) add_rpath(&steps, *object, env);
    for (const LoadedObject& object : env.loaded)
      if (object.is_program) add_rpath(&steps, object.search, env);
  }
  if (!env.secure && env.has_library_path)
    add_entries(&steps, env.library_path, ":;", env.program_origin, env, "LD_LIBRARY_PATH");
  if (requester.has_runpath) add_entries(&steps, requester.runpath, ":", requester.origin, env,
                                         "DT_RUNPATH of " + requester.name);
  if (!requester.no_default_libraries) {
    SearchStep cache;
    cache.kind = SearchStep::kLdCache;
    cache.directory = env.ld_cache;
    cache.source = "the dynamic loader's cache " + env.ld_cache;
    steps.push_back(std::move(cache));
    for (const std::string& dir : env.default_dirs) {
      SearchStep step;
      step.directory = step.entry = dir;
      step.source = "a default directory";
      step.certain = false;  // their order and set are the loader's own configuration
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

std::vector<std::string> cpu_subdirectories(const std::string& dir, const SearchEnvironment& env) {
  std::vector<std::string> found;
  if (!is_directory(dir)) return found;
  std::string hwcaps = dir + "/glibc-hwcaps";
  if (DIR* listing = ::opendir(hwcaps.c_str())) {
    std::vector<std::string> levels;
    while (const dirent* item = ::readdir(listing)) {
      std::string name = item->d_name;
      if (name != "." && name != ".." && is_directory(hwcaps + "/" + name)) levels.push_back(hwcaps + "/" + name);
    }
    ::closedir(listing);
    std::sort(levels.begin(), levels.end());
    found.insert(found.end(), levels.begin(), levels.end());
  }
  find_legacy(dir, env, 4, &found);
  return found;
}

}  // namespace etrt::loader
