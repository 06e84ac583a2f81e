// The structure-aware fuzzer's view of a program file: the .pte flatbuffer as an
// object tree (flatc's object API), the bytes of each data segment, and, inside
// those bytes, XNNPACK delegate blobs as object trees of their own. Decoding
// and encoding keep the file valid as a container -- the extended header, the
// segment table, the blob header's offsets are recomputed from the contents --
// so that mutations of the fields reach the loader, not the framing checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "program_object_api.h"
#include "xnnpack_blob_object_api.h"

namespace etrt_fuzz {

namespace pte = etrt::pte;
namespace xnnblob = etrt::xnnblob;

struct PteFile {
  std::unique_ptr<pte::ProgramT> program;
  // segments[i]: the bytes of program->segments[i], laid out afresh by encode_pte. An entry
  // marked raw keeps its own offset and size (it pointed outside the file when read, or a
  // mutation changed it) and has no bytes.
  std::vector<std::vector<uint8_t>> segments;
  std::vector<bool> raw;
  bool extended_header = false;
};

// Verifies the flatbuffer (extended header, if any, included) and unpacks it. False for
// anything that is not a verifiable program.
bool decode_pte(const uint8_t* data, size_t size, PteFile* file);

// Packs the program, writes the extended header when the file has one or has segments,
// and lays the segments out after it (64-byte aligned), updating program->segments.
std::vector<uint8_t> encode_pte(PteFile& file);

struct XnnBlob {
  std::unique_ptr<xnnblob::GraphT> graph;
  std::vector<uint8_t> constants;  // the constant region after the flatbuffer (header blobs only)
  bool header = false;             // XH00 header present (otherwise the flatbuffer is the whole blob)
  char identifier[5] = "XN01";
};

// True when `bytes` is an XNNPACK delegate blob (with or without its XH00 header) whose
// flatbuffer verifies.
bool decode_blob(const std::vector<uint8_t>& bytes, XnnBlob* blob);
std::vector<uint8_t> encode_blob(const XnnBlob& blob);

// The byte strings that hold a delegate's payload: inline delegate data and segments
// named by some delegate's `processed` reference.
std::vector<std::vector<uint8_t>*> delegate_payloads(PteFile& file);

}  // namespace etrt_fuzz
