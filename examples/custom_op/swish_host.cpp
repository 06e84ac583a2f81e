// A C++ host running the exported program with the custom operator's plugin:
//
//   swish_host MANIFEST MODEL.pte INPUT.npy OUTPUT.npy
//
// It adds the plugin's manifest (et_add_manifest), loads the program and its
// method (which loads the plugin, because the method calls my_ops::scaled_swish.out),
// runs it on a float32 .npy input and writes the first output as a float32 .npy.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"

namespace {

// A C-order little-endian float32 array; just enough .npy for this example.
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

Array read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  if (!in.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY") throw std::runtime_error(path + ": not a .npy file");
  uint32_t header_size = 0;
  unsigned char size_bytes[4] = {};
  in.read(reinterpret_cast<char*>(size_bytes), magic[6] == 1 ? 2 : 4);
  header_size = size_bytes[0] | size_bytes[1] << 8 | size_bytes[2] << 16 | uint32_t(size_bytes[3]) << 24;
  std::string header(header_size, '\0');
  if (!in.read(header.data(), header_size)) throw std::runtime_error(path + ": truncated header");
  if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": expected a C-order float32 array, header " + header);
  Array array;
  size_t open = header.find('(', header.find("'shape'")), close = header.find(')', open);
  std::stringstream dims(header.substr(open + 1, close - open - 1));
  size_t count = 1;
  for (std::string dim; std::getline(dims, dim, ',');)
    if (dim.find_first_not_of(' ') != std::string::npos) count *= array.shape.emplace_back(std::stoll(dim));
  array.data.resize(count);
  if (!in.read(reinterpret_cast<char*>(array.data.data()), std::streamsize(count * sizeof(float))))
    throw std::runtime_error(path + ": truncated data");
  return array;
}

void write_npy(const std::string& path, const float* data, const int64_t* sizes, int32_t rank) {
  std::string shape;
  size_t count = 1;
  for (int32_t i = 0; i < rank; ++i) shape += std::to_string(sizes[i]) + (rank == 1 ? "," : i + 1 < rank ? ", " : "");
  for (int32_t i = 0; i < rank; ++i) count *= size_t(sizes[i]);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ').push_back('\n');  // data starts 64-byte aligned
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  char size_bytes[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(size_bytes, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data), std::streamsize(count * sizeof(float)));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: swish_host MANIFEST MODEL.pte INPUT.npy OUTPUT.npy\n");
    return 2;
  }
  try {
    auto& runtime = etrt::Runtime::get();
    runtime.add_manifest(argv[1]);  // declares the plugin; nothing is loaded yet
    etrt::Program program = etrt::Program::load(argv[2]);
    etrt::Method method = program.load_method("forward");  // loads the plugins the method needs

    Array input = read_npy(argv[3]);
    std::vector<int64_t> strides(input.shape.size(), 1);
    for (size_t i = input.shape.size(); i-- > 1;) strides[i - 1] = strides[i] * input.shape[i];
    std::vector<uint8_t> dim_order(input.shape.size());
    for (size_t i = 0; i < dim_order.size(); ++i) dim_order[i] = uint8_t(i);
    size_t bytes = input.data.size() * sizeof(float);
    et_tensor tensor = {sizeof(et_tensor), ET_DTYPE_FLOAT32, int32_t(input.shape.size()), input.shape.data(),
                        dim_order.data(), strides.data(), input.data.data(), bytes, bytes, 0, 0};
    method.set_input(0, tensor);
    method.execute();

    const et_value& output = method.output(0);
    if (output.tag != ET_VALUE_TENSOR || output.tensor->dtype != ET_DTYPE_FLOAT32)
      throw std::runtime_error("output 0 is not a float32 tensor");
    write_npy(argv[4], static_cast<const float*>(output.tensor->data), output.tensor->sizes, output.tensor->rank);
    for (const auto& plugin : runtime.plugins())
      if (plugin.loaded()) std::printf("loaded: %s %s\n", plugin.name.c_str(), plugin.version.c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "swish_host: %s\n", error.what());
    return 1;
  }
  return 0;
}
