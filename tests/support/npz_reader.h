// Reading NumPy .npz archives (np.savez: a zip of stored, uncompressed .npy
// members) for C++ tests that need a reference program's inputs and expected
// outputs without Python (the aarch64 tests run under qemu, with no Python).
// Members are found through the zip's central directory, zip64 sizes included;
// each .npy is parsed by the command line tool's reader (tools/npy.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tools/npy.h"

namespace etrt_test {

// name (".npy" removed) -> array. False with *error naming the file and the problem.
inline bool read_npz(const std::string& path, std::map<std::string, etrt::tools::NpyArray>* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return *error = path + ": cannot open", false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t size = bytes.size();
  auto u16 = [&](size_t at) { return at + 2 <= size ? uint64_t{data[at]} | uint64_t{data[at + 1]} << 8 : ~0ull; };
  auto u32 = [&](size_t at) { return at + 4 <= size ? u16(at) | u16(at + 2) << 16 : ~0ull; };
  auto u64 = [&](size_t at) { return at + 8 <= size ? u32(at) | u32(at + 4) << 32 : ~0ull; };
  auto fail = [&](const std::string& what) { return *error = path + ": " + what, false; };

  // End of central directory: 22 bytes plus a comment of at most 64 KiB, searched from the end.
  size_t eocd = std::string::npos;
  for (size_t at = size >= 22 ? size - 22 : 0; size >= 22; --at) {
    if (u32(at) == 0x06054b50) {
      eocd = at;
      break;
    }
    if (at == 0 || size - at > 22 + 65535) break;
  }
  if (eocd == std::string::npos) return fail("not a zip archive (no end of central directory)");
  uint64_t entries = u16(eocd + 10), directory = u32(eocd + 16);
  if (entries == 0xffff || directory == 0xffffffff) {  // zip64: the locator sits just before
    if (eocd < 20 || u32(eocd - 20) != 0x07064b50) return fail("zip64 archive without its locator");
    uint64_t record = u64(eocd - 20 + 8);
    if (record > size || u32(record) != 0x06064b50) return fail("corrupt zip64 end of central directory");
    entries = u64(record + 32);
    directory = u64(record + 48);
  }
  uint64_t at = directory;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at >= size || u32(at) != 0x02014b50) return fail("corrupt central directory entry " + std::to_string(e));
    const uint64_t method = u16(at + 10), name_len = u16(at + 28), extra_len = u16(at + 30), comment_len = u16(at + 32);
    uint64_t packed = u32(at + 20), local = u32(at + 42);
    if (at + 46 + name_len + extra_len > size) return fail("central directory entry past the end");
    std::string name(bytes, at + 46, name_len);
    // zip64 extra field (id 1): the 64-bit values of whichever fields are 0xffffffff, in order.
    for (uint64_t x = at + 46 + name_len, end = x + extra_len; x + 4 <= end;) {
      const uint64_t id = u16(x), len = u16(x + 2);
      if (id == 1) {
        uint64_t v = x + 4;
        if (u32(at + 24) == 0xffffffff) v += 8;  // uncompressed size
        if (packed == 0xffffffff) packed = u64(v), v += 8;
        if (local == 0xffffffff) local = u64(v);
      }
      x += 4 + len;
    }
    if (method != 0) return fail(name + ": compressed (method " + std::to_string(method) + "); only np.savez's stored members are read");
    if (local + 30 > size || u32(local) != 0x04034b50) return fail(name + ": corrupt local header");
    const uint64_t start = local + 30 + u16(local + 26) + u16(local + 28);
    if (start > size || packed > size - start) return fail(name + ": data past the end of the file");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    etrt::tools::NpyArray array;
    if (!etrt::tools::parse_npy(data + start, packed, path + ":" + name, &array, error)) return false;
    (*out)[name] = std::move(array);
    at += 46 + name_len + extra_len + comment_len;
  }
  return true;
}

}  // namespace etrt_test
