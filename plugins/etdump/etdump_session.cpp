#include "etdump_session.h"

#include <map>
#include <utility>

#include "chrome_trace.h"
#include "etrt/plugin.hpp"
#include "etdump_writer.h"

namespace etrt::etdump {
namespace {

// Fields added in ABI 1.3 are read only when the host's event has them.
bool has_1_3_fields(const et_trace_event& event) {
  return event.struct_size >= offsetof(et_trace_event, thread) + sizeof(event.thread);
}

int32_t to_int32(int64_t value) { return value < INT32_MIN || value > INT32_MAX ? -1 : static_cast<int32_t>(value); }

}  // namespace

EtdumpSession::EtdumpSession(std::string label, size_t debug_buffer_size, uint64_t memory_limit)
    : label_(std::move(label)), buffer_(debug_buffer_size), memory_limit_(memory_limit) {
  execute_block_ = log_.intern("Execute");
  method_execute_ = log_.intern("Method::execute");  // ExecuTorch's name for the span of one run
  delegate_call_ = log_.intern("DELEGATE_CALL");      // ExecuTorch's: the Inspector attaches delegate metadata to it
  open_spans_.reserve(16);
}

void EtdumpSession::begin(const et_trace_event& event) {
  if (event.kind == ET_TRACE_METHOD) check_memory();
  if (stopped_) return;
  if (event.kind == ET_TRACE_METHOD) log_.begin_block(execute_block_);
  open_spans_.push_back(event.timestamp_ns);
}

void EtdumpSession::end(const et_trace_event& event) {
  if (stopped_ || open_spans_.empty()) return;  // an end without a begin: nothing to pair it with
  ProfileRecord record;
  record.start_ns = open_spans_.back();
  record.end_ns = event.timestamp_ns;
  open_spans_.pop_back();
  record.chain = to_int32(event.chain_id < 0 ? 0 : event.chain_id);
  record.instruction = to_int32(event.id);
  const bool modern = has_1_3_fields(event);
  if (modern && event.plugin != nullptr) record.plugin = log_.intern_stable(event.plugin);
  if (modern) record.thread = event.thread;
  const char* name = event.name != nullptr ? event.name : "";
  switch (event.kind) {
    case ET_TRACE_METHOD:
      record.name = method_execute_;
      record.instruction = -1;
      break;
    case ET_TRACE_DELEGATE:
      record.name = delegate_call_;
      break;
    case ET_TRACE_DELEGATE_EVENT:
      record.name = log_.intern_stable(name);
      if (event.debug_handle >= 0)
        record.delegate_id_int = to_int32(event.debug_handle);
      else
        record.delegate_id_str = record.name;
      break;
    case ET_TRACE_WORKER:
      record.name = log_.intern_stable(name);
      record.in_etdump = false;
      break;
    default:
      record.name = log_.intern_stable(name);
      break;
  }
  log_.add(record);
  counted_check();
}

void EtdumpSession::span(const et_trace_event& event, uint64_t start_ns) {
  if (stopped_) return;
  if (event.kind != ET_TRACE_OPERATOR && event.kind != ET_TRACE_DELEGATE) {  // not an instruction: as a pair
    et_trace_event first = event;
    first.timestamp_ns = start_ns;
    begin(first);
    end(event);
    return;
  }
  ProfileRecord record;
  record.start_ns = start_ns;
  record.end_ns = event.timestamp_ns;
  record.chain = to_int32(event.chain_id < 0 ? 0 : event.chain_id);
  record.instruction = to_int32(event.id);
  record.thread = event.thread;
  record.kept_plugin = event.plugin;
  if (event.kind == ET_TRACE_DELEGATE)
    record.name = delegate_call_;
  else
    record.kept_name = event.name;
  log_.add_unresolved(record);
  counted_check();
}

void EtdumpSession::value(const et_trace_event& event, const et_value& value, bool is_method_output) {
  if (stopped_) return;
  DebugRecord record;
  record.chain = event.chain_id < 0 ? 0 : static_cast<uint64_t>(event.chain_id);
  record.instruction = is_method_output ? -1 : to_int32(event.id);
  if (event.kind == ET_TRACE_OPERATOR && event.name != nullptr) record.name = log_.intern_stable(event.name);
  record.is_output = is_method_output;
  auto capture = [&](const et_tensor& t) {
    TensorRecord tensor;
    tensor.scalar_type = static_cast<int8_t>(t.dtype);
    tensor.sizes.assign(t.sizes, t.sizes + t.rank);
    tensor.strides.assign(t.strides, t.strides + t.rank);
    std::optional<int64_t> offset = buffer_.append(t.data, t.data != nullptr ? t.nbytes : 0);
    tensor.offset = offset.value_or(-1);  // overflow: reported when the result is fetched
    record.tensors.push_back(std::move(tensor));
  };
  switch (value.tag) {
    case ET_VALUE_INT: record.kind = DebugRecord::Kind::Int, record.int_value = value.as_int; break;
    case ET_VALUE_BOOL: record.kind = DebugRecord::Kind::Bool, record.bool_value = value.as_int != 0; break;
    case ET_VALUE_DOUBLE: record.kind = DebugRecord::Kind::Double, record.double_value = value.as_double; break;
    case ET_VALUE_TENSOR:
      if (value.tensor == nullptr) return;
      record.kind = DebugRecord::Kind::Tensor;
      capture(*value.tensor);
      break;
    case ET_VALUE_TENSOR_LIST: {
      record.kind = DebugRecord::Kind::TensorList;
      auto* items = static_cast<et_tensor* const*>(value.items);
      for (size_t i = 0; items != nullptr && i < value.count; ++i)
        if (items[i] != nullptr) capture(*items[i]);
      break;
    }
    default:
      return;  // lists of scalars, strings, None: nothing ETDump can carry
  }
  log_.add(std::move(record));
  check_memory();
}

bool EtdumpSession::buffer_overflow(int32_t* error_code, std::string* error) const {
  if (!buffer_.overflowed()) return false;
  *error_code = ET_ERR_OUT_OF_MEMORY;
  *error = "the debug buffer of " + std::to_string(buffer_.capacity()) +
           " bytes is too small: the traced runs needed " + std::to_string(buffer_.needed()) +
           " bytes (set debug_buffer_size to at least " + std::to_string(buffer_.needed()) + ")";
  return true;
}

bool EtdumpSession::stopped(int32_t* error_code, std::string* error) const {
  if (!stopped_) return false;
  *error_code = ET_ERR_OUT_OF_MEMORY;
  *error = out_of_memory_
               ? "the session ran out of memory while recording; its results are incomplete"
               : "the session holds more than the " + plugin::byte_size_text(memory_limit_) +
                     " a tracing session may (ETRT_MAX_TRACE_MEMORY) and stopped recording after " +
                     std::to_string(log_.event_count()) +
                     " events; raise the limit (e.g. ETRT_MAX_TRACE_MEMORY=16G) or trace fewer runs";
  return true;
}

std::string EtdumpSession::operator_summary() const {
  struct Row {
    std::string kind;
    uint64_t calls = 0, total_ns = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  for (const RunBlock& block : log_.blocks()) {
    for (const EventRecord& event : log_.events(block)) {
      if (!event.is_profile) continue;
      const ProfileRecord& p = log_.profile(event);
      if (!p.in_etdump || p.delegate_id_int >= 0 || p.delegate_id_str != kNoName) continue;
      const std::string& name = log_.text(p.name);
      Row& row = rows[{name, log_.text(p.plugin)}];
      row.kind = p.instruction < 0 ? "method" : name == "DELEGATE_CALL" ? "delegate" : "operator";
      row.calls += 1;
      row.total_ns += p.end_ns >= p.start_ns ? p.end_ns - p.start_ns : 0;
    }
  }
  std::string out;
  for (const auto& [key, row] : rows)
    out += key.first + '\t' + key.second + '\t' + row.kind + '\t' + std::to_string(row.calls) + '\t' +
           std::to_string(row.total_ns) + '\n';
  return out;
}

bool EtdumpSession::result(const std::string& what, std::string* out, int32_t* error_code,
                           std::string* error) {
  if (stopped(error_code, error)) return false;
  log_.finish(method_execute_, delegate_call_);
  if (what == "etdump") {
    if (buffer_overflow(error_code, error)) return false;
    std::vector<uint8_t> bytes = write_etdump(log_);
    out->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  } else if (what == "debug_buffer") {
    if (buffer_overflow(error_code, error)) return false;
    out->assign(reinterpret_cast<const char*>(buffer_.bytes().data()), buffer_.bytes().size());
  } else if (what == "chrome_trace") {
    *out = write_chrome_trace(log_, "etrt" + (label_.empty() ? std::string() : ": " + label_));
  } else if (what == "operator_summary") {
    *out = operator_summary();
  } else {
    *error_code = ET_ERR_NOT_FOUND;
    *error = "the etdump tracer has no result named '" + what +
             "'; it has etdump, debug_buffer, chrome_trace, operator_summary";
    return false;
  }
  return true;
}

}  // namespace etrt::etdump
