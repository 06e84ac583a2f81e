// A loaded, verified external data file (.ptd): weights kept outside the
// program, found by name. ExecuTorch writes one when a program is exported with
// its constants external; the program's tensors then name their data
// (ExtraTensorInfo.fully_qualified_name) instead of holding it, and delegates
// find their weights by key here as in the program's own named data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "aligned_buffer.h"
#include "data_file_generated.h"
#include "etrt/plugin_api.h"

namespace etrt {

class DataFile {
 public:
  struct Entry {
    const uint8_t* data = nullptr;
    size_t size = 0;
    const ptd::TensorLayout* layout = nullptr;  // nullptr for opaque data
  };

  // Takes the file's bytes; verifies the header, the flatbuffer, every segment
  // and every entry before returning. `origin` names the file in errors.
  static et_error* load(AlignedBuffer bytes, const std::string& origin, std::shared_ptr<const DataFile>* out);

  const std::string& origin() const { return origin_; }
  size_t entry_count() const { return entries_.size(); }
  const Entry* find(std::string_view key) const;

 private:
  AlignedBuffer bytes_;
  std::string origin_;
  uint64_t segment_base_ = 0;
  const ptd::DataFile* root_ = nullptr;
  std::unordered_map<std::string_view, Entry> entries_;  // keys point into bytes_
};

// Reads a whole file into an aligned buffer, refusing files over the file size limit
// (resource_limits.h) before reading.
et_error* read_file_bytes(const std::string& path, AlignedBuffer* out);

}  // namespace etrt
