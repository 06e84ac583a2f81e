#include "loader/dependency_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "loader/elf_inspect.h"
#include "loader/ld_cache.h"
#include "loader/trust.h"

namespace etrt::loader {
namespace {

// ---- what each library file needs, read once per file version

using FileKey = std::tuple<dev_t, ino_t, off_t, long, long, long, long>;

FileKey key_of(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec,
          st.st_ctim.tv_nsec};
}

// Dependencies of a file already read, keyed by its identity and version.
class ElfCache {
 public:
  std::shared_ptr<const ElfInfo> find(const FileKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(key);
    return found == entries_.end() ? nullptr : found->second;
  }
  void add(const FileKey& key, std::shared_ptr<const ElfInfo> info) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= kMaxEntries) entries_.clear();  // files replaced again and again: start over
    entries_[key] = std::move(info);
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mutex_;
  std::map<FileKey, std::shared_ptr<const ElfInfo>> entries_;
};

ElfCache& elf_cache() {
  static ElfCache* cache = new ElfCache;  // never destroyed: plugins may load during exit
  return *cache;
}

// The dependencies of the open file `fd` (status `st`), or an error.
std::shared_ptr<const ElfInfo> dependencies_of(int fd, const struct stat& st) {
  FileKey key = key_of(st);
  if (auto cached = elf_cache().find(key)) return cached;
  auto info = std::make_shared<ElfInfo>();
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    *info = inspect_elf_dependencies(nullptr, 0);
  } else {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      info->error = std::string("cannot map: ") + std::strerror(errno);
      return info;  // not cached: it may work next time
    }
    *info = inspect_elf_dependencies(static_cast<const uint8_t*>(map), size);
    ::munmap(map, size);
  }
  elf_cache().add(key, info);
  return info;
}

// ---- the walk over the dependency graph, breadth first as the loader loads

struct Library {
  SearchPaths search;  // search.name: the path the loader would open it by
  std::vector<std::string> needed;
  std::string soname;
  std::vector<std::string> requested_as;  // the names that brought it in
  dev_t device = 0;
  ino_t inode = 0;
  size_t loader = 0;  // the library that needed it first (its loader); the plugin is its own
  size_t depth = 0;
};

// A file the search found: where, and what it is.
struct Found {
  std::string path;
  std::string source;
  bool certain = false;
  struct stat status {};
  std::shared_ptr<const ElfInfo> elf;
};

class DependencyWalk {
 public:
  DependencyWalk(const SearchEnvironment& env, const DependencyLimits& limits) : env_(env), limits_(limits) {}

  std::string run(const ElfInfo& plugin, const std::string& load_path) {
    Library root;
    root.search.name = "the plugin";
    root.search.origin = directory_of(load_path);
    fill(&root, plugin);
    libraries_.push_back(std::move(root));
    if (!check_entries(libraries_[0], /*is_plugin=*/true)) return problem_;
    for (size_t index = 0; index < libraries_.size(); ++index) {
      std::vector<std::string> needed = libraries_[index].needed;  // libraries_ grows below
      for (const std::string& name : needed) {
        if (already_there(name)) continue;
        if (!resolve(index, name)) return problem_;
      }
    }
    return "";
  }

 private:
  static std::string directory_of(const std::string& path) {
    size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
  }

  static void fill(Library* library, const ElfInfo& elf) {
    library->needed = elf.needed;
    library->soname = elf.soname;
    library->search.has_rpath = elf.has_rpath && !elf.has_runpath;  // the loader ignores DT_RPATH then
    library->search.rpath = elf.rpath;
    library->search.has_runpath = elf.has_runpath;
    library->search.runpath = elf.runpath;
    library->search.no_default_libraries = elf.no_default_libraries;
  }

  bool refuse(std::string problem) {
    problem_ = std::move(problem);
    return false;
  }

  // The loader uses a library it has already loaded under that name (or soname)
  // without searching: in the process, or earlier in this load.
  bool already_there(const std::string& name) const {
    for (const LoadedObject& object : env_.loaded)
      if (object.soname == name || (!object.path.empty() && object.path == name)) return true;
    for (const Library& library : libraries_) {
      if (library.soname == name) return true;
      if (std::find(library.requested_as.begin(), library.requested_as.end(), name) != library.requested_as.end())
        return true;
    }
    return false;
  }

