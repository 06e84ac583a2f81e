// TrainingModule::save_parameters: the parameters as a .ptd, ExecuTorch's flat tensor data file, in the
// layout its serializer writes and both runtimes read:
//   [0, 8)     the flatbuffer's root offset and its identifier "FT01"
//   [8, 48)    the extended header: "FH01", its length (40), then u64 flatbuffer offset (48) and size
//              (the flatbuffer's bytes after its first 8), segment base offset and segment data size
//   [48, ...)  the rest of the flatbuffer (so the root offset grows by the header's 40 bytes)
//   segments   from the segment base (aligned), one per tensor, each aligned to kTensorAlignment
// Each tensor is a NamedData keyed by its fully qualified name, with its dtype, sizes and dim order.
#include <cstring>
#include <fstream>

#include "data_file_generated.h"
#include "etrt/training/training_module.h"

namespace etrt::training {
namespace {

constexpr size_t kHeaderLength = 40;
constexpr size_t kTensorAlignment = 16;
constexpr size_t kSegmentAlignment = 128;

size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

}  // namespace

std::string parameters_file_bytes(const NamedTensors& parameters) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<flatbuffers::Offset<ptd::DataSegment>> segments;
  std::vector<flatbuffers::Offset<ptd::NamedData>> named;
  size_t data_size = 0;
  for (const auto& [name, tensor] : parameters) {
    data_size = align_up(data_size, kTensorAlignment);
    segments.push_back(ptd::CreateDataSegment(builder, data_size, tensor->nbytes));
    data_size += tensor->nbytes;
    std::vector<int32_t> sizes(tensor->sizes, tensor->sizes + tensor->rank);
    std::vector<uint8_t> dim_order(tensor->dim_order, tensor->dim_order + tensor->rank);
    auto layout = ptd::CreateTensorLayoutDirect(builder, static_cast<pte::ScalarType>(tensor->dtype), &sizes, &dim_order);
    named.push_back(ptd::CreateNamedDataDirect(builder, name.c_str(), static_cast<uint32_t>(named.size()), layout));
  }
  builder.Finish(ptd::CreateDataFileDirect(builder, 0, &segments, &named), "FT01");
  const auto* fb = reinterpret_cast<const char*>(builder.GetBufferPointer());
  const size_t fb_size = builder.GetSize();

  std::string out(fb, 8);
  uint32_t root;
  std::memcpy(&root, out.data(), sizeof root);
  root += kHeaderLength;
  std::memcpy(out.data(), &root, sizeof root);
  const size_t flatbuffer_end = fb_size + kHeaderLength;
  const size_t segment_base = align_up(flatbuffer_end, kSegmentAlignment);
  out += "FH01";
  put_u32(out, kHeaderLength);
  put_u64(out, 8 + kHeaderLength);  // where the flatbuffer continues
  put_u64(out, fb_size - 8);
  put_u64(out, segment_base);
  put_u64(out, data_size);
  out.append(fb + 8, fb_size - 8);
  out.resize(segment_base, '\0');
  for (const auto& [name, tensor] : parameters) {
    out.resize(segment_base + align_up(out.size() - segment_base, kTensorAlignment), '\0');
    out.append(static_cast<const char*>(tensor->data), tensor->nbytes);
  }
  return out;
}

void TrainingModule::save_parameters(const std::string& path, const std::string& method) {
  const std::string bytes = parameters_file_bytes(named_parameters(method));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !file.flush())
    throw Error(ET_ERR_INVALID_ARGUMENT, "cannot write the parameters to '" + path + "'");
}

}  // namespace etrt::training
