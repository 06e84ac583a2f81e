#include "data_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../error.h"
#include "resource_limits.h"

namespace etrt {
namespace {

// The extended header after the root offset and the identifier: "FH01", its
// length, then four little-endian u64 (flatbuffer offset and size, segment base
// offset, segment data size).
constexpr size_t kHeaderOffset = 8;
constexpr size_t kHeaderMinLength = 40;

uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool exceeds(uint64_t offset, uint64_t size, uint64_t limit) { return offset > limit || size > limit - offset; }

std::string quoted(std::string_view key) {
  std::string shown = "'";
  for (char c : key.substr(0, 200)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return shown + (key.size() > 200 ? "...'" : "'");
}

}  // namespace

et_error* read_file_bytes(const std::string& path, AlignedBuffer* out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return make_error(ET_ERR_NOT_FOUND, path + ": cannot open: " + (ec ? ec.message() : "not a regular file"));
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return make_error(ET_ERR_NOT_FOUND, path + ": cannot open: " + ec.message());
  if (size > file_size_limit())
    return make_error(ET_ERR_INVALID_ARGUMENT, path + ": " + std::to_string(size) + " bytes is larger than the " +
                                                   file_size_limit_text());
  AlignedBuffer bytes(static_cast<size_t>(size));
  if (size > 0 && bytes.data() == nullptr)
    return make_error(ET_ERR_OUT_OF_MEMORY, path + ": cannot allocate " + std::to_string(size) + " bytes");
  std::ifstream stream(path, std::ios::binary);
  if (!stream.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return make_error(ET_ERR_NOT_FOUND, path + ": cannot read");
  *out = std::move(bytes);
  return nullptr;
}

et_error* DataFile::load(AlignedBuffer bytes, const std::string& origin, std::shared_ptr<const DataFile>* out) {
  std::shared_ptr<DataFile> file(new DataFile());
  file->bytes_ = std::move(bytes);
  file->origin_ = origin;
  const uint8_t* data = file->bytes_.data();
  const size_t size = file->bytes_.size();
  auto fail = [&](const std::string& why) { return make_error(ET_ERR_INVALID_PROGRAM, origin + ": " + why); };
  if (size < kHeaderOffset + kHeaderMinLength || std::memcmp(data + 4, "FT01", 4) != 0)
    return fail(size >= 8 && std::memcmp(data + 4, "ET12", 4) == 0
                    ? "this is a program (.pte), not a data file (.ptd)"
                    : "not an ExecuTorch data file (no FT01 identifier at byte 4)");
  if (std::memcmp(data + kHeaderOffset, "FH01", 4) != 0) return fail("data file has no FH01 header at byte 8");
  uint32_t header_length = read_u32(data + kHeaderOffset + 4);
  uint64_t flatbuffer_offset = read_u64(data + kHeaderOffset + 8);
  uint64_t flatbuffer_size = read_u64(data + kHeaderOffset + 16);
  uint64_t segment_base = read_u64(data + kHeaderOffset + 24);
  uint64_t segment_bytes = read_u64(data + kHeaderOffset + 32);
  if (header_length < kHeaderMinLength || exceeds(kHeaderOffset, header_length, size))
    return fail("header length " + std::to_string(header_length) + " is invalid");
  // The header sits inside the flatbuffer (after its identifier), so the
  // flatbuffer spans [0, offset + size).
  if (exceeds(flatbuffer_offset, flatbuffer_size, size))
    return fail("header puts the flatbuffer at bytes " + std::to_string(flatbuffer_offset) + "+" +
                std::to_string(flatbuffer_size) + ", beyond the file's " + std::to_string(size) + " bytes");
  uint64_t flatbuffer_end = flatbuffer_offset + flatbuffer_size;
  if (segment_base != 0 && (segment_base < flatbuffer_end || exceeds(segment_base, segment_bytes, size)))
    return fail("header puts " + std::to_string(segment_bytes) + " bytes of segments at byte " +
                std::to_string(segment_base) + ", outside the file's " + std::to_string(size) + " bytes");
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  flatbuffers::Verifier verifier(data, static_cast<size_t>(flatbuffer_end), options);
  if (!ptd::VerifyDataFileBuffer(verifier)) return fail("data file flatbuffer failed verification (corrupt or truncated)");
  file->root_ = ptd::GetDataFile(data);
  file->segment_base_ = segment_base;
  uint64_t available = segment_base == 0 ? 0 : segment_bytes;
  const auto* segments = file->root_->segments();
  size_t segment_count = segments ? segments->size() : 0;
  for (size_t i = 0; i < segment_count; ++i) {
    const ptd::DataSegment* s = segments->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (s->size() > 0 && exceeds(s->offset(), s->size(), available))
      return fail("segment " + std::to_string(i) + " (offset " + std::to_string(s->offset()) + ", size " +
                  std::to_string(s->size()) + ") lies outside the " + std::to_string(available) +
                  " bytes of segment data");
  }
  if (const auto* named = file->root_->named_data())
    for (const ptd::NamedData* entry : *named) {
      if (entry->key() == nullptr) return fail("named data entry without a key");
      std::string_view key(entry->key()->c_str(), entry->key()->size());
      if (entry->segment_index() >= segment_count)
        return fail("key " + quoted(key) + " refers to segment " + std::to_string(entry->segment_index()) + " of " +
                    std::to_string(segment_count));
      const ptd::DataSegment* s = segments->Get(entry->segment_index());
      Entry resolved{data + segment_base + s->offset(), static_cast<size_t>(s->size()), entry->tensor_layout()};
      if (const ptd::TensorLayout* layout = resolved.layout) {
        size_t rank = layout->sizes() ? layout->sizes()->size() : 0;
        size_t order_rank = layout->dim_order() ? layout->dim_order()->size() : 0;
        if (rank > ET_MAX_RANK || order_rank != rank)
          return fail("key " + quoted(key) + ": tensor layout has rank " + std::to_string(rank) + " and " +
                      std::to_string(order_rank) + " dim order entries");
      }
      if (!file->entries_.emplace(key, resolved).second) return fail("key " + quoted(key) + " appears twice");
    }
  *out = std::move(file);
  return nullptr;
}

const DataFile::Entry* DataFile::find(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace etrt