  // The rules on an object's own search entries, whether or not the search reaches them.
  bool check_entries(const Library& library, bool is_plugin) {
    const SearchPaths& search = library.search;
    const char* tag = search.has_runpath ? "DT_RUNPATH" : "DT_RPATH";
    if (!search.has_runpath && !search.has_rpath) return true;
    for (const std::string& entry : split_search_list(search.has_runpath ? search.runpath : search.rpath, ":")) {
      std::string where = search.name + "'s " + tag + " entry '" + entry + "'";
      if (entry.empty())
        return refuse(where + " is empty, which the dynamic loader reads as the working directory: refused, the "
                              "working directory is never trusted");
      if (is_plugin && uses_origin(entry) && !stays_in_origin(entry))
        return refuse(where + " leaves the plugin's own directory: refused, an entry using $ORIGIN must start "
                              "with it and stay below it");
      for (const std::string& dir : expand_entry(entry, search.origin, env_))
        if (dir.empty() || dir[0] != '/')
          return refuse(where + " is relative: the dynamic loader would resolve it against the working directory, "
                                "which is never trusted");
    }
    return true;
  }

  // "$ORIGIN", "$ORIGIN/lib", "${ORIGIN}/a/../b": yes; "$ORIGIN/..", "/x/$ORIGIN": no.
  static bool stays_in_origin(const std::string& entry) {
    size_t start = entry.rfind("${ORIGIN}", 0) == 0 ? 9 : entry.rfind("$ORIGIN", 0) == 0 ? 7 : std::string::npos;
    if (start == std::string::npos) return false;
    std::string rest = entry.substr(start);
    if (!rest.empty() && rest[0] != '/') return false;
    if (uses_origin(rest)) return false;
    int depth = 0;
    for (const std::string& part : split_search_list(rest, "/")) {
      if (part.empty() || part == ".") continue;
      depth += part == ".." ? -1 : 1;
      if (depth < 0) return false;
    }
    return true;
  }

  std::vector<const SearchPaths*> chain_of(size_t index) const {
    std::vector<const SearchPaths*> chain;
    for (size_t at = index;; at = libraries_[at].loader) {
      chain.push_back(&libraries_[at].search);
      if (at == 0) return chain;
    }
  }

  std::string needs(size_t requester, const std::string& name) const {
    return "needs " + name + " (DT_NEEDED of " + libraries_[requester].search.name + ")";
  }

  // Looks at `path` as the loader would. False when refused; *found set when a
  // library is there (a file for another machine is passed over, as the loader does).
  bool try_candidate(size_t requester, const std::string& name, const std::string& path, const std::string& source,
                     bool certain, std::vector<Found>* found) {
    PathCheck check = check_path(path);
    std::string at = needs(requester, name) + ", which the dynamic loader would load from " + path + " (" + source + ")";
    if (!check.problem.empty())
      return refuse((check.exists ? at : needs(requester, name) + ", and the dynamic loader would look for it at " +
                                             path + " (" + source + ")") +
                    ": " + check.problem);
    if (!check.exists) return true;
    int fd = ::open(check.resolved.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return true;  // gone since the check: as the loader would find it
      return refuse(at + ": cannot open: " + std::strerror(errno));
    }
    Found candidate;
    candidate.path = path;
    candidate.source = source;
    candidate.certain = certain;
    std::string problem;
    if (::fstat(fd, &candidate.status) != 0) problem = std::string("cannot stat: ") + std::strerror(errno);
    else if (!S_ISREG(candidate.status.st_mode)) problem = "refused: not a regular file";
    else problem = untrusted_file_reason(candidate.status);
    if (problem.empty()) candidate.elf = dependencies_of(fd, candidate.status);
    ::close(fd);
    if (!problem.empty()) return refuse(at + ": " + problem);
    if (!candidate.elf->ok && candidate.elf->foreign) return true;
    if (!candidate.elf->ok) return refuse(at + ": refused: not a library it can load: " + candidate.elf->error);
    found->push_back(std::move(candidate));
    return true;
  }

