#include "pte_header.h"

#include <cstring>

namespace etrt {
namespace {

uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // the format is little-endian, like every host etrt builds for
}

uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

bool parse_pte_header(const uint8_t* data, size_t size, PteHeader* header, std::string* error) {
  if (size < 8) {
    *error = "file is " + std::to_string(size) + " bytes, too small to be a .pte";
    return false;
  }
  if (std::memcmp(data + 4, "ET12", 4) != 0) {
    if (data[4] == 'E' && data[5] == 'T')
      *error = std::string("unsupported program format version '") + std::string(reinterpret_cast<const char*>(data + 4), 4) +
               "' (this runtime reads ET12)";
    else if (std::memcmp(data + 4, "BP08", 4) == 0)  // devtools.bundled_program's file identifier
      *error = "a bundled program (.bpte: a program with its test cases), not a plain program: run it with "
               "`etrt run FILE.bpte --verify`, etrt.portable_lib._load_for_executorch_from_bundled_program or "
               "etrt::extension::BundledModule";
    else
      *error = "not an ExecuTorch program (no ET12 identifier at byte 4)";
    return false;
  }
  *header = PteHeader{};
  if (size >= 16 && std::memcmp(data + 8, "eh00", 4) == 0) {
    uint32_t length = read_u32(data + 12);
    if (length < 24 || size < 8 + static_cast<size_t>(length)) {
      *error = "extended header length " + std::to_string(length) + " is invalid for a " + std::to_string(size) +
               "-byte file";
      return false;
    }
    header->present = true;
    header->program_size = read_u64(data + 16);
    header->segment_base_offset = read_u64(data + 24);
    header->segment_data_size = length >= 32 ? read_u64(data + 32) : 0;
    if (header->program_size > size || header->program_size < 16) {
      *error = "extended header says the program is " + std::to_string(header->program_size) +
               " bytes but the file has " + std::to_string(size);
      return false;
    }
    if (header->segment_base_offset != 0 &&
        (header->segment_base_offset < header->program_size || header->segment_base_offset > size)) {
      *error = "extended header puts segments at byte " + std::to_string(header->segment_base_offset) +
               ", outside the file's " + std::to_string(size) + " bytes";
      return false;
    }
    if (header->segment_data_size > size - header->segment_base_offset) {
      *error = "file is truncated: segments need " + std::to_string(header->segment_data_size) +
               " bytes from byte " + std::to_string(header->segment_base_offset) + ", the file has " +
               std::to_string(size);
      return false;
    }
  } else {
    header->program_size = size;
  }
  return true;
}

}  // namespace etrt
