// The executor with a fake registry: Method::load takes its resolver, so these
// tests run real programs from tests/models/generated against kernels and
// backends defined here, with no plugin loaded (this binary does not link
// libetrt's registry at all).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/src/error.h"
#include "core/src/program/method.h"
#include "core/src/program/program.h"

namespace etrt {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<Program> load_program(const std::string& model, const std::string& file = "portable.pte") {
  std::string path = std::string(ETRT_MODELS_DIR) + "/" + model + "/" + file;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  AlignedBuffer buffer(bytes.size());
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  std::shared_ptr<Program> program;
  et_error* error = Program::load(std::move(buffer), path, &program);
  EXPECT_EQ(error, nullptr) << (error ? error->message : "");
  delete error;
  return program;
}

// What a fake kernel saw on one call.
struct Call {
  std::string op;
  std::vector<int32_t> tags;
  std::vector<std::vector<int64_t>> shapes;
  int64_t alpha = 0;
  const et_exec_context* context = nullptr;
};

// ABI 1.4: what a preparing fake kernel did.
struct PrepareLog {
  bool prepares = false;        // the resolver hands out prepare / run_prepared / release
  bool decline = false;         // prepare leaves no state
  std::string fail_with;        // non-empty: prepare returns this error (with a state the host must release)
  int prepared = 0, run_prepared = 0, direct_calls = 0, released = 0;
  std::vector<std::vector<int64_t>> prepared_shapes;  // of argument 0
};

struct FakeKernel {
  std::string op;
  std::vector<Call>* calls;
  std::string fail_with;  // non-empty: the kernel returns this error
  PrepareLog* prepare = nullptr;
};

// Records its arguments; for add.out also computes out = self + alpha * other.
et_error* fake_kernel(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  auto* kernel = static_cast<FakeKernel*>(user_data);
  Call call;
  call.op = kernel->op;
  call.context = ctx;
  for (size_t i = 0; i < nargs; ++i) {
    call.tags.push_back(args[i]->tag);
    std::vector<int64_t> shape;
    if (args[i]->tag == ET_VALUE_TENSOR)
      shape.assign(args[i]->tensor->sizes, args[i]->tensor->sizes + args[i]->tensor->rank);
    call.shapes.push_back(shape);
  }
  if (kernel->op == "aten::add.out" && nargs == 5) {
    call.alpha = args[2]->as_int;
    const auto* a = static_cast<const float*>(args[0]->tensor->data);
    const auto* b = static_cast<const float*>(args[1]->tensor->data);
    auto* out = static_cast<float*>(args[3]->tensor->data);
    for (size_t i = 0; i < args[3]->tensor->nbytes / sizeof(float); ++i) out[i] = a[i] + float(call.alpha) * b[i];
  }
  kernel->calls->push_back(call);
  if (!kernel->fail_with.empty()) return make_error(ET_ERR_INVALID_ARGUMENT, kernel->fail_with);
  return nullptr;
}

et_error* fake_fn(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  ++static_cast<FakeKernel*>(user_data)->prepare->direct_calls;
  return fake_kernel(user_data, ctx, args, nargs);
}

et_error* fake_prepare(void* user_data, et_value* const* args, size_t nargs, void** out_state) {
  PrepareLog& log = *static_cast<FakeKernel*>(user_data)->prepare;
  ++log.prepared;
  const et_tensor* t = nargs > 0 && args[0]->tag == ET_VALUE_TENSOR ? args[0]->tensor : nullptr;
  log.prepared_shapes.push_back(t ? std::vector<int64_t>(t->sizes, t->sizes + t->rank) : std::vector<int64_t>{});
  *out_state = log.decline ? nullptr : new int(log.prepared);
  if (!log.fail_with.empty()) return make_error(ET_ERR_INVALID_ARGUMENT, log.fail_with);
  return nullptr;
}

et_error* fake_run_prepared(void* user_data, void* state, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  PrepareLog& log = *static_cast<FakeKernel*>(user_data)->prepare;
  EXPECT_NE(state, nullptr);
  ++log.run_prepared;
  return fake_kernel(user_data, ctx, args, nargs);
}

void fake_release(void* user_data, void* state) {
  ++static_cast<FakeKernel*>(user_data)->prepare->released;
  delete static_cast<int*>(state);
}

class FakeResolver final : public Resolver {
 public:
  // Serves every operator in `served`; the others are missing.
  explicit FakeResolver(std::vector<std::string> served) {
    for (const std::string& op : served) kernels_[op] = std::make_unique<FakeKernel>(FakeKernel{op, &calls, ""});
  }
  void fail(const std::string& op, const std::string& message) { kernels_.at(op)->fail_with = message; }
  // `op` prepares (ABI 1.4), reporting into `log`.
  void prepare(const std::string& op, PrepareLog* log) {
    kernels_.at(op)->prepare = log;
    log->prepares = true;
  }

