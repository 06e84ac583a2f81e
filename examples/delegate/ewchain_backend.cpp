// EwChainBackend, the runtime half (ewchain.py is the ahead-of-time half): runs
// a chain of float32 elementwise operators in one pass over the data, a block
// of elements at a time through every instruction, instead of one pass per operator.
//
// The blob is verified like any input when the method loads (init): a corrupt
// or truncated one is an error naming what is wrong, never a crash.
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "etrt/plugin.hpp"

namespace {

etrt::plugin::Host host;

constexpr size_t kHeaderBytes = 24;       // magic + 5 x u32
constexpr size_t kInstructionBytes = 12;  // u8 opcode, u8 0, u16 dst, u16 a, u16 b, f32 immediate
constexpr uint32_t kMaxSlots = 64;        // matches ewchain.py
constexpr size_t kBlock = 128;            // elements per slot on the stack: 64 x 128 floats = 32 KiB

enum Opcode : uint8_t {
  kRelu = 1, kSigmoid = 2, kTanh = 3, kNeg = 4,
  kAdd = 10, kSub = 11, kMul = 12,
  kAddImm = 20, kSubImm = 21, kMulImm = 22,
};

struct Instruction {
  uint8_t opcode;
  uint16_t dst, a, b;
  float immediate;
};

struct Chain {
  uint32_t inputs = 0;
  uint32_t slots = 0;
  std::vector<Instruction> code;
  std::vector<uint16_t> outputs;
};

uint32_t read_u32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }
uint16_t read_u16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

bool is_unary(uint8_t op) { return op >= kRelu && op <= kNeg; }
bool is_binary(uint8_t op) { return op >= kAdd && op <= kMul; }
bool is_immediate(uint8_t op) { return op >= kAddImm && op <= kMulImm; }

// Parses and verifies a blob; "" or what is wrong with it.
std::string parse(const uint8_t* blob, size_t size, Chain& chain) {
  if (blob == nullptr || size < kHeaderBytes) return "blob of " + std::to_string(size) + " bytes, shorter than its header";
  if (std::memcmp(blob, "EWC1", 4) != 0) return "blob does not start with magic EWC1";
  uint32_t version = read_u32(blob + 4), outputs = read_u32(blob + 12), instructions = read_u32(blob + 20);
  chain.inputs = read_u32(blob + 8);
  chain.slots = read_u32(blob + 16);
  if (version != 1) return "blob version " + std::to_string(version) + ", this plugin reads version 1";
  if (chain.inputs == 0 || outputs == 0) return "a chain needs at least one input and one output";
  if (chain.slots > kMaxSlots || uint64_t(chain.inputs) + instructions != chain.slots)
    return "blob declares " + std::to_string(chain.slots) + " values for " + std::to_string(chain.inputs) +
           " inputs and " + std::to_string(instructions) + " instructions (at most " + std::to_string(kMaxSlots) + ")";
  size_t expected = kHeaderBytes + size_t(instructions) * kInstructionBytes + size_t(outputs) * 2;
  if (size != expected)
    return "blob has " + std::to_string(size) + " bytes, its header describes " + std::to_string(expected);
  const uint8_t* p = blob + kHeaderBytes;
  for (uint32_t i = 0; i < instructions; ++i, p += kInstructionBytes) {
    Instruction in{p[0], read_u16(p + 2), read_u16(p + 4), read_u16(p + 6), 0.0f};
    std::memcpy(&in.immediate, p + 8, 4);
    std::string where = "instruction " + std::to_string(i);
    if (!is_unary(in.opcode) && !is_binary(in.opcode) && !is_immediate(in.opcode))
      return where + ": unknown opcode " + std::to_string(in.opcode);
    if (in.dst != chain.inputs + i) return where + ": writes value " + std::to_string(in.dst) + " out of order";
    if (in.a >= in.dst || (is_binary(in.opcode) && in.b >= in.dst))
      return where + ": reads a value not computed before it";
    if (is_immediate(in.opcode) && !std::isfinite(in.immediate)) return where + ": immediate is not finite";
    chain.code.push_back(in);
  }
  for (uint32_t i = 0; i < outputs; ++i, p += 2) {
    uint16_t slot = read_u16(p);
    if (slot >= chain.slots) return "output " + std::to_string(i) + " names value " + std::to_string(slot) + " of " +
                                    std::to_string(chain.slots);
    chain.outputs.push_back(slot);
  }
  return "";
}

// Runs the chain on elements [begin, end) of its tensors, kBlock at a time.
void run_range(const Chain& chain, const float* const* inputs, float* const* outputs, size_t begin, size_t end) {
  float values[kMaxSlots][kBlock];
  for (size_t start = begin; start < end; start += kBlock) {
    size_t n = end - start < kBlock ? end - start : kBlock;
    for (uint32_t s = 0; s < chain.inputs; ++s) std::memcpy(values[s], inputs[s] + start, n * sizeof(float));
    for (const Instruction& in : chain.code) {
      float* y = values[in.dst];
      const float* a = values[in.a];
      const float* b = values[in.b];
      const float k = in.immediate;
      switch (in.opcode) {
        case kRelu: for (size_t i = 0; i < n; ++i) y[i] = a[i] > 0.0f ? a[i] : 0.0f; break;
        case kSigmoid: for (size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-a[i])); break;
        case kTanh: for (size_t i = 0; i < n; ++i) y[i] = std::tanh(a[i]); break;
        case kNeg: for (size_t i = 0; i < n; ++i) y[i] = -a[i]; break;
        case kAdd: for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i]; break;
        case kSub: for (size_t i = 0; i < n; ++i) y[i] = a[i] - b[i]; break;
        case kMul: for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i]; break;
        case kAddImm: for (size_t i = 0; i < n; ++i) y[i] = a[i] + k; break;
        case kSubImm: for (size_t i = 0; i < n; ++i) y[i] = a[i] - k; break;
        case kMulImm: for (size_t i = 0; i < n; ++i) y[i] = a[i] * k; break;
      }
    }
    for (size_t o = 0; o < chain.outputs.size(); ++o)
      std::memcpy(outputs[o] + start, values[chain.outputs[o]], n * sizeof(float));
  }
}

