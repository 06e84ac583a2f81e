// Decoding and encoding the containers of fuzz/structure/containers.h.
#include "containers.h"

#include <algorithm>
#include <cstring>

namespace etrt_fuzz {
namespace {

constexpr size_t kExtendedHeaderSize = 32;  // "eh00", length, program size, segment base, segment data size
constexpr size_t kSegmentAlignment = 64;
constexpr size_t kBlobHeaderSize = 30;      // zeros(4) "XH00" length(2) fb offset(4) fb size(4) constant offset(4) constant size(8)
constexpr size_t kBlobFlatbufferOffset = 32;

// Flatbuffer bytes copied to 16-byte aligned memory: the reads of the object API assume the
// alignment the builder gave the buffer.
class AlignedCopy {
 public:
  AlignedCopy(const uint8_t* data, size_t size) : chunks_((size + 15) / 16), size_(size) {
    if (size != 0) std::memcpy(chunks_.data(), data, size);
  }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(chunks_.data()); }
  size_t size() const { return size_; }

 private:
  struct alignas(16) Chunk {
    uint8_t bytes[16];
  };
  std::vector<Chunk> chunks_;
  size_t size_;
};

template <typename T>
T read_le(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

template <typename T>
void write_le(uint8_t* p, T value) {
  std::memcpy(p, &value, sizeof value);
}

size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

flatbuffers::Verifier::Options verifier_options() {
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 1u << 20;
  return options;
}

}  // namespace

bool decode_pte(const uint8_t* data, size_t size, PteFile* file) {
  if (size < 8 || std::memcmp(data + 4, pte::ProgramIdentifier(), 4) != 0) return false;
  size_t program_size = size;
  uint64_t segment_base = 0;
  file->extended_header = size >= 8 + kExtendedHeaderSize && std::memcmp(data + 8, "eh00", 4) == 0;
  if (file->extended_header) {
    uint64_t declared = read_le<uint64_t>(data + 16);
    if (declared < 16 || declared > size) return false;
    program_size = static_cast<size_t>(declared);
    segment_base = read_le<uint64_t>(data + 24);
  }
  AlignedCopy flatbuffer(data, program_size);
  flatbuffers::Verifier verifier(flatbuffer.data(), flatbuffer.size(), verifier_options());
  if (!pte::VerifyProgramBuffer(verifier)) return false;
  file->program.reset(pte::GetProgram(flatbuffer.data())->UnPack());
  file->segments.assign(file->program->segments.size(), {});
  file->raw.assign(file->program->segments.size(), true);
  for (size_t i = 0; i < file->program->segments.size(); ++i) {
    const pte::DataSegmentT& entry = *file->program->segments[i];
    if (segment_base == 0 || segment_base > size) continue;
    uint64_t available = size - segment_base;
    if (entry.offset > available || entry.size > available - entry.offset) continue;
    const uint8_t* begin = data + segment_base + entry.offset;
    file->segments[i].assign(begin, begin + entry.size);
    file->raw[i] = false;
  }
  return true;
}

std::vector<uint8_t> encode_pte(PteFile& file) {
  pte::ProgramT& program = *file.program;
  file.segments.resize(program.segments.size());
  file.raw.resize(program.segments.size(), true);
  size_t segment_bytes = 0;
  for (size_t i = 0; i < program.segments.size(); ++i) {
    if (file.raw[i]) continue;
    if (!program.segments[i]) program.segments[i] = std::make_unique<pte::DataSegmentT>();
    segment_bytes = align_up(segment_bytes, kSegmentAlignment);
    program.segments[i]->offset = segment_bytes;
    program.segments[i]->size = file.segments[i].size();
    segment_bytes += file.segments[i].size();
  }
  flatbuffers::FlatBufferBuilder builder(4096);
  pte::FinishProgramBuffer(builder, pte::Program::Pack(builder, &program));
  const uint8_t* packed = builder.GetBufferPointer();
  size_t packed_size = builder.GetSize();
  if (!file.extended_header && program.segments.empty()) return std::vector<uint8_t>(packed, packed + packed_size);

  // The header goes between the file identifier and the rest of the flatbuffer; every offset
  // in the flatbuffer is relative except the root's, which moves by the header's size (a
  // multiple of 16, so every alignment inside is kept).
  size_t program_size = packed_size + kExtendedHeaderSize;
  size_t segment_base = align_up(program_size, kSegmentAlignment);
  std::vector<uint8_t> out(segment_base + segment_bytes, 0);
  write_le<uint32_t>(out.data(), read_le<uint32_t>(packed) + kExtendedHeaderSize);
  std::memcpy(out.data() + 4, packed + 4, 4);
  std::memcpy(out.data() + 8, "eh00", 4);
  write_le<uint32_t>(out.data() + 12, kExtendedHeaderSize);
  write_le<uint64_t>(out.data() + 16, program_size);
  write_le<uint64_t>(out.data() + 24, segment_base);
  write_le<uint64_t>(out.data() + 32, segment_bytes);
  std::memcpy(out.data() + 8 + kExtendedHeaderSize, packed + 8, packed_size - 8);
  for (size_t i = 0; i < program.segments.size(); ++i)
    if (!file.raw[i] && !file.segments[i].empty())
      std::memcpy(out.data() + segment_base + program.segments[i]->offset, file.segments[i].data(),
                  file.segments[i].size());
  file.extended_header = true;
  return out;
}

bool decode_blob(const std::vector<uint8_t>& bytes, XnnBlob* blob) {
  const uint8_t* flatbuffer = bytes.data();
  size_t flatbuffer_size = bytes.size();
  blob->header = bytes.size() >= kBlobHeaderSize && std::memcmp(bytes.data() + 4, "XH00", 4) == 0;
  blob->constants.clear();
  if (blob->header) {
    uint64_t fb_offset = read_le<uint32_t>(bytes.data() + 10);
    uint64_t fb_size = read_le<uint32_t>(bytes.data() + 14);
    uint64_t c_offset = read_le<uint32_t>(bytes.data() + 18);
    uint64_t c_size = read_le<uint64_t>(bytes.data() + 22);
    if (fb_offset > bytes.size() || fb_size > bytes.size() - fb_offset) return false;
    if (c_offset > bytes.size() || c_size > bytes.size() - c_offset) return false;
    flatbuffer = bytes.data() + fb_offset;
    flatbuffer_size = fb_size;
    blob->constants.assign(bytes.begin() + static_cast<ptrdiff_t>(c_offset),
                           bytes.begin() + static_cast<ptrdiff_t>(c_offset + c_size));
  }
  if (flatbuffer_size < 8) return false;
  if (std::memcmp(flatbuffer + 4, "XN01", 4) != 0 && std::memcmp(flatbuffer + 4, "XN00", 4) != 0) return false;
  std::memcpy(blob->identifier, flatbuffer + 4, 4);
  AlignedCopy copy(flatbuffer, flatbuffer_size);
  flatbuffers::Verifier verifier(copy.data(), copy.size(), verifier_options());
  if (!verifier.VerifyBuffer<xnnblob::Graph>(nullptr)) return false;
  blob->graph.reset(flatbuffers::GetRoot<xnnblob::Graph>(copy.data())->UnPack());
  return true;
}

std::vector<uint8_t> encode_blob(const XnnBlob& blob) {
  flatbuffers::FlatBufferBuilder builder(4096);
  builder.Finish(xnnblob::Graph::Pack(builder, blob.graph.get()), blob.identifier);
  const uint8_t* packed = builder.GetBufferPointer();
  size_t packed_size = builder.GetSize();
  if (!blob.header) return std::vector<uint8_t>(packed, packed + packed_size);
  size_t constant_offset = align_up(kBlobFlatbufferOffset + packed_size, 16);
  uint8_t header[kBlobFlatbufferOffset] = {};
  std::memcpy(header + 4, "XH00", 4);
  write_le<uint16_t>(header + 8, static_cast<uint16_t>(kBlobHeaderSize));
  write_le<uint32_t>(header + 10, static_cast<uint32_t>(kBlobFlatbufferOffset));
  write_le<uint32_t>(header + 14, static_cast<uint32_t>(packed_size));
  write_le<uint32_t>(header + 18, static_cast<uint32_t>(constant_offset));
  write_le<uint64_t>(header + 22, blob.constants.size());
  std::vector<uint8_t> out(header, header + kBlobFlatbufferOffset);
  out.insert(out.end(), packed, packed + packed_size);
  out.resize(constant_offset, 0);
  out.insert(out.end(), blob.constants.begin(), blob.constants.end());
  return out;
}

std::vector<std::vector<uint8_t>*> delegate_payloads(PteFile& file) {
  std::vector<std::vector<uint8_t>*> payloads;
  pte::ProgramT& program = *file.program;
  for (const auto& plan : program.execution_plan) {
    if (!plan) continue;
    for (const auto& delegate : plan->delegates) {
      if (!delegate || !delegate->processed) continue;
      size_t index = delegate->processed->index;
      std::vector<uint8_t>* bytes = nullptr;
      if (delegate->processed->location == pte::DataLocation::INLINE) {
        if (index < program.backend_delegate_data.size() && program.backend_delegate_data[index])
          bytes = &program.backend_delegate_data[index]->data;
      } else if (index < file.segments.size() && !file.raw[index]) {
        bytes = &file.segments[index];
      }
      if (bytes != nullptr && std::find(payloads.begin(), payloads.end(), bytes) == payloads.end())
        payloads.push_back(bytes);
    }
  }
  return payloads;
}

}  // namespace etrt_fuzz