  et_error* find_kernel(const std::string& name, ResolvedKernel* out) override {
    asked.push_back(name);
    auto it = kernels_.find(name);
    if (it == kernels_.end()) return make_error(ET_ERR_NOT_FOUND, "fake registry has no " + name);
    out->fn = fake_kernel;
    out->user_data = it->second.get();
    if (it->second->prepare != nullptr) {
      out->fn = fake_fn;
      out->prepare = fake_prepare;
      out->run_prepared = fake_run_prepared;
      out->release = fake_release;
    }
    out->plugin = "fake";
    return nullptr;
  }
  et_error* find_backend(const std::string& id, ResolvedBackend* out) override {
    asked.push_back(id);
    if (backend == nullptr) return make_error(ET_ERR_NOT_FOUND, "fake registry has no backend " + id);
    out->backend = *backend;
    out->plugin = "fake";
    return nullptr;
  }

  std::vector<std::string> asked;
  std::vector<Call> calls;
  const et_backend_descriptor* backend = nullptr;

 private:
  std::map<std::string, std::unique_ptr<FakeKernel>> kernels_;
};

et_value tensor_value(et_tensor& tensor, std::vector<float>& data, const std::vector<int64_t>& sizes) {
  tensor = et_tensor{};
  tensor.struct_size = sizeof tensor;
  tensor.dtype = ET_DTYPE_FLOAT32;
  tensor.rank = static_cast<int32_t>(sizes.size());
  tensor.sizes = sizes.data();
  tensor.data = data.data();
  tensor.nbytes = data.size() * sizeof(float);
  tensor.capacity_bytes = tensor.nbytes;
  et_value value{};
  value.struct_size = sizeof value;
  value.tag = ET_VALUE_TENSOR;
  value.tensor = &tensor;
  return value;
}

TEST(MethodResolver, RunsARealProgramOnTheResolversKernelWithTheProgramsArguments) {
  FakeResolver resolver({"aten::add.out"});
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("op_add"), "forward", &method, resolver);
  ASSERT_EQ(error, nullptr) << error->message;
  EXPECT_EQ(resolver.asked, std::vector<std::string>{"aten::add.out"});  // once per operator

  const std::vector<int64_t> shape = {3, 5};
  std::vector<float> a(15), b(15);
  for (int i = 0; i < 15; ++i) a[i] = float(i), b[i] = float(100 * i);
  et_tensor ta, tb;
  ASSERT_EQ(method->set_input(0, tensor_value(ta, a, shape)), nullptr);
  ASSERT_EQ(method->set_input(1, tensor_value(tb, b, shape)), nullptr);
  ASSERT_EQ(method->execute(), nullptr);

  ASSERT_EQ(resolver.calls.size(), 1u);
  const Call& call = resolver.calls[0];
  // add.out(self, other, alpha, out) followed by the return value (the out tensor again).
  EXPECT_EQ(call.tags, (std::vector<int32_t>{ET_VALUE_TENSOR, ET_VALUE_TENSOR, ET_VALUE_INT, ET_VALUE_TENSOR,
                                             ET_VALUE_TENSOR}));
  EXPECT_EQ(call.shapes[0], shape);
  EXPECT_EQ(call.shapes[1], shape);
  EXPECT_EQ(call.shapes[3], shape);
  EXPECT_EQ(call.alpha, 1);
  ASSERT_NE(call.context, nullptr);
  const et_value* out = method->output(0);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->tag, ET_VALUE_TENSOR);
  const auto* result = static_cast<const float*>(out->tensor->data);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(result[i], float(101 * i)) << i;
}