et_error* init_delegate(void*, const et_backend_init_args* args, void** out_handle) {
  if (args == nullptr || out_handle == nullptr || args->struct_size < sizeof(et_backend_init_args))
    return host.error(ET_ERR_INVALID_ARGUMENT, "EwChainBackend: init arguments are missing or too small");
  auto* chain = new (std::nothrow) Chain;
  if (chain == nullptr) return host.error(ET_ERR_OUT_OF_MEMORY, "EwChainBackend: out of memory");
  std::string problem;
  try {
    problem = parse(static_cast<const uint8_t*>(args->processed), args->processed_size, *chain);
  } catch (const std::bad_alloc&) {
    problem = "out of memory while reading the blob";
  }
  if (!problem.empty()) {
    delete chain;
    return host.error(ET_ERR_INVALID_PROGRAM, "EwChainBackend: corrupt delegate blob: " + problem);
  }
  *out_handle = chain;
  return nullptr;
}

// A float32 tensor argument, dense in the default order, of `numel` elements (0: any).
et_error* tensor_arg(et_value* const* args, size_t index, size_t numel, et_tensor** out) {
  std::string where = "EwChainBackend: argument " + std::to_string(index);
  et_value* v = args[index];
  if (v == nullptr || v->tag != ET_VALUE_TENSOR || v->tensor == nullptr)
    return host.error(ET_ERR_INVALID_ARGUMENT, where + " is not a tensor");
  et_tensor* t = v->tensor;
  if (t->dtype != ET_DTYPE_FLOAT32)
    return host.error(ET_ERR_INVALID_ARGUMENT, where + " is " + etrt::plugin::dtype_name(t->dtype) + ", not float32");
  if (!etrt::plugin::is_contiguous(*t)) return host.error(ET_ERR_INVALID_ARGUMENT, where + " is not contiguous");
  if (numel != 0 && etrt::plugin::numel(*t) != numel)
    return host.error(ET_ERR_INVALID_ARGUMENT, where + " has shape " + etrt::plugin::shape_string(*t) +
                                                   ", the chain's tensors have " + std::to_string(numel) + " elements");
  *out = t;
  return nullptr;
}

// args: the delegate call's inputs, then its outputs.
et_error* execute(void*, void* handle, et_exec_context*, et_value* const* args, size_t nargs) {
  if (handle == nullptr) return host.error(ET_ERR_INVALID_STATE, "EwChainBackend: execute without a delegate handle");
  const Chain& chain = *static_cast<const Chain*>(handle);
  size_t expected = chain.inputs + chain.outputs.size();
  if (args == nullptr || nargs != expected)
    return host.error(ET_ERR_INVALID_ARGUMENT, "EwChainBackend: expected " + std::to_string(expected) + " arguments (" +
                                                   std::to_string(chain.inputs) + " inputs, " +
                                                   std::to_string(chain.outputs.size()) + " outputs), got " +
                                                   std::to_string(nargs));
  et_tensor* first = nullptr;
  if (et_error* e = tensor_arg(args, 0, 0, &first)) return e;
  size_t numel = etrt::plugin::numel(*first);
  const float* inputs[kMaxSlots];
  float* outputs[kMaxSlots];
  for (uint32_t i = 0; i < chain.inputs; ++i) {
    et_tensor* t = nullptr;
    if (et_error* e = tensor_arg(args, i, numel, &t)) return e;
    inputs[i] = static_cast<const float*>(t->data);
  }
  for (size_t o = 0; o < chain.outputs.size(); ++o) {
    et_tensor* t = nullptr;
    if (et_error* e = tensor_arg(args, chain.inputs + o, 0, &t)) return e;
    if (et_error* e = host.api()->tensor_resize(t, first->sizes, size_t(first->rank))) return e;
    outputs[o] = static_cast<float*>(t->data);
  }
  host.parallel_for((numel + kBlock - 1) / kBlock, 16, [&](size_t begin, size_t end) {
    run_range(chain, inputs, outputs, begin * kBlock, end * kBlock < numel ? end * kBlock : numel);
  });
  return nullptr;
}

void destroy(void*, void* handle) { delete static_cast<Chain*>(handle); }

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  et_backend_descriptor backend{};
  backend.struct_size = sizeof backend;
  backend.id = "EwChainBackend";
  backend.init = init_delegate;
  backend.execute = execute;
  backend.destroy = destroy;
  return api->register_backend(self, &backend);
}

}  // namespace

ETRT_PLUGIN("ewchain", EWCHAIN_VERSION, "EwChainBackend: fused float32 elementwise chains (examples/delegate)", init)
