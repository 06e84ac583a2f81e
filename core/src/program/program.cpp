#include "program.h"

#include <cstring>
#include <limits>

#include "../error.h"
#include "checked_size.h"
#include "etrt/plugin.hpp"

namespace etrt {
namespace {

constexpr size_t kMaxRank = ET_MAX_RANK;

std::string at_value(size_t index) { return "value " + std::to_string(index); }

// a + b > limit, without overflowing.
bool add_overflows(uint64_t a, uint64_t b, uint64_t limit) {
  uint64_t sum = 0;
  return !checked_add(a, b, &sum) || sum > limit;
}

// The verifier checks a vector's 4-byte length field, not that 8-byte elements
// are 8-byte aligned; flatc always aligns them, a corrupt file need not.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr || reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

}  // namespace

size_t scalar_type_size(int32_t scalar_type) { return plugin::element_size(scalar_type); }

const char* scalar_type_name(int32_t scalar_type) { return plugin::dtype_name(scalar_type); }

bool Program::tensor_nbytes(const pte::Tensor& tensor, size_t* nbytes, std::string* error) {
  size_t element = scalar_type_size(static_cast<int32_t>(tensor.scalar_type()));
  if (element == 0) {
    *error = "unsupported scalar type " + std::to_string(static_cast<int>(tensor.scalar_type()));
    return false;
  }
  size_t rank = tensor.sizes() ? tensor.sizes()->size() : 0;
  if (rank > kMaxRank) {
    *error = "rank " + std::to_string(rank) + " exceeds " + std::to_string(kMaxRank);
    return false;
  }
  int64_t sizes[kMaxRank];
  for (size_t i = 0; i < rank; ++i) sizes[i] = tensor.sizes()->Get(static_cast<flatbuffers::uoffset_t>(i));
  const ShapeSize shape = measure_shape(sizes, rank, element);
  if (!shape.ok()) {
    *error = shape.fault_text();
    return false;
  }
  *nbytes = shape.nbytes;
  return true;
}

et_error* Program::load(AlignedBuffer bytes, const std::string& origin, std::shared_ptr<Program>* out) {
  std::shared_ptr<Program> program(new Program());
  program->bytes_ = std::move(bytes);
  program->origin_ = origin;
  const uint8_t* data = program->bytes_.data();
  size_t size = program->bytes_.size();
  std::string error;
  if (data == nullptr && size > 0) return make_error(ET_ERR_OUT_OF_MEMORY, origin + ": out of memory");
  if (!parse_pte_header(data, size, &program->header_, &error))
    return make_error(ET_ERR_INVALID_PROGRAM, origin + ": " + error);

  // Flatbuffer verification bounds every table, vector and string to the program region.
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 10'000'000;
  flatbuffers::Verifier verifier(data, static_cast<size_t>(program->header_.program_size), options);
  if (!pte::VerifyProgramBuffer(verifier))
    return make_error(ET_ERR_INVALID_PROGRAM, origin + ": program flatbuffer failed verification (corrupt or truncated file)");
  program->root_ = pte::GetProgram(data);
  error = program->validate();
  if (!error.empty()) return make_error(ET_ERR_INVALID_PROGRAM, origin + ": " + error);
  *out = std::move(program);
  return nullptr;
}

std::string Program::validate() {
  const pte::Program& p = *root_;
  // Segments must lie inside the segment data region of the file.
  if (p.segments() != nullptr && p.segments()->size() > 0) {
    // Without an extended header there is no segment data: only empty segments are possible.
    uint64_t available = header_.segment_base_offset == 0 ? 0 : bytes_.size() - header_.segment_base_offset;
    for (flatbuffers::uoffset_t i = 0; i < p.segments()->size(); ++i) {
      const pte::DataSegment* segment = p.segments()->Get(i);
      if (segment->size() > 0 && add_overflows(segment->offset(), segment->size(), available))
        return "segment " + std::to_string(i) + " (offset " + std::to_string(segment->offset()) + ", size " +
               std::to_string(segment->size()) + ") extends past the end of the file";
    }
  }
  size_t segment_count = p.segments() ? p.segments()->size() : 0;
  auto check_subsegments = [&](const pte::SubsegmentOffsets* sub, const char* what) -> std::string {
    if (sub == nullptr || sub->offsets() == nullptr) return "";
    if (!elements_aligned(sub->offsets())) return std::string(what) + " offsets are misaligned";
    if (sub->offsets()->size() <= 1) return "";
    if (sub->segment_index() >= segment_count)
      return std::string(what) + " refers to segment " + std::to_string(sub->segment_index()) + " of " +
             std::to_string(segment_count);
    uint64_t limit = segment(sub->segment_index()).size;
    for (flatbuffers::uoffset_t i = 0; i < sub->offsets()->size(); ++i)
      if (sub->offsets()->Get(i) > limit)
        return std::string(what) + " offset " + std::to_string(i) + " lies outside its segment";
    return "";
  };
  if (std::string e = check_subsegments(p.constant_segment(), "constant segment"); !e.empty()) return e;
  if (p.mutable_data_segments() != nullptr)
    for (const pte::SubsegmentOffsets* sub : *p.mutable_data_segments())
      if (std::string e = check_subsegments(sub, "mutable data segment"); !e.empty()) return e;
  if (p.constant_segment() != nullptr && p.constant_segment()->offsets() != nullptr &&
      p.constant_segment()->offsets()->size() > 1 && p.constant_buffer() != nullptr && p.constant_buffer()->size() > 1)
    return "program uses both the constant segment and inline constant buffers";
  if (p.named_data() != nullptr)
    for (const pte::NamedData* named : *p.named_data()) {
      if (named->key() == nullptr) return "named data entry without a key";
      if (named->segment_index() >= segment_count)
        return "named data '" + named->key()->str() + "' refers to segment " +
               std::to_string(named->segment_index()) + " of " + std::to_string(segment_count);
    }
  if (p.execution_plan() == nullptr || p.execution_plan()->size() == 0) return "program has no methods";
  for (const pte::ExecutionPlan* plan : *p.execution_plan()) {
    if (plan->name() == nullptr) return "a method has no name";
    if (std::string e = validate_plan(*plan); !e.empty()) return "method '" + plan->name()->str() + "': " + e;
  }
  return "";
}

std::string Program::validate_plan(const pte::ExecutionPlan& plan) {
  const auto* values = plan.values();
  size_t value_count = values ? values->size() : 0;
  auto value_ok = [&](int64_t index) { return index >= 0 && static_cast<uint64_t>(index) < value_count; };
  auto tag_of = [&](int64_t index) { return values->Get(static_cast<flatbuffers::uoffset_t>(index))->val_type(); };

  const auto* buffer_sizes = plan.non_const_buffer_sizes();
  if (!elements_aligned(buffer_sizes)) return "planned buffer sizes are misaligned";
  size_t buffer_count = buffer_sizes ? buffer_sizes->size() : 0;
  for (size_t i = 1; i < buffer_count; ++i)
    if (buffer_sizes->Get(static_cast<flatbuffers::uoffset_t>(i)) < 0) return "negative planned buffer size";

  for (size_t v = 0; v < value_count; ++v) {
    const pte::EValue* value = values->Get(static_cast<flatbuffers::uoffset_t>(v));
    if (value->val_type() != pte::KernelTypes::NONE && value->val() == nullptr)
      return at_value(v) + " declares a type but has no content";
    switch (value->val_type()) {
      case pte::KernelTypes::NONE:
        return at_value(v) + " has no type";
      case pte::KernelTypes::Tensor: {
        const pte::Tensor* t = value->val_as_Tensor();
        size_t nbytes = 0;
        std::string error;
        if (!tensor_nbytes(*t, &nbytes, &error)) return at_value(v) + ": " + error;
        size_t rank = t->sizes() ? t->sizes()->size() : 0;
        size_t order_rank = t->dim_order() ? t->dim_order()->size() : 0;
        if (order_rank != rank) return at_value(v) + ": dim order has " + std::to_string(order_rank) + " entries for rank " + std::to_string(rank);
        uint32_t seen = 0;
        for (size_t i = 0; i < rank; ++i) {
          uint8_t d = t->dim_order()->Get(static_cast<flatbuffers::uoffset_t>(i));
          if (d >= rank || (seen & (1u << d))) return at_value(v) + ": dim order is not a permutation";
          seen |= 1u << d;
        }
        if (t->storage_offset() != 0) return at_value(v) + ": non-zero storage offset is not supported";
        if (t->shape_dynamism() == pte::TensorShapeDynamism::DYNAMIC_UNBOUND)
          return at_value(v) + ": unbounded dynamic shapes are not supported";
        if (t->extra_tensor_info() != nullptr && t->extra_tensor_info()->location() == pte::TensorDataLocation::EXTERNAL) {
          // Found by name in an attached .ptd when a method loads (external_tensor).
          const flatbuffers::String* name = t->extra_tensor_info()->fully_qualified_name();
          if (name == nullptr || name->size() == 0) return at_value(v) + ": external tensor without a name";
          if (t->allocation_info() != nullptr)
            return at_value(v) + ": external data for a memory-planned tensor is not supported";
          break;
        }
        if (const pte::AllocationDetails* alloc = t->allocation_info()) {
          uint32_t id = alloc->memory_id();
          if (id == 0 || id >= buffer_count)
            return at_value(v) + ": memory id " + std::to_string(id) + " out of range (" + std::to_string(buffer_count) + " buffers, 1-based)";
          uint64_t offset = (static_cast<uint64_t>(alloc->memory_offset_high()) << 32) | alloc->memory_offset_low();
          uint64_t capacity = static_cast<uint64_t>(buffer_sizes->Get(id));
          if (add_overflows(offset, nbytes, capacity))
            return at_value(v) + ": " + std::to_string(nbytes) + " bytes at offset " + std::to_string(offset) +
                   " exceed planned buffer " + std::to_string(id) + " of " + std::to_string(capacity) + " bytes";
          size_t element = scalar_type_size(static_cast<int32_t>(t->scalar_type()));
          if (offset % element != 0)
            return at_value(v) + ": planned offset " + std::to_string(offset) + " is not aligned to its " +
                   std::to_string(element) + "-byte elements";
          if (t->data_buffer_idx() > 0 && mutable_initial_data(t->data_buffer_idx()).size < nbytes)
            return at_value(v) + ": initial data " + std::to_string(t->data_buffer_idx()) + " is missing or too small";
        } else if (t->data_buffer_idx() > 0) {
          ByteSpan constant = constant_data(t->data_buffer_idx());
          if (constant.size < nbytes)
            return at_value(v) + ": constant " + std::to_string(t->data_buffer_idx()) + " is missing or smaller than the tensor's " + std::to_string(nbytes) + " bytes";
          size_t element = scalar_type_size(static_cast<int32_t>(t->scalar_type()));
          if (nbytes > 0 && reinterpret_cast<uintptr_t>(constant.data) % element != 0)
            return at_value(v) + ": constant " + std::to_string(t->data_buffer_idx()) + " is not aligned to its " +
                   std::to_string(element) + "-byte elements";
        }
        break;
      }
      case pte::KernelTypes::IntList:
        if (!elements_aligned(value->val_as_IntList()->items())) return at_value(v) + ": int list is misaligned";
        if (value->val_as_IntList()->items())
          for (int64_t item : *value->val_as_IntList()->items())
            if (!value_ok(item) || tag_of(item) != pte::KernelTypes::Int)
              return at_value(v) + ": int list item " + std::to_string(item) + " is not an int value";
        break;
      case pte::KernelTypes::TensorList:
        if (value->val_as_TensorList()->items())
          for (int32_t item : *value->val_as_TensorList()->items())
            if (!value_ok(item) || tag_of(item) != pte::KernelTypes::Tensor)
              return at_value(v) + ": tensor list item " + std::to_string(item) + " is not a tensor value";
        break;
      case pte::KernelTypes::OptionalTensorList:
        if (value->val_as_OptionalTensorList()->items())
          for (int32_t item : *value->val_as_OptionalTensorList()->items())
            if (item != -1 && (!value_ok(item) || (tag_of(item) != pte::KernelTypes::Tensor && tag_of(item) != pte::KernelTypes::Null)))
              return at_value(v) + ": optional tensor list item " + std::to_string(item) + " is not a tensor value";
        break;
      case pte::KernelTypes::DoubleList:
        if (!elements_aligned(value->val_as_DoubleList()->items())) return at_value(v) + ": double list is misaligned";
        break;
      default:
        break;
    }
  }
  for (const auto* list : {plan.inputs(), plan.outputs()})
    if (list != nullptr)
      for (int32_t index : *list)
        if (!value_ok(index)) return "input/output index " + std::to_string(index) + " out of range (" + std::to_string(value_count) + " values)";

  size_t operator_count = plan.operators() ? plan.operators()->size() : 0;
  for (size_t i = 0; i < operator_count; ++i)
    if (plan.operators()->Get(static_cast<flatbuffers::uoffset_t>(i))->name() == nullptr)
      return "operator " + std::to_string(i) + " has no name";
  size_t delegate_count = plan.delegates() ? plan.delegates()->size() : 0;
  for (size_t i = 0; i < delegate_count; ++i) {
    const pte::BackendDelegate* d = plan.delegates()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (d->id() == nullptr || d->processed() == nullptr) return "delegate " + std::to_string(i) + " lacks an id or data";
    size_t inline_count = root_->backend_delegate_data() ? root_->backend_delegate_data()->size() : 0;
    size_t segment_count = root_->segments() ? root_->segments()->size() : 0;
    bool is_inline = d->processed()->location() == pte::DataLocation::INLINE;
    if (d->processed()->index() >= (is_inline ? inline_count : segment_count))
      return "delegate " + std::to_string(i) + " data index " + std::to_string(d->processed()->index()) + " out of range";
    if (is_inline && root_->backend_delegate_data()->Get(d->processed()->index())->data() == nullptr)
      return "delegate " + std::to_string(i) + " has no inline data";
    if (d->compile_specs())
      for (const pte::CompileSpec* spec : *d->compile_specs())
        if (spec->key() == nullptr) return "delegate " + std::to_string(i) + " has a compile spec without a key";
  }
  if (plan.chains() == nullptr) return "";
  for (size_t c = 0; c < plan.chains()->size(); ++c) {
    const pte::Chain* chain = plan.chains()->Get(static_cast<flatbuffers::uoffset_t>(c));
    size_t count = chain->instructions() ? chain->instructions()->size() : 0;
    for (size_t i = 0; i < count; ++i) {
      const pte::Instruction* instr = chain->instructions()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string where = "instruction " + std::to_string(i) + " of chain " + std::to_string(c);
      if (instr->instr_args() == nullptr) return where + " has no arguments table";
      auto check_args = [&](const flatbuffers::Vector<int32_t>* args) -> std::string {
        if (args != nullptr)
          for (int32_t a : *args)
            if (!value_ok(a)) return where + ": argument " + std::to_string(a) + " out of range (" + std::to_string(value_count) + " values)";
        return "";
      };
      switch (instr->instr_args_type()) {
        case pte::InstructionArguments::KernelCall: {
          const auto* call = instr->instr_args_as_KernelCall();
          if (call->op_index() < 0 || static_cast<size_t>(call->op_index()) >= operator_count)
            return where + ": operator index " + std::to_string(call->op_index()) + " out of range";
          if (std::string e = check_args(call->args()); !e.empty()) return e;
          break;
        }
        case pte::InstructionArguments::DelegateCall: {
          const auto* call = instr->instr_args_as_DelegateCall();
          if (call->delegate_index() < 0 || static_cast<size_t>(call->delegate_index()) >= delegate_count)
            return where + ": delegate index " + std::to_string(call->delegate_index()) + " out of range";
          if (std::string e = check_args(call->args()); !e.empty()) return e;
          break;
        }
        case pte::InstructionArguments::MoveCall: {
          const auto* call = instr->instr_args_as_MoveCall();
          if (!value_ok(call->move_from()) || !value_ok(call->move_to())) return where + ": move index out of range";
          break;
        }
        case pte::InstructionArguments::JumpFalseCall: {
          const auto* call = instr->instr_args_as_JumpFalseCall();
          if (!value_ok(call->cond_value_index())) return where + ": condition index out of range";
          if (call->destination_instruction() < 0 || static_cast<size_t>(call->destination_instruction()) > count)
            return where + ": jump destination out of range";
          break;
        }
        case pte::InstructionArguments::FreeCall:
          if (!value_ok(instr->instr_args_as_FreeCall()->value_index())) return where + ": free index out of range";
          break;
        default:
          return where + ": unknown instruction type";
      }
    }
  }
  return "";
}

size_t Program::method_count() const { return root_->execution_plan()->size(); }

std::string Program::method_name(size_t index) const {
  return root_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(index))->name()->str();
}

