// The optional extended header that follows the flatbuffer identifier in a
// .pte: where the program ends and the segments begin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace etrt {

struct PteHeader {
  bool present = false;
  uint64_t program_size = 0;         // bytes of the flatbuffer region from offset 0
  uint64_t segment_base_offset = 0;  // file offset of segment data, 0 if none
  uint64_t segment_data_size = 0;    // bytes of segment data (0 in older files)
};

// Parses the head of a file. Returns false with *error for a file that is not
// a .pte or whose header is inconsistent with its size.
bool parse_pte_header(const uint8_t* data, size_t size, PteHeader* header, std::string* error);

}  // namespace etrt