  bool search(size_t requester, const std::string& name, std::vector<Found>* found) {
    if (name.find('/') != std::string::npos) {  // a path: no search
      std::vector<std::string> paths = expand_entry(name, libraries_[requester].search.origin, env_);
      for (const std::string& path : paths)
        if (!try_candidate(requester, name, path, "named by path", paths.size() == 1, found)) return false;
      return true;
    }
    std::vector<std::string> searched;
    for (const SearchStep& step : search_steps(chain_of(requester), env_)) {
      if (step.kind == SearchStep::kLdCache) {
        // The loader passes over a cache it does not understand, and so does this search; one that
        // cannot be read now (no descriptor or memory left) leaves the loader's choice unknown.
        LdCacheAnswer cache = ld_cache_lookup(name, step.directory);
        if (!cache.unreadable.empty())
          return refuse(needs(requester, name) + ", and the dynamic loader's cache cannot be read now: " +
                        cache.unreadable);
        for (const LdCacheEntry& entry : cache.entries)
          if (!try_candidate(requester, name, entry.path, step.source, !entry.cpu_specific, found)) return false;
      } else {
        if (step.directory.empty() || step.directory[0] != '/')
          return refuse(needs(requester, name) + ", and the dynamic loader would search '" + step.entry + "' (" +
                        step.source + "), which is relative to the working directory: refused, the working "
                        "directory is never trusted");
        for (const std::string& dir : cpu_subdirectories(step.directory, env_))
          if (!try_candidate(requester, name, dir + "/" + name, step.source + ", a CPU subdirectory", false, found))
            return false;
        if (!try_candidate(requester, name, step.directory + "/" + name, step.source, step.certain, found))
          return false;
      }
      if (std::any_of(found->begin(), found->end(), [](const Found& f) { return f.certain; })) return true;
    }
    return true;
  }

  bool resolve(size_t requester, const std::string& name) {
    std::vector<Found> found;
    if (!search(requester, name, &found)) return false;
    if (found.empty())
      return refuse(needs(requester, name) + ", which the dynamic loader would not find (it would fail to open the "
                    "plugin)");
    for (const Found& candidate : found) {
      auto same = std::find_if(libraries_.begin(), libraries_.end(), [&](const Library& l) {
        return l.device == candidate.status.st_dev && l.inode == candidate.status.st_ino;
      });
      if (same != libraries_.end()) {
        same->requested_as.push_back(name);
        continue;
      }
      Library library;
      library.search.name = candidate.path;
      library.search.origin = directory_of(candidate.path);
      fill(&library, *candidate.elf);
      library.requested_as.push_back(name);
      library.device = candidate.status.st_dev;
      library.inode = candidate.status.st_ino;
      library.loader = requester;
      library.depth = libraries_[requester].depth + 1;
      if (library.depth > limits_.max_depth)
        return refuse(needs(requester, name) + ": refused: its dependencies are nested more than " +
                      std::to_string(limits_.max_depth) + " levels deep");
      if (libraries_.size() >= limits_.max_libraries + 1)
        return refuse(needs(requester, name) + ": refused: the plugin would bring in more than " +
                      std::to_string(limits_.max_libraries) + " libraries");
      if (!check_entries(library, /*is_plugin=*/false)) return false;
      libraries_.push_back(std::move(library));
    }
    return true;
  }

  const SearchEnvironment& env_;
  const DependencyLimits& limits_;
  std::vector<Library> libraries_;  // [0] is the plugin
  std::string problem_;
};

}  // namespace

std::string untrusted_dependency_reason(const uint8_t* data, size_t size, const std::string& load_path,
                                        const SearchEnvironment& env, const DependencyLimits& limits) {
  ElfInfo plugin = inspect_elf_dependencies(data, size);
  if (!plugin.ok) return "cannot read what it needs: " + plugin.error;
  try {
    return DependencyWalk(env, limits).run(plugin, load_path);
  } catch (const std::bad_alloc&) {
    return std::string("checking the libraries it needs ran out of memory: ") + std::strerror(ENOMEM);
  }
}

std::string untrusted_dependency_reason(const uint8_t* data, size_t size, const std::string& load_path) {
  return untrusted_dependency_reason(data, size, load_path, process_search_environment());
}

}  // namespace etrt::loader
