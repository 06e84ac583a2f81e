// Reading and writing NumPy .npy files (version 1.0/2.0/3.0, C order) for the
// command line tool. Big-endian arrays are converted to the host's order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace etrt::tools {

struct NpyArray {
  int32_t dtype = 6;              // et_dtype code
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;      // C-order bytes, host byte order
};

// False with *error naming the file and the problem. Never throws for bad input.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);
// The same over bytes already in memory; `name` is what error messages call them.
bool parse_npy(const uint8_t* bytes, size_t size, const std::string& name, NpyArray* out, std::string* error);
// An input file: a .npy file (by its magic), or else exactly the raw bytes of `declared` (its dtype and
// shape taken as they are), as ExecuTorch's executor_runner reads its --inputs.
bool read_input_file(const std::string& path, const NpyArray& declared, NpyArray* out, std::string* error);
// The .npy file's bytes (version 1.0); false with *problem when the dtype has no .npy form.
// tools/output_file.h writes them.
bool encode_npy(const NpyArray& array, std::string* bytes, std::string* problem);

}  // namespace etrt::tools
