#include "npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>

#include "etrt/plugin.hpp"

namespace etrt::tools {
namespace {

struct DescrEntry {
  char kind;     // NumPy's type character: 'f', 'i', 'u', 'b'
  size_t bytes;  // element size
  int32_t dtype;
};

constexpr DescrEntry kDescrs[] = {
    {'f', 4, ET_DTYPE_FLOAT32}, {'f', 8, ET_DTYPE_FLOAT64}, {'f', 2, ET_DTYPE_FLOAT16}, {'i', 8, ET_DTYPE_INT64},
    {'i', 4, ET_DTYPE_INT32},   {'i', 2, ET_DTYPE_INT16},   {'i', 1, ET_DTYPE_INT8},    {'u', 1, ET_DTYPE_UINT8},
    {'b', 1, ET_DTYPE_BOOL},
};

// At most 40 characters, control and non-ASCII bytes shown as '?': header text goes into error messages.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A strict parser for the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// It accepts exactly the three keys NumPy writes, each once, and reports the first problem with its offset.
// Every loop advances through the text, so it ends on any input; nothing throws.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  bool parse(NpyHeader* header, std::string* problem) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    if (!expect('{', problem)) return false;
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key;
      if (!string_literal(&key, problem) || !expect(':', problem)) return false;
      if (key == "descr") {
        if (seen_descr) return fail("'descr' given twice", problem);
        seen_descr = true;
        if (!string_literal(&header->descr, problem)) return false;
      } else if (key == "fortran_order") {
        if (seen_fortran) return fail("'fortran_order' given twice", problem);
        seen_fortran = true;
        if (!boolean(&header->fortran_order, problem)) return false;
      } else if (key == "shape") {
        if (seen_shape) return fail("'shape' given twice", problem);
        seen_shape = true;
        if (!shape_tuple(&header->shape, problem)) return false;
      } else {
        return fail("unexpected key '" + printable(key) + "'", problem);
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') return fail("expected ',' or '}'", problem);
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the closing '}'", problem);
    if (!seen_descr || !seen_fortran || !seen_shape) {
      const char* missing = !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape";
      *problem = std::string("header lacks '") + missing + "'";
      return false;
    }
    return true;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  bool fail(const std::string& what, std::string* problem) const {
    *problem = "malformed header at offset " + std::to_string(pos_) + ": " + what;
    return false;
  }
  bool expect(char c, std::string* problem) {
    skip_space();
    if (peek() != c) return fail(std::string("expected '") + c + "'", problem);
    ++pos_;
    return true;
  }
  // 'text' or "text", no escapes (NumPy never writes any in these fields).
  bool string_literal(std::string* out, std::string* problem) {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') return fail("expected a quoted string", problem);
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return fail("unterminated string", problem);
    std::string_view body = text_.substr(pos_ + 1, end - pos_ - 1);
    if (body.find('\\') != std::string_view::npos) return fail("escape sequences are not supported", problem);
    out->assign(body);
    pos_ = end + 1;
    return true;
  }
  bool boolean(bool* out, std::string* problem) {
    skip_space();
    std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("True")) {
      *out = true;
      pos_ += 4;
    } else if (rest.starts_with("False")) {
      *out = false;
      pos_ += 5;
    } else {
      return fail("expected True or False", problem);
    }
    return true;
  }
  // A tuple of non-negative integers: (), (5,), (2, 3), (2, 3,).
  bool shape_tuple(std::vector<int64_t>* shape, std::string* problem) {
    if (!expect('(', problem)) return false;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() == '-') return fail("negative dimension", problem);
      if (peek() < '0' || peek() > '9') return fail("expected a dimension or ')'", problem);
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        int digit = peek() - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return fail("dimension too large", problem);
        value = value * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs, as old NumPy wrote them
      if (shape->size() == ET_MAX_RANK)
        return fail("more than " + std::to_string(ET_MAX_RANK) + " dimensions", problem);
      shape->push_back(value);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') return fail("expected ',' or ')' in the shape", problem);
    }
    ++pos_;  // ')'
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void swap_bytes(std::vector<uint8_t>* data, size_t element) {
  for (size_t at = 0; at + element <= data->size(); at += element)
    std::reverse(data->begin() + static_cast<long>(at), data->begin() + static_cast<long>(at + element));
}

}  // namespace