// Loads op_add with a preparing add.out and runs it `runs` times on [3, 5] inputs.
et_error* run_prepared_add(FakeResolver& resolver, std::unique_ptr<Method>* method, int runs) {
  if (et_error* error = Method::load(load_program("op_add"), "forward", method, resolver)) return error;
  const std::vector<int64_t> shape = {3, 5};
  std::vector<float> a(15, 1.0f), b(15, 2.0f);
  et_tensor ta, tb;
  for (int run = 0; run < runs; ++run) {
    if (et_error* error = (*method)->set_input(0, tensor_value(ta, a, shape))) return error;
    if (et_error* error = (*method)->set_input(1, tensor_value(tb, b, shape))) return error;
    if (et_error* error = (*method)->execute()) return error;
  }
  return nullptr;
}

TEST(MethodResolver, APreparingKernelIsPreparedOnceAtLoadRunPreparedOnEveryCallAndReleasedWithTheMethod) {
  FakeResolver resolver({"aten::add.out"});
  PrepareLog log;
  resolver.prepare("aten::add.out", &log);
  std::unique_ptr<Method> method;
  et_error* error = run_prepared_add(resolver, &method, 3);
  ASSERT_EQ(error, nullptr) << error->message;
  EXPECT_EQ(log.prepared, 1);
  EXPECT_EQ(log.prepared_shapes, (std::vector<std::vector<int64_t>>{{3, 5}}));  // the program's shapes
  EXPECT_EQ(log.run_prepared, 3);
  EXPECT_EQ(log.direct_calls, 0);
  EXPECT_EQ(resolver.calls.back().alpha, 1);
  EXPECT_EQ(static_cast<const float*>(method->output(0)->tensor->data)[14], 3.0f);
  EXPECT_EQ(log.released, 0);
  method.reset();
  EXPECT_EQ(log.released, 1);
}

TEST(MethodResolver, AnInstructionTheKernelDeclinesToPrepareRunsTheKernelsFunction) {
  FakeResolver resolver({"aten::add.out"});
  PrepareLog log;
  log.decline = true;
  resolver.prepare("aten::add.out", &log);
  std::unique_ptr<Method> method;
  et_error* error = run_prepared_add(resolver, &method, 2);
  ASSERT_EQ(error, nullptr) << error->message;
  EXPECT_EQ(log.prepared, 1);
  EXPECT_EQ(log.run_prepared, 0);
  EXPECT_EQ(log.direct_calls, 2);
  method.reset();
  EXPECT_EQ(log.released, 0);
}

TEST(MethodResolver, APrepareErrorFailsTheLoadNamingTheInstructionAndOperator) {
  FakeResolver resolver({"aten::add.out"});
  PrepareLog log;
  log.fail_with = "no plan for these shapes";
  resolver.prepare("aten::add.out", &log);
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("op_add"), "forward", &method, resolver);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(error->message, HasSubstr("method 'forward', instruction 0 (aten::add.out, served by 'fake'): "
                                        "preparing the kernel failed: no plan for these shapes"));
  EXPECT_EQ(error->plugin, "fake");
  EXPECT_EQ(method, nullptr);
  EXPECT_EQ(log.released, 1) << "a state returned with the error is released";
  delete error;
}

TEST(MethodResolver, AMissingOperatorFailsTheLoadWithTheResolversMessage) {
  FakeResolver resolver({});
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("op_add"), "forward", &method, resolver);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, ET_ERR_NOT_FOUND);
  EXPECT_THAT(error->message, HasSubstr("needs 1 operator(s)/backend(s)"));
  EXPECT_THAT(error->message, HasSubstr("fake registry has no aten::add.out"));
  EXPECT_EQ(method, nullptr);
  delete error;
}

TEST(MethodResolver, BuiltInOperatorsNeverReachTheResolver) {
  FakeResolver resolver({"aten::addmm.out", "aten::relu.out", "aten::_log_softmax.out", "aten::permute_copy.out",
                         "aten::mm.out", "aten::add.out", "aten::view_copy.out"});
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("dynamic_mlp"), "forward", &method, resolver);
  // Whatever the program needs beyond these, sym_size and friends are the executor's own.
  for (const std::string& name : resolver.asked) {
    EXPECT_EQ(name.find("sym_size"), std::string::npos) << name;
    EXPECT_EQ(name.find("executorch_prim"), std::string::npos) << name;
  }
  delete error;
}

