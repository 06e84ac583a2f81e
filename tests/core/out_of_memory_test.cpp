// When memory runs out, the host's C functions and its table's entries answer
// with an error; the std::bad_alloc of the strings they build never crosses
// into a C caller or a plugin; nor does the etdump plugin's into the host. An
// operator new of this executable's, which the dynamic linker puts before
// libstdc++'s for libetrt and the plugins too, fails on request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "etrt/etrt.h"

namespace {
std::atomic<bool> g_fail_allocations{false};
}  // namespace

// The replacement pair allocates with malloc and frees with free; GCC sees only
// the default operator new at the call sites and would call the pair mismatched.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (g_fail_allocations.load(std::memory_order_relaxed)) throw std::bad_alloc();
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace {

// Runs `call` with every allocation failing; false (a test failure) when an exception escaped it.
template <typename Call>
bool out_of_memory(Call&& call) {
  g_fail_allocations = true;
  bool escaped = false;
  try {
    call();
  } catch (...) {
    escaped = true;
  }
  g_fail_allocations = false;
  return !escaped;
}

constexpr const char* kLongMessage = "a message far too long to be stored inside a std::string";

TEST(OutOfMemory, TheHostTablesErrorCreateGivesTheOutOfMemoryError) {
  const et_host_api* host = et_host_api_get();
  et_error* error = nullptr;
  ASSERT_TRUE(out_of_memory([&] { error = host->error_create(ET_ERR_INVALID_ARGUMENT, kLongMessage); }))
      << "std::bad_alloc crossed error_create";
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(host->error_code(error), ET_ERR_OUT_OF_MEMORY);
  host->error_destroy(error);
}

TEST(OutOfMemory, RegistrationRefusalsGiveAnErrorNotAnException) {
  const et_host_api* host = et_host_api_get();
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  kernel.name = kLongMessage;
  et_error* error = nullptr;
  ASSERT_TRUE(out_of_memory([&] { error = host->register_kernel(nullptr, &kernel); }))
      << "std::bad_alloc crossed register_kernel";
  ASSERT_NE(error, nullptr);
  EXPECT_NE(host->error_code(error), ET_OK);
  host->error_destroy(error);
}

TEST(OutOfMemory, TheCFunctionsReturnAStatus) {
  et_error* error = nullptr;
  int32_t status = ET_OK;
  ASSERT_TRUE(out_of_memory([&] { status = et_load_plugin("/no/such/directory/libetrt_nothing.so.1", &error); }))
      << "std::bad_alloc crossed et_load_plugin";
  EXPECT_EQ(status, ET_ERR_OUT_OF_MEMORY);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY);
  et_error_destroy(error);
  size_t count = 1;
  ASSERT_TRUE(out_of_memory([&] { count = et_plugin_count(); })) << "std::bad_alloc crossed et_plugin_count";
  EXPECT_EQ(count, 0u);
  // The process goes on: the same calls work once memory is back.
  EXPECT_EQ(et_load_plugin("/no/such/directory/libetrt_nothing.so.1", &error), ET_ERR_NOT_FOUND);
  et_error_destroy(error);
}

// Programs, methods and trace sessions: every C function that builds a string, a vector or a
// handle answers with a status (or its documented failure value) when that allocation fails.
TEST(OutOfMemory, TheProgramAndMethodFunctionsReturnAStatus) {
  const std::string path = std::string(ETRT_TEST_MODELS_DIR) + "/op_add/portable.pte";
  et_program* program = nullptr;
  ASSERT_EQ(et_program_load_file(path.c_str(), &program, nullptr), ET_OK);
  auto expect_out_of_memory = [](const char* call, auto&& body) {
    et_error* error = nullptr;
    int32_t status = ET_OK;
    ASSERT_TRUE(out_of_memory([&] { status = body(&error); })) << "std::bad_alloc crossed " << call;
    EXPECT_EQ(status, ET_ERR_OUT_OF_MEMORY) << call;
    ASSERT_NE(error, nullptr) << call;
    EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY) << call;
    et_error_destroy(error);
  };
  et_program* second = nullptr;
  expect_out_of_memory("et_program_load_file", [&](et_error** e) { return et_program_load_file(path.c_str(), &second, e); });
  const char bytes[16] = "0000ET12";
  expect_out_of_memory("et_program_load_bytes", [&](et_error** e) { return et_program_load_bytes(bytes, sizeof bytes, "x", &second, e); });
  EXPECT_EQ(second, nullptr);
  et_method* method = nullptr;
  expect_out_of_memory("et_method_load", [&](et_error** e) { return et_method_load(program, "forward", &method, e); });
  EXPECT_EQ(method, nullptr);
  expect_out_of_memory("et_program_method_info", [&](et_error** e) {
    et_method_info info{};
    info.struct_size = sizeof info;
    return et_program_method_info(program, "no such method", &info, e);
  });
  et_trace_session* session = nullptr;
  ASSERT_EQ(et_trace_session_create("etdump", nullptr, &session, nullptr), ET_OK);  // the plugin is loaded first
  et_trace_session_destroy(session);
  session = nullptr;
  expect_out_of_memory("et_trace_session_create", [&](et_error** e) { return et_trace_session_create("etdump", nullptr, &session, e); });
  EXPECT_EQ(session, nullptr);
  const char* name = "";
  ASSERT_TRUE(out_of_memory([&] { name = et_program_operator_name(program, "forward", 0); }))
      << "std::bad_alloc crossed et_program_operator_name";
  EXPECT_EQ(name, nullptr);
  // Once memory is back, the same program serves a method that runs.
  ASSERT_EQ(et_method_load(program, "forward", &method, nullptr), ET_OK);
  EXPECT_NE(et_program_operator_name(program, "forward", 0), nullptr);
  et_method_destroy(method);
  et_program_destroy(program);
}

// The etdump plugin builds messages when it refuses a debug buffer larger than
// ETRT_MAX_TRACE_MEMORY, and when the setting is not a byte size.
TEST(OutOfMemory, EtdumpsSessionCreateGivesAnErrorNotAnException) {
  et_tracer_descriptor tracer{};
  tracer.struct_size = sizeof tracer;
  ASSERT_EQ(et_find_tracer("etdump", &tracer, nullptr), ET_OK);  // the plugin's own functions
  et_trace_session_args args{sizeof(et_trace_session_args), "oom", size_t{1} << 20};
  for (const char* limit : {"1K", "not a byte size"}) {
    setenv("ETRT_MAX_TRACE_MEMORY", limit, 1);
    void* session = nullptr;
    et_error* error = nullptr;
    ASSERT_TRUE(out_of_memory([&] { error = tracer.session_create(tracer.user_data, &args, &session); }))
        << "std::bad_alloc crossed etdump's session_create (ETRT_MAX_TRACE_MEMORY=" << limit << ")";
    EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY) << et_error_message(error);
    EXPECT_EQ(session, nullptr);
    et_error_destroy(error);
  }
  unsetenv("ETRT_MAX_TRACE_MEMORY");
}

}  // namespace
