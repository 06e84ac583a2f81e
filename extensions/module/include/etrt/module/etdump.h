// Profiling a Module: an EventTracer given to the Module's constructor traces
// every method it loads. ETDumpGen records ETDump (ExecuTorch's profile format,
// read by its Inspector) through etrt's "etdump" tracer plugin.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "etrt/etrt.hpp"
#include "etrt/module/result.h"
#include "etrt/module/tensor.h"

namespace etrt::extension {

// What a Module accepts as its event tracer: something that hands out a trace
// session of a tracer plugin.
class EventTracer {
 public:
  virtual ~EventTracer() = default;
  // The session the Module sets on each method it loads; created on first use
  // (this loads the tracer's plugin).
  virtual ::etrt::TraceSession& session() = 0;
};

struct ETDumpResult {
  void* buf = nullptr;  // malloc'ed: the caller frees it with free()
  size_t size = 0;
};

class ETDumpGen : public EventTracer {
 public:
  ETDumpGen() = default;

  // Bytes for instruction outputs (ETDump debug events), before the first
  // method is loaded. Only the buffer's size is used: etrt keeps its own copy.
  Result<bool> set_debug_buffer(Span<uint8_t> buffer) {
    if (session_) return Result<bool>(Error::InvalidState, "set_debug_buffer after a method was traced");
    debug_buffer_size_ = buffer.size();
    return true;
  }

  ::etrt::TraceSession& session() override {
    if (!session_) session_ = std::make_unique<::etrt::TraceSession>("etdump", debug_buffer_size_, "Module");
    return *session_;
  }

  // The ETDump of the runs so far ({nullptr, 0} before any run or on failure;
  // last_error() says why).
  ETDumpResult get_etdump_data() {
    ETDumpResult out;
    if (!session_) {
      last_error_ = "no method was traced yet";
      return out;
    }
    try {
      std::string bytes = session_->result("etdump");
      out.buf = std::malloc(bytes.size() ? bytes.size() : 1);
      if (out.buf == nullptr) {
        last_error_ = "out of memory copying the ETDump";
        return out;
      }
      std::memcpy(out.buf, bytes.data(), bytes.size());
      out.size = bytes.size();
    } catch (const ::etrt::Error& error) {
      last_error_ = error.what();
    }
    return out;
  }
  const std::string& last_error() const { return last_error_; }

 private:
  std::unique_ptr<::etrt::TraceSession> session_;
  size_t debug_buffer_size_ = 0;
  std::string last_error_;
};

}  // namespace etrt::extension
