// Reading and writing NumPy .npy files (version 1.0/2.0, little-endian,
// C order) for the command line tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace etrt::tools {

struct NpyArray {
  int32_t dtype = 6;              // et_dtype code
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;      // C-order bytes
};

// False with *error naming the file and the problem.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);
bool write_npy(const std::string& path, const NpyArray& array, std::string* error);

}  // namespace etrt::tools