const pte::ExecutionPlan* Program::plan(const std::string& name) const {
  for (const pte::ExecutionPlan* plan : *root_->execution_plan())
    if (plan->name()->str() == name) return plan;
  return nullptr;
}

ByteSpan Program::segment(size_t index) const {
  const auto* segments = root_->segments();
  if (segments == nullptr || index >= segments->size()) return {};
  const pte::DataSegment* s = segments->Get(static_cast<flatbuffers::uoffset_t>(index));
  if (s->size() == 0) return {};
  return {bytes_.data() + header_.segment_base_offset + s->offset(), static_cast<size_t>(s->size())};
}

ByteSpan Program::constant_data(uint32_t buffer_index) const {
  const pte::SubsegmentOffsets* sub = root_->constant_segment();
  if (sub != nullptr && sub->offsets() != nullptr && sub->offsets()->size() > 1) {
    if (buffer_index >= sub->offsets()->size()) return {};
    ByteSpan whole = segment(sub->segment_index());
    uint64_t offset = sub->offsets()->Get(buffer_index);
    if (offset > whole.size) return {};
    return {whole.data + offset, static_cast<size_t>(whole.size - offset)};
  }
  const auto* buffers = root_->constant_buffer();
  if (buffers == nullptr || buffer_index >= buffers->size() || buffers->Get(buffer_index)->storage() == nullptr) return {};
  const auto* storage = buffers->Get(buffer_index)->storage();
  return {storage->data(), storage->size()};
}

