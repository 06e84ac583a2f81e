// Writes an EventLog as ETDump: a size-prefixed flatbuffer with identifier
// ED00, one RunData per block, which ExecuTorch's deserializer and Inspector read.
#pragma once

#include <cstdint>
#include <vector>

#include "event_log.h"

namespace etrt::etdump {

// The ETDump version this writer produces.
constexpr uint32_t kEtdumpVersion = 0;

std::vector<uint8_t> write_etdump(const EventLog& log);

}  // namespace etrt::etdump