TEST(MethodResolver, AKernelFailingOnConstantsAtLoadFailsTheLoadNamingTheInstruction) {
  FakeResolver resolver({"aten::permute_copy.out", "aten::addmm.out", "aten::relu.out", "aten::_log_softmax.out"});
  resolver.fail("aten::permute_copy.out", "weights refused");
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("mlp"), "forward", &method, resolver);
  ASSERT_NE(error, nullptr) << "a fold that fails must not be dropped";
  EXPECT_EQ(error->code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(error->message, HasSubstr("computing on constants at load"));
  EXPECT_THAT(error->message, HasSubstr("(aten::permute_copy.out, served by 'fake'): weights refused"));
  EXPECT_THAT(error->message, HasSubstr("instruction "));
  EXPECT_EQ(error->plugin, "fake");
  EXPECT_EQ(method, nullptr);
  delete error;
}

TEST(MethodResolver, FoldedInstructionsRunOnceAtLoadAndNeverAgain) {
  FakeResolver resolver({"aten::permute_copy.out", "aten::addmm.out", "aten::relu.out", "aten::_log_softmax.out"});
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("mlp"), "forward", &method, resolver);
  ASSERT_EQ(error, nullptr) << error->message;
  size_t permutes_at_load = 0;
  for (const Call& call : resolver.calls) permutes_at_load += call.op == "aten::permute_copy.out";
  EXPECT_GT(permutes_at_load, 0u);
  resolver.calls.clear();
  std::vector<float> x(4 * 32, 0.5f);
  et_tensor tx;
  ASSERT_EQ(method->set_input(0, tensor_value(tx, x, {4, 32})), nullptr);
  ASSERT_EQ(method->execute(), nullptr);
  for (const Call& call : resolver.calls) EXPECT_NE(call.op, "aten::permute_copy.out");
  EXPECT_FALSE(resolver.calls.empty());
}

// A backend that fills only the required entries (is_available and destroy are optional).
struct BackendLog {
  size_t inits = 0, executes = 0, blob_size = 0, nargs = 0;
};
BackendLog g_backend;

et_error* minimal_init(void*, const et_backend_init_args* args, void** handle) {
  ++g_backend.inits;
  g_backend.blob_size = args->processed_size;
  *handle = &g_backend;
  return nullptr;
}

et_error* minimal_execute(void*, void* handle, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  EXPECT_EQ(handle, &g_backend);
  EXPECT_NE(ctx, nullptr);
  ++g_backend.executes;
  g_backend.nargs = nargs;
  for (size_t i = 0; i < nargs; ++i)
    if (args[i]->tag == ET_VALUE_TENSOR && !args[i]->tensor->is_const && args[i]->tensor->data != nullptr)
      std::memset(args[i]->tensor->data, 0, args[i]->tensor->nbytes);
  return nullptr;
}

TEST(MethodResolver, ABackendWithoutTheOptionalEntriesLoadsRunsAndIsDestroyed) {
  et_backend_descriptor backend{};
  backend.struct_size = sizeof backend;
  backend.id = "XnnpackBackend";
  backend.init = minimal_init;
  backend.execute = minimal_execute;  // is_available and destroy left NULL
  FakeResolver resolver({"aten::permute_copy.out", "aten::addmm.out", "aten::relu.out", "aten::_log_softmax.out"});
  resolver.backend = &backend;
  g_backend = {};
  {
    std::unique_ptr<Method> method;
    et_error* error = Method::load(load_program("mlp", "xnnpack.pte"), "forward", &method, resolver);
    ASSERT_EQ(error, nullptr) << error->message;
    EXPECT_GE(g_backend.inits, 1u);
    EXPECT_GT(g_backend.blob_size, 0u);
    std::vector<float> x(4 * 32, 0.5f);
    et_tensor tx;
    ASSERT_EQ(method->set_input(0, tensor_value(tx, x, {4, 32})), nullptr);
    ASSERT_EQ(method->execute(), nullptr);
    EXPECT_GE(g_backend.executes, 1u);
    EXPECT_GE(g_backend.nargs, 2u);  // at least an input and an output
  }  // destroying the method with destroy == NULL is fine
}

TEST(MethodResolver, AMissingBackendIsReportedWithTheMissingOperators) {
  FakeResolver resolver({});
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("mlp", "xnnpack.pte"), "forward", &method, resolver);
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(error->message, HasSubstr("fake registry has no backend XnnpackBackend"));
  delete error;
}

// Scratch memory: valid during the call, reset after each instruction, the
// arena kept (grown to the peak) across runs.
struct ScratchKernel {
  size_t bytes;
  std::vector<void*> pointers;
};

