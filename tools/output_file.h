// Files the command line tool writes (outputs, dumps, traces): never through a symbolic link
// someone planted, and never left half-written.
#pragma once

#include <string>
#include <string_view>

namespace etrt::tools {

// A directory held open, so every file written into it lands in the directory that was checked,
// whatever happens to its path meanwhile.
class OutputDirectory {
 public:
  OutputDirectory() = default;
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  ~OutputDirectory();

  // Opens the directory `path`; with `create_missing`, creates it and its parents first when it does not
  // exist. When `path` itself is a symbolic link, it is followed only if this user or root owns the link:
  // another user may have planted it to send the files elsewhere. False with *error naming the problem.
  bool open(const std::string& path, bool create_missing, std::string* error);

  // Writes `bytes` as the file `name` in the directory: into a new temporary file beside it (created
  // exclusively, never through a link), then renamed over `name` once every byte is written. A `name`
  // that is a symbolic link or not a regular file is refused. On any failure the temporary file is
  // removed, an existing `name` keeps its old contents, and *error names the file and the problem.
  bool write(const std::string& name, std::string_view bytes, std::string* error) const;

  const std::string& path() const { return path_; }

 private:
  std::string file_path(const std::string& name) const;

  int fd_ = -1;
  std::string path_;
};

// write() of `path`'s last component into its directory, which must exist (opened as open() does).
bool write_output_file(const std::string& path, std::string_view bytes, std::string* error);

}  // namespace etrt::tools