ByteSpan Program::mutable_initial_data(uint32_t buffer_index) const {
  // Like the reference runtime: the first mutable-data entry always.
  const auto* subs = root_->mutable_data_segments();
  if (subs == nullptr || subs->size() == 0) return {};
  const pte::SubsegmentOffsets* sub = subs->Get(0);
  if (sub->offsets() == nullptr || buffer_index >= sub->offsets()->size()) return {};
  ByteSpan whole = segment(sub->segment_index());
  uint64_t offset = sub->offsets()->Get(buffer_index);
  if (offset > whole.size) return {};
  return {whole.data + offset, static_cast<size_t>(whole.size - offset)};
}

ByteSpan Program::delegate_blob(const pte::BackendDelegate& delegate) const {
  const pte::BackendDelegateDataReference* ref = delegate.processed();
  if (ref->location() == pte::DataLocation::INLINE) {
    const auto* data = root_->backend_delegate_data()->Get(ref->index())->data();
    return {data->data(), data->size()};
  }
  return segment(ref->index());
}

et_error* ProgramNamedData::get(const char* key, const void** data, size_t* size) {
  const auto* named = program_->root().named_data();
  if (named != nullptr)
    for (const pte::NamedData* entry : *named)
      if (std::strcmp(entry->key()->c_str(), key) == 0) {
        ByteSpan span = program_->segment(entry->segment_index());
        *data = span.data;
        *size = span.size;
        return nullptr;
      }
  if (const DataFile::Entry* entry = program_->find_attached(key)) {
    *data = entry->data;
    *size = entry->size;
    return nullptr;
  }
  // The key comes from a plugin's parse of a blob: show it, never pass its raw bytes on.
  std::string shown;
  for (const char* c = key; *c != '\0' && shown.size() < 256; ++c) {
    const auto byte = static_cast<unsigned char>(*c);
    static const char kHex[] = "0123456789abcdef";
    if (byte >= 0x20 && byte < 0x7f) shown += static_cast<char>(byte);
    else shown += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
  }
  return make_error(ET_ERR_NOT_FOUND, program_->origin() + ": named data key '" + shown + "' not found" +
                                         program_->attached_files_text());
}

