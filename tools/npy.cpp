#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "etrt/plugin.hpp"

namespace etrt::tools {
namespace {

struct DescrEntry {
  const char* descr;
  int32_t dtype;
};

constexpr DescrEntry kDescrs[] = {
    {"<f4", ET_DTYPE_FLOAT32}, {"<f8", ET_DTYPE_FLOAT64}, {"<f2", ET_DTYPE_FLOAT16}, {"<i8", ET_DTYPE_INT64},
    {"<i4", ET_DTYPE_INT32},   {"<i2", ET_DTYPE_INT16},   {"|i1", ET_DTYPE_INT8},    {"|u1", ET_DTYPE_UINT8},
    {"|b1", ET_DTYPE_BOOL},
};

std::string field(const std::string& header, const std::string& key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  size_t colon = header.find(':', at);
  if (colon == std::string::npos) return "";
  size_t start = header.find_first_not_of(" ", colon + 1);
  if (start == std::string::npos) return "";
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  if (header[start] == '\'') return header.substr(start + 1, header.find('\'', start + 1) - start - 1);
  return header.substr(start, header.find_first_of(",}", start) - start);
}

}  // namespace

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    *error = path + ": not a .npy file";
    return false;
  }
  size_t header_len = 0, header_start = 0;
  if (bytes[6] == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (bytes.size() >= 12 && (bytes[6] == 2 || bytes[6] == 3)) {
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    *error = path + ": unsupported .npy version " + std::to_string(bytes[6]);
    return false;
  }
  if (header_start + header_len > bytes.size()) {
    *error = path + ": truncated header";
    return false;
  }
  std::string header(bytes.begin() + static_cast<long>(header_start), bytes.begin() + static_cast<long>(header_start + header_len));
  std::string descr = field(header, "descr");
  if (field(header, "fortran_order") == "True") {
    *error = path + ": Fortran-order arrays are not supported";
    return false;
  }
  NpyArray array;
  array.dtype = -1;
  for (const DescrEntry& entry : kDescrs)
    if (descr == entry.descr) array.dtype = entry.dtype;
  if (array.dtype < 0) {
    *error = path + ": unsupported dtype '" + descr + "'";
    return false;
  }
  std::string shape = field(header, "shape");
  size_t pos = 1;
  size_t numel = 1;
  while (pos < shape.size()) {
    size_t end = shape.find_first_of(",)", pos);
    std::string number = shape.substr(pos, end - pos);
    if (number.find_first_not_of(" ") != std::string::npos) {
      array.shape.push_back(std::stoll(number));
      numel *= static_cast<size_t>(array.shape.back());
    }
    pos = end + 1;
  }
  size_t nbytes = numel * etrt::plugin::element_size(array.dtype);
  size_t data_start = header_start + header_len;
  if (bytes.size() - data_start < nbytes) {
    *error = path + ": has " + std::to_string(bytes.size() - data_start) + " data bytes, shape needs " + std::to_string(nbytes);
    return false;
  }
  array.data.assign(bytes.begin() + static_cast<long>(data_start), bytes.begin() + static_cast<long>(data_start + nbytes));
  *out = std::move(array);
  return true;
}

bool write_npy(const std::string& path, const NpyArray& array, std::string* error) {
  const char* descr = nullptr;
  for (const DescrEntry& entry : kDescrs)
    if (entry.dtype == array.dtype) descr = entry.descr;
  if (descr == nullptr) {
    *error = path + ": cannot write dtype " + std::to_string(array.dtype);
    return false;
  }
  std::string shape = "(";
  for (int64_t d : array.shape) shape += std::to_string(d) + ",";
  if (array.shape.size() > 1) shape.pop_back();
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  if (!out) {
    *error = path + ": cannot write";
    return false;
  }
  return true;
}

}  // namespace etrt::tools
