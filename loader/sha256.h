// SHA-256 (FIPS 180-4), used to verify plugin files against manifest digests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace etrt::loader {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // Returns the digest; the object is reset afterwards and can be reused.
  std::array<uint8_t, 32> finish();

 private:
  void reset();
  void compress(const uint8_t* block);                        // portable
  void compress_blocks(const uint8_t* data, size_t blocks);  // SHA extensions when the CPU has them

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(const void* data, size_t size);  // lowercase hex

// Hashes a file by streaming; returns false and sets *error
// ("cannot open: <strerror>") on failure.
bool sha256_file_hex(const std::string& path, std::string* hex, std::string* error);

}  // namespace etrt::loader