std::string Program::attached_files_text() const {
  std::lock_guard<std::mutex> lock(data_files_mutex_);
  if (data_files_.empty()) return " (no data file attached)";
  std::string text = " in the program or its data file";
  text += data_files_.size() > 1 ? "s " : " ";
  for (size_t i = 0; i < data_files_.size(); ++i) text += (i ? ", " : "") + data_files_[i]->origin();
  return text;
}

et_error* Program::add_data_file(std::shared_ptr<const DataFile> file) {
  std::lock_guard<std::mutex> lock(data_files_mutex_);
  for (const auto& attached : data_files_)
    if (attached->origin() == file->origin())
      return make_error(ET_ERR_INVALID_ARGUMENT, file->origin() + ": already attached to " + origin_);
  data_files_.push_back(std::move(file));
  return nullptr;
}

const DataFile::Entry* Program::find_attached(std::string_view key) const {
  std::lock_guard<std::mutex> lock(data_files_mutex_);
  for (const auto& file : data_files_)
    if (const DataFile::Entry* entry = file->find(key)) return entry;
  return nullptr;
}

et_error* Program::external_tensor(const pte::Tensor& tensor, ByteSpan* out) const {
  const flatbuffers::String* name = tensor.extra_tensor_info()->fully_qualified_name();  // checked at load
  std::string key(name->c_str(), name->size());
  const DataFile::Entry* entry = find_attached(key);
  if (entry == nullptr)
    return make_error(ET_ERR_NOT_FOUND, origin_ + ": external tensor '" + key + "' not found" + attached_files_text());
  size_t nbytes = 0;
  std::string error;
  tensor_nbytes(tensor, &nbytes, &error);  // validated at load
  const size_t rank = tensor.sizes() ? tensor.sizes()->size() : 0;
  auto mismatch = [&](const std::string& what) {
    return make_error(ET_ERR_INVALID_PROGRAM, origin_ + ": external tensor '" + key + "': " + what);
  };
  if (const ptd::TensorLayout* layout = entry->layout) {
    if (static_cast<int32_t>(layout->scalar_type()) != static_cast<int32_t>(tensor.scalar_type()))
      return mismatch(std::string("the data file has ") + scalar_type_name(static_cast<int32_t>(layout->scalar_type())) +
                      ", the program expects " + scalar_type_name(static_cast<int32_t>(tensor.scalar_type())));
    const size_t layout_rank = layout->sizes() ? layout->sizes()->size() : 0;
    bool same = layout_rank == rank;
    for (size_t i = 0; same && i < rank; ++i) {
      auto index = static_cast<flatbuffers::uoffset_t>(i);
      same = layout->sizes()->Get(index) == tensor.sizes()->Get(index) &&
             layout->dim_order()->Get(index) == tensor.dim_order()->Get(index);
    }
    if (!same) return mismatch("shape or dim order in the data file differs from the program's");
  }
  if (entry->size < nbytes)
    return mismatch("the data file holds " + std::to_string(entry->size) + " bytes, the tensor needs " +
                    std::to_string(nbytes));
  size_t element = scalar_type_size(static_cast<int32_t>(tensor.scalar_type()));
  if (nbytes > 0 && reinterpret_cast<uintptr_t>(entry->data) % element != 0)
    return mismatch("data is not aligned to its " + std::to_string(element) + "-byte elements");
  *out = ByteSpan{entry->data, entry->size};
  return nullptr;
}

}  // namespace etrt
