// A loaded, verified .pte: the flatbuffer, its segments, constants and named
// data. Everything a Method reads from it has been bounds-checked at load.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "aligned_buffer.h"
#include "data_file.h"
#include "../named_data.h"
#include "etrt/plugin_api.h"
#include "program_generated.h"
#include "pte_header.h"

namespace etrt {

struct ByteSpan {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class Program;

// The program's named data (delegate weights by key), as plugins see it.
class ProgramNamedData final : public et_named_data {
 public:
  explicit ProgramNamedData(const Program* program) : program_(program) {}
  et_error* get(const char* key, const void** data, size_t* size) override;

 private:
  const Program* program_;
};

class Program {
 public:
  // Takes the file's bytes; verifies the flatbuffer and every index, offset
  // and size in it before returning a program. `origin` names it in errors.
  static et_error* load(AlignedBuffer bytes, const std::string& origin, std::shared_ptr<Program>* out);

  const pte::Program& root() const { return *root_; }
  const std::string& origin() const { return origin_; }
  size_t file_size() const { return bytes_.size(); }

  size_t method_count() const;
  std::string method_name(size_t index) const;
  const pte::ExecutionPlan* plan(const std::string& name) const;  // nullptr if absent

  ByteSpan segment(size_t index) const;                   // validated at load
  ByteSpan constant_data(uint32_t buffer_index) const;     // for tensors without allocation info
  ByteSpan mutable_initial_data(uint32_t buffer_index) const;
  ByteSpan delegate_blob(const pte::BackendDelegate& delegate) const;
  et_named_data* named_data() { return &named_data_; }

  // Attaches weights kept outside the program (a .ptd). Methods loaded afterwards
  // find their external tensors and delegates their named data there. A key
  // already served by another attached file is refused.
  et_error* add_data_file(std::shared_ptr<const DataFile> file);
  // The bytes of a tensor whose data is external, checked against its declaration
  // (size, element type, shape and dim order when the file records a layout).
  et_error* external_tensor(const pte::Tensor& tensor, ByteSpan* out) const;
  // Named data from attached files (the program's own named data comes first).
  const DataFile::Entry* find_attached(std::string_view key) const;
  // " in the program or its data file X" / " (no data file attached)", for not-found errors.
  std::string attached_files_text() const;

  // Bytes of a tensor's full (upper-bound) shape; validated at load.
  static bool tensor_nbytes(const pte::Tensor& tensor, size_t* nbytes, std::string* error);

 private:
  Program() : named_data_(this) {}
  std::string validate();
  std::string validate_plan(const pte::ExecutionPlan& plan);

  AlignedBuffer bytes_;
  std::string origin_;
  PteHeader header_;
  const pte::Program* root_ = nullptr;
  ProgramNamedData named_data_;
  mutable std::mutex data_files_mutex_;
  std::vector<std::shared_ptr<const DataFile>> data_files_;
};

// Element size of a program scalar type, 0 for types etrt does not handle.
size_t scalar_type_size(int32_t scalar_type);
const char* scalar_type_name(int32_t scalar_type);

}  // namespace etrt