bool parse_npy(const uint8_t* bytes, size_t size, const std::string& name, NpyArray* out, std::string* error) {
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) {
    *error = name + ": not a .npy file";
    return false;
  }
  size_t header_len = 0, header_start = 0;
  if (bytes[6] == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (size >= 12 && (bytes[6] == 2 || bytes[6] == 3)) {
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    *error = name + ": unsupported .npy version " + std::to_string(bytes[6]);
    return false;
  }
  if (header_len > size - header_start) {
    *error = name + ": truncated header (" + std::to_string(header_len) + " bytes announced, " +
             std::to_string(size - header_start) + " present)";
    return false;
  }
  NpyHeader header;
  std::string problem;
  HeaderParser parser(std::string_view(reinterpret_cast<const char*>(bytes) + header_start, header_len));
  if (!parser.parse(&header, &problem)) {
    *error = name + ": " + problem;
    return false;
  }
  if (header.fortran_order) {
    *error = name + ": Fortran-order arrays are not supported";
    return false;
  }
  // descr is <byte order><kind><size>: '<f4', '>i8', '|b1'.
  const std::string& descr = header.descr;
  NpyArray array;
  array.dtype = -1;
  size_t element = 0;
  for (const DescrEntry& entry : kDescrs)
    if (descr.size() == 3 && descr[1] == entry.kind && static_cast<size_t>(descr[2] - '0') == entry.bytes) {
      array.dtype = entry.dtype;
      element = entry.bytes;
    }
  bool big_endian = false;
  if (array.dtype >= 0) {
    char order = descr[0];
    if (order == '>') big_endian = true;
    else if (order == '|' && element != 1) array.dtype = -1;  // multi-byte data needs its byte order
    else if (order != '<' && order != '|') array.dtype = -1;
  }
  if (array.dtype < 0) {
    *error = name + ": unsupported dtype '" + printable(descr) +
             "' (supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 |b1, and '>' for big-endian)";
    return false;
  }
  size_t numel = 1;
  for (int64_t dim : header.shape) {
    if (__builtin_mul_overflow(numel, static_cast<size_t>(dim), &numel)) {
      *error = name + ": shape's element count overflows";
      return false;
    }
  }
  size_t nbytes = 0;
  if (__builtin_mul_overflow(numel, element, &nbytes)) {
    *error = name + ": shape's byte size overflows";
    return false;
  }
  array.shape = std::move(header.shape);
  size_t data_start = header_start + header_len;
  if (size - data_start < nbytes) {
    *error = name + ": has " + std::to_string(size - data_start) + " data bytes, shape needs " + std::to_string(nbytes);
    return false;
  }
  array.data.assign(bytes + data_start, bytes + data_start + nbytes);
  if (element > 1 && big_endian != (std::endian::native == std::endian::big)) swap_bytes(&array.data, element);
  *out = std::move(array);
  return true;
}

namespace {

// The whole file; false with *error naming it and the problem.
bool read_file(const std::string& path, std::vector<uint8_t>* bytes, std::string* error) {
  std::error_code ec;
  // A FIFO or device would block or never end; a directory opens but cannot be read.
  if (!std::filesystem::is_regular_file(path, ec)) {
    *error = path + (std::filesystem::exists(path, ec) ? ": not a regular file" : ": cannot open");
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  bytes->assign(std::istreambuf_iterator<char>(in), {});
  if (in.bad()) {
    *error = path + ": read error";
    return false;
  }
  return true;
}

}  // namespace

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  std::vector<uint8_t> bytes;
  return read_file(path, &bytes, error) && parse_npy(bytes.data(), bytes.size(), path, out, error);
}

bool read_input_file(const std::string& path, const NpyArray& declared, NpyArray* out, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!read_file(path, &bytes, error)) return false;
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.size() >= 6 && std::memcmp(bytes.data(), kMagic, 6) == 0)
    return parse_npy(bytes.data(), bytes.size(), path, out, error);
  if (bytes.size() != declared.data.size()) {
    *error = path + ": neither a .npy file nor the input's raw bytes: " + std::to_string(bytes.size()) +
             " bytes, the input takes " + std::to_string(declared.data.size());
    return false;
  }
  *out = declared;
  out->data = std::move(bytes);
  return true;
}

bool encode_npy(const NpyArray& array, std::string* bytes, std::string* problem) {
  std::string descr;
  for (const DescrEntry& entry : kDescrs)
    if (entry.dtype == array.dtype) {
      char order = entry.bytes == 1 ? '|' : std::endian::native == std::endian::big ? '>' : '<';
      descr = std::string(1, order) + entry.kind + std::to_string(entry.bytes);
    }
  if (descr.empty()) {
    *problem = "no .npy form for dtype " + std::to_string(array.dtype);
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
  const auto length = static_cast<uint16_t>(header.size());
  bytes->assign("\x93NUMPY\x01\x00", 8);
  *bytes += static_cast<char>(length & 0xff);
  *bytes += static_cast<char>(length >> 8);
  *bytes += header;
  bytes->append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return true;
}

}  // namespace etrt::tools