class ScratchResolver final : public Resolver {
 public:
  ScratchKernel kernel{1 << 16, {}};
  et_error* find_kernel(const std::string&, ResolvedKernel* out) override {
    out->fn = [](void* user_data, et_exec_context* ctx, et_value* const*, size_t) -> et_error* {
      auto* k = static_cast<ScratchKernel*>(user_data);
      void* a = ctx->scratch->allocate(k->bytes, 64);
      void* b = ctx->scratch->allocate(100, 256);
      if (a == nullptr || b == nullptr) return make_error(ET_ERR_OUT_OF_MEMORY, "scratch");
      EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 256, 0u);
      std::memset(a, 1, k->bytes);
      std::memset(b, 2, 100);
      EXPECT_EQ(static_cast<uint8_t*>(a)[k->bytes - 1], 1);  // b does not overlap a
      k->pointers.push_back(a);
      return nullptr;
    };
    out->user_data = &kernel;
    out->plugin = "fake";
    return nullptr;
  }
  et_error* find_backend(const std::string& id, ResolvedBackend*) override {
    return make_error(ET_ERR_NOT_FOUND, id);
  }
};

TEST(MethodScratch, MemoryIsResetAfterEachInstructionAndReusedAcrossRuns) {
  ScratchResolver resolver;
  std::unique_ptr<Method> method;
  et_error* error = Method::load(load_program("op_add"), "forward", &method, resolver);
  ASSERT_EQ(error, nullptr) << error->message;
  std::vector<float> a(15, 1), b(15, 2);
  et_tensor ta, tb;
  for (int run = 0; run < 3; ++run) {
    ASSERT_EQ(method->set_input(0, tensor_value(ta, a, {3, 5})), nullptr);
    ASSERT_EQ(method->set_input(1, tensor_value(tb, b, {3, 5})), nullptr);
    ASSERT_EQ(method->execute(), nullptr);
  }
  ASSERT_EQ(resolver.kernel.pointers.size(), 3u);
  // The first run overflowed the empty arena; it grew to the peak once, then every run reuses it.
  EXPECT_GE(method->scratch_capacity(), size_t{1 << 16});
  EXPECT_EQ(resolver.kernel.pointers[1], resolver.kernel.pointers[2]);
}

TEST(ScratchArena, RefusesBadAlignmentsAndHandsOutAlignedDisjointMemory) {
  ScratchArena arena;
  EXPECT_EQ(arena.allocate(16, 3), nullptr);
  EXPECT_EQ(arena.allocate(16, size_t{1} << 20), nullptr);
  EXPECT_EQ(arena.allocate(SIZE_MAX, 64), nullptr);
  auto* first = static_cast<uint8_t*>(arena.allocate(1000, 16));
  auto* second = static_cast<uint8_t*>(arena.allocate(1000, 128));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second) % 128, 0u);
  EXPECT_TRUE(second >= first + 1000 || first >= second + 1000);
  EXPECT_EQ(arena.overflow_blocks(), 2u);
  arena.reset();
  EXPECT_EQ(arena.overflow_blocks(), 0u);
  EXPECT_GE(arena.capacity(), 2000u);
  auto* again = static_cast<uint8_t*>(arena.allocate(1000, 16));
  auto* again2 = static_cast<uint8_t*>(arena.allocate(1000, 128));
  EXPECT_EQ(arena.overflow_blocks(), 0u);  // the peak fits in the grown block
  EXPECT_TRUE(again2 >= again + 1000);
}

}  // namespace
}  // namespace etrt

namespace etrt {
namespace {

// Delegates pass the host's message on (ABI 1.2 error_message): it must be printable whatever the key's bytes.
TEST(ProgramNamedData, AMissingKeyIsNamedInPrintableText) {
  std::shared_ptr<Program> program = load_program("mlp", "xnnpack.pte");
  const void* data = nullptr;
  size_t size = 0;
  et_error* error = program->named_data()->get("\xe4weights\n", &data, &size);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, ET_ERR_NOT_FOUND);
  EXPECT_THAT(error->message, HasSubstr("named data key '\\xe4weights\\x0a' not found"));
  for (char c : error->message) EXPECT_LT(static_cast<unsigned char>(c), 0x80u);
  delete error;
}

}  // namespace
}  // namespace etrt
