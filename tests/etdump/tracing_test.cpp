// Tracing from a C++ host: the etdump tracer is loaded only when a method asks
// for it, its results are valid ETDump, and tracing leaves outputs alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "etdump_generated.h"
#include "etrt/etrt.hpp"
#include "float_input.h"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

const std::string kModels = ETRT_TRACING_MODELS;

etrt::Program load(const std::string& name) { return etrt::Program::load(kModels + "/" + name + ".pte"); }

// A deterministic float input of the method's declared shape.
struct Input : FloatInput {
  Input(const etrt::Program& program, const std::string& method, float seed) : FloatInput(program, method) {
    for (size_t i = 0; i < data.size(); ++i) data[i] = seed + 0.01f * static_cast<float>(i % 97) - 0.3f;
  }
};

std::vector<float> run(etrt::Method& method, Input& input) {
  method.set_input(0, input.tensor);
  method.execute();
  const et_tensor& out = *method.output(0).tensor;
  const auto* f = static_cast<const float*>(out.data);
  return std::vector<float>(f, f + out.nbytes / sizeof(float));
}

const etrt::etdump::ETDump* parse(const std::string& bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  EXPECT_TRUE(etrt::etdump::VerifySizePrefixedETDumpBuffer(verifier)) << "not a valid size-prefixed ETDump";
  EXPECT_TRUE(flatbuffers::BufferHasIdentifier(bytes.data(), "ED00", /*size_prefixed=*/true));
  return etrt::etdump::GetSizePrefixedETDump(bytes.data());
}

// Operator profile events of one run block, by name.
std::vector<std::string> profile_names(const etrt::etdump::RunData& run) {
  std::vector<std::string> names;
  for (const auto* event : *run.events())
    if (event->profile_event() != nullptr) names.push_back(event->profile_event()->name()->str());
  return names;
}

// Runs first, in a process where nothing traced yet.
TEST(Tracing, AMethodRunWithoutTracingMapsNoTracer) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  Input input(program, "forward", 0.5f);
  run(method, input);
  EXPECT_FALSE(is_mapped("libetrt_etdump")) << "no tracer was asked for, yet its plugin is mapped";
}

TEST(Tracing, EtdumpListsEveryOperatorInstructionOfEachRun) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  etrt::TraceSession session("etdump", 1 << 20, "plain.pte");
  method.set_trace_session(&session);
  Input input(program, "forward", 0.5f);
  run(method, input);
  run(method, input);
  EXPECT_TRUE(is_mapped("libetrt_etdump"));

  std::string bytes = session.result("etdump");
  const etrt::etdump::ETDump* dump = parse(bytes);
  ASSERT_NE(dump->run_data(), nullptr);
  ASSERT_EQ(dump->run_data()->size(), 2u);
  std::vector<std::string> expected;
  for (const std::string& op : program.operators("forward")) expected.push_back(op);
  for (const auto* run : *dump->run_data()) {
    EXPECT_EQ(run->name()->str(), "Execute");
    std::vector<std::string> names = profile_names(*run);
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.back(), "Method::execute");
    // Every instruction of this program is a kernel call: one event each, in order.
    et_method_info info = program.method_info("forward");
    EXPECT_EQ(names.size(), info.num_instructions + 1);
    for (size_t i = 0; i + 1 < names.size(); ++i)
      EXPECT_THAT(expected, ::testing::Contains(names[i])) << "event " << i << " is not an operator of the method";
  }
  // Debug events: one output per instruction plus the method's output, bytes in the debug buffer.
  std::string buffer = session.result("debug_buffer");
  EXPECT_GT(buffer.size(), 0u);
}

TEST(Tracing, MethodOutputDebugEventHoldsWhatTheMethodReturned) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  etrt::TraceSession session("etdump", 1 << 20);
  method.set_trace_session(&session);
  Input input(program, "forward", 0.25f);
  std::vector<float> out = run(method, input);
  std::string bytes = session.result("etdump");
  const etrt::etdump::ETDump* dump = parse(bytes);
  std::string buffer = session.result("debug_buffer");
  const etrt::etdump::DebugEvent* output = nullptr;
  for (const auto* event : *dump->run_data()->Get(0)->events())
    if (event->debug_event() && event->debug_event()->debug_entry()->output() &&
        event->debug_event()->debug_entry()->output()->bool_val())
      output = event->debug_event();
  ASSERT_NE(output, nullptr) << "no debug event marked as the method's output";
  const auto* tensor = output->debug_entry()->tensor();
  ASSERT_NE(tensor, nullptr);
  ASSERT_LE(static_cast<size_t>(tensor->offset()) + out.size() * sizeof(float), buffer.size());
  EXPECT_EQ(std::memcmp(buffer.data() + tensor->offset(), out.data(), out.size() * sizeof(float)), 0);
}

TEST(Tracing, TracingOneMethodLeavesAnotherMethodsOutputsAlone) {
  etrt::Program program = load("multi");
  etrt::Method plain_encode = program.load_method("encode");
  Input input(program, "encode", 0.75f);
  std::vector<float> expected_encode = run(plain_encode, input);
  etrt::Method forward = program.load_method("forward");
  std::vector<float> expected_forward = run(forward, input);

  etrt::TraceSession session("etdump", 1 << 20);
  forward.set_trace_session(&session);
  etrt::Method encode = program.load_method("encode");
  EXPECT_EQ(run(forward, input), expected_forward) << "tracing changed the traced method's output";
  EXPECT_EQ(run(encode, input), expected_encode) << "tracing forward changed encode's output";
  EXPECT_EQ(parse(session.result("etdump"))->run_data()->size(), 1u) << "only forward's run is in the dump";
}

TEST(Tracing, TwoThreadsTracingWriteSeparateValidDumps) {
  etrt::Program program = load("plain");
  constexpr int kRuns[2] = {3, 5};
  std::string dumps[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      etrt::Method method = program.load_method("forward");
      etrt::TraceSession session("etdump", 1 << 20);
      method.set_trace_session(&session);
      Input input(program, "forward", static_cast<float>(t));
      for (int i = 0; i < kRuns[t]; ++i) run(method, input);
      dumps[t] = session.result("etdump");
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 2; ++t) EXPECT_EQ(parse(dumps[t])->run_data()->size(), static_cast<size_t>(kRuns[t]));
}

TEST(Tracing, ATooSmallDebugBufferSaysHowMuchWasNeeded) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  etrt::TraceSession session("etdump", 16);
  method.set_trace_session(&session);
  Input input(program, "forward", 0.5f);
  run(method, input);  // the run itself succeeds
  try {
    session.result("etdump");
    FAIL() << "a 16-byte debug buffer cannot hold this run's outputs";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_OUT_OF_MEMORY);
    EXPECT_THAT(error.what(), HasSubstr("too small"));
    EXPECT_THAT(error.what(), HasSubstr("needed"));
  }
}

TEST(Tracing, UnknownTracerAndUnknownResultAreClearErrors) {
  try {
    etrt::TraceSession session("no_such_tracer");
    FAIL() << "a tracer nobody provides";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_NOT_FOUND);
    EXPECT_THAT(error.what(), HasSubstr("no_such_tracer"));
  }
  etrt::TraceSession session("etdump");
  try {
    session.result("flamegraph");
    FAIL() << "an unknown result";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_NOT_FOUND);
    EXPECT_THAT(error.what(), HasSubstr("flamegraph"));
  }
}

TEST(Tracing, StoppingTracingStopsRecording) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  etrt::TraceSession session("etdump");
  method.set_trace_session(&session);
  Input input(program, "forward", 0.5f);
  run(method, input);
  method.set_trace_session(nullptr);
  run(method, input);
  EXPECT_EQ(parse(session.result("etdump"))->run_data()->size(), 1u);
}

// Operator summary lines without their times: name, plugin, kind, calls.
std::vector<std::string> summary_keys(const std::string& summary) {
  std::vector<std::string> keys;
  size_t begin = 0;
  while (begin < summary.size()) {
    size_t end = summary.find('\n', begin);
    std::string line = summary.substr(begin, end - begin);
    keys.push_back(line.substr(0, line.rfind('\t')));
    begin = end == std::string::npos ? summary.size() : end + 1;
  }
  return keys;
}

// ABI 1.5: the tracer keeps the pointers of instruction names and reads them
// when a result is fetched; the host keeps those names for the session's life,
// so a result fetched after the method and its program are gone is the same.
TEST(Tracing, ResultsFetchedAfterTheMethodIsGoneNameItsInstructions) {
  etrt::TraceSession kept("etdump"), reference("etdump");
  std::vector<std::string> operators;
  std::string reference_summary;
  {
    etrt::Program program = load("plain");
    etrt::Method method = program.load_method("forward");
    Input input(program, "forward", 0.5f);
    method.set_trace_session(&reference);
    run(method, input);
    reference_summary = reference.result("operator_summary");
    method.set_trace_session(&kept);
    run(method, input);
    operators = program.operators("forward");
  }
  const etrt::etdump::ETDump* dump = parse(kept.result("etdump"));
  ASSERT_EQ(dump->run_data()->size(), 1u);
  std::vector<std::string> names = profile_names(*dump->run_data()->Get(0));
  ASSERT_GT(names.size(), 1u);
  EXPECT_EQ(names.back(), "Method::execute");
  for (size_t i = 0; i + 1 < names.size(); ++i)
    EXPECT_THAT(operators, ::testing::Contains(names[i])) << "event " << i;
  EXPECT_EQ(summary_keys(kept.result("operator_summary")), summary_keys(reference_summary));
  EXPECT_THAT(kept.result("chrome_trace"), HasSubstr("\"Method::execute\""));
}

// One host call as the span tracer (tests/abi/span_tracer_plugin.c) logs it.
struct TracerCall {
  char what = 0;
  int kind = 0;
  long long id = 0;
  std::string name;
  uint64_t start = 0, end = 0;
};

// What `tracer` was called with over `runs` runs of forward (one fetch at the end).
// Worker chunks and "K" lines (a 1.6 batch's end) are kept only with `batches`.
std::vector<TracerCall> traced_calls(etrt::Method& method, etrt::Program& program, const std::string& tracer,
                                     int runs = 1, bool batches = false) {
  static const bool declared = [] {  // the span tracer at ABI 1.4, 1.5 and 1.6 (tests/plugins/CMakeLists.txt)
    for (const char* name : {"pairs_tracer", "spans_tracer", "records_tracer"})
      etrt::Runtime::get().add_manifest(manifest_path(name));
    return true;
  }();
  EXPECT_TRUE(declared);
  etrt::TraceSession session(tracer);
  method.set_trace_session(&session);
  Input input(program, "forward", 0.5f);
  for (int i = 0; i < runs; ++i) {
    run(method, input);
    // A pause past the clock's re-anchoring (1 ms) half-way: earlier runs convert with a later anchor.
    if (runs > 1 && i == runs / 2) std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  method.set_trace_session(nullptr);
  std::vector<TracerCall> calls;
  std::istringstream lines(session.result("calls"));
  TracerCall call;
  while (lines >> call.what >> call.kind >> call.id >> call.name >> call.start >> call.end)
    if (batches || (call.kind != ET_TRACE_WORKER && call.what != 'K'))  // chunks on pool threads come as pairs either way
      calls.push_back(call);
  return calls;
}

// ABI 1.5: a tracer with session_span gets each instruction in one call (host-kept
// names, start and end); a 1.4 tracer gets the same instructions as begin/end pairs.
TEST(Tracing, ATracerWithoutSessionSpanGetsPairsAndOneWithItGetsWholeSpans) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  std::vector<TracerCall> pairs = traced_calls(method, program, "test_pairs_tracer");
  std::vector<TracerCall> spans = traced_calls(method, program, "test_spans_tracer");
  et_method_info info = program.method_info("forward");
  ASSERT_EQ(pairs.size(), 2 * (info.num_instructions + 1));
  ASSERT_EQ(spans.size(), info.num_instructions + 2);
  for (const std::vector<TracerCall>* calls : {&pairs, &spans}) {
    EXPECT_EQ(calls->front().what, 'B');
    EXPECT_EQ(calls->front().kind, ET_TRACE_METHOD);
    EXPECT_EQ(calls->back().what, 'E');
    EXPECT_EQ(calls->back().kind, ET_TRACE_METHOD);
  }
  uint64_t previous_end = spans.front().start;
  for (size_t i = 0; i < info.num_instructions; ++i) {
    const TracerCall& begin = pairs[1 + 2 * i];
    const TracerCall& end = pairs[2 + 2 * i];
    const TracerCall& span = spans[1 + i];
    EXPECT_EQ(begin.what, 'B');
    EXPECT_EQ(end.what, 'E');
    EXPECT_EQ(span.what, 'S');
    for (const TracerCall* call : {&end, &span}) {
      EXPECT_EQ(call->kind, begin.kind);
      EXPECT_EQ(call->id, begin.id);
      EXPECT_EQ(call->name, begin.name);
    }
    EXPECT_EQ(span.id, static_cast<long long>(i));
    EXPECT_LE(begin.start, end.end);
    EXPECT_LE(span.start, span.end) << "instruction " << i;
    EXPECT_GE(span.start, previous_end) << "instruction " << i << " starts before the one before it ended";
    previous_end = span.end;
  }
  EXPECT_LE(previous_end, spans.back().end) << "the method ended before its last instruction";
}

// CLOCK_MONOTONIC, the host's trace clock (trace_clock_ns).
uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// ABI 1.6: a tracer with session_records gets each run as raw records in batches:
// the first batch opens the run, the instructions in order (the same kinds, ids
// and names a 1.5 tracer gets, times converted to ns from the batch's anchor and
// rate), each inside the run and after the one before, and the run's own record
// last. A 1.5 tracer on the same host still gets session_span calls (above).
TEST(Tracing, ATracerWithSessionRecordsGetsEachRunAsRawRecords) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  const size_t instructions = program.method_info("forward").num_instructions;
  std::vector<TracerCall> records = traced_calls(method, program, "test_records_tracer");
  std::vector<TracerCall> spans = traced_calls(method, program, "test_spans_tracer");
  ASSERT_EQ(records.size(), instructions + 2);
  ASSERT_EQ(spans.size(), instructions + 2);
  EXPECT_EQ(records.front().what, 'N');
  const TracerCall& run = records.back();
  EXPECT_EQ(run.what, 'R');
  EXPECT_EQ(run.kind, ET_TRACE_METHOD);
  EXPECT_EQ(run.id, -1);
  EXPECT_EQ(run.name, "forward");
  EXPECT_LE(run.start, run.end);
  uint64_t now = monotonic_ns();
  EXPECT_LE(run.end, now) << "a run's end converted to a time after the test read the clock";
  EXPECT_GT(run.start + 60'000'000'000ull, now) << "a run's start converted to over a minute ago";
  uint64_t previous_end = run.start;
  for (size_t i = 0; i < instructions; ++i) {
    const TracerCall& span = spans[1 + i];
    const TracerCall& record = records[1 + i];
    EXPECT_EQ(record.what, 'R');
    EXPECT_EQ(record.kind, span.kind) << "instruction " << i;
    EXPECT_EQ(record.id, static_cast<long long>(i));
    EXPECT_EQ(record.name, span.name) << "instruction " << i;
    EXPECT_LE(record.start, record.end) << "instruction " << i;
    EXPECT_GE(record.start, previous_end) << "instruction " << i << " starts before the one before it ended";
    previous_end = record.end;
  }
  EXPECT_LE(previous_end, run.end) << "the run ended before its last instruction";
}

// ABI 1.6: the events a delegate reports during its call (the XNNPACK plugin: one
// per runtime and per node it runs itself) are records too -- in the call's
// batch, before the call's own record (they end first), inside its bounds --
// and make the host hand nothing over early (only worker chunks, still pairs, do).
TEST(Tracing, ADelegatesEventsAreRecordsBeforeItsCallsOwnRecord) {
  etrt::Program program = load("xnnpack");
  etrt::Method method = program.load_method("forward");
  constexpr int kRuns = 3;
  std::vector<TracerCall> calls = traced_calls(method, program, "test_records_tracer", kRuns, /*batches=*/true);
  size_t events = 0, delegate_calls = 0, early_batches = 0;
  std::vector<TracerCall> open_events;  // reported by the delegate call whose record comes next
  for (size_t i = 0; i < calls.size(); ++i) {
    const TracerCall& call = calls[i];
    // A batch before the end goes early only for a call that is still a pair: a worker chunk.
    if (call.what == 'K' && i + 1 < calls.size() && calls[i + 1].kind != ET_TRACE_WORKER) ++early_batches;
    if (call.what != 'R') continue;
    if (call.kind == ET_TRACE_DELEGATE_EVENT) {
      open_events.push_back(call);
      ++events;
      continue;
    }
    if (call.kind == ET_TRACE_DELEGATE) {
      ++delegate_calls;
      EXPECT_FALSE(open_events.empty()) << "delegate call at instruction " << call.id << " reported no event";
      for (const TracerCall& event : open_events) {
        EXPECT_EQ(event.id, call.id) << event.name << ": not its delegate call's instruction";
        EXPECT_NE(event.name, "-");
        EXPECT_LE(call.start, event.start) << event.name;
        EXPECT_LE(event.start, event.end) << event.name;
        EXPECT_LE(event.end, call.end) << event.name;
      }
      open_events.clear();
      continue;
    }
    EXPECT_TRUE(open_events.empty()) << "events before a record that is not their delegate call's";
  }
  EXPECT_TRUE(open_events.empty());
  EXPECT_GE(delegate_calls, static_cast<size_t>(kRuns));
  EXPECT_GE(events, delegate_calls);
  EXPECT_EQ(early_batches, 0u) << "delegate events made the host hand its records over early";
}

// The host's buffer of 1.6 records (kTraceRecordBatch in core/src/program/tracing.h).
constexpr size_t kHostRecordBuffer = 256;

// ABI 1.6: the records of successive runs wait in the host's buffer and reach the
// tracer when it fills (in the middle of a run, too) and when the result is
// fetched; each run is still whole and in order (its instructions, then its own
// record), and runs recorded before the clock re-anchored keep their own times.
TEST(Tracing, RecordsOfManyRunsReachTheTracerInFullBatchesAsWholeRuns) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  const size_t instructions = program.method_info("forward").num_instructions;
  ASSERT_NE(kHostRecordBuffer % (instructions + 1), 0u) << "pick a program whose runs do not fill the buffer exactly";
  const int runs = static_cast<int>(2 * kHostRecordBuffer / (instructions + 1)) + 3;  // two full buffers and more
  std::vector<TracerCall> calls = traced_calls(method, program, "test_records_tracer", runs, /*batches=*/true);
  size_t batches = 0, full = 0, mid_run = 0, records = 0;
  int runs_seen = 0;
  size_t next_id = 0;
  bool in_run = false;
  uint64_t previous_end = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const TracerCall& call = calls[i];
    if (call.what == 'K') {
      ++batches;
      records += call.start;
      if (call.start == kHostRecordBuffer) ++full;
      if (call.start == kHostRecordBuffer && in_run) ++mid_run;
      const bool last = i + 1 == calls.size();
      const bool before_other_call = !last && calls[i + 1].what != 'N' && calls[i + 1].what != 'R';
      if (!last && !before_other_call) {
        EXPECT_EQ(call.start, kHostRecordBuffer) << "batch " << batches << " went early";
      }
      continue;
    }
    if (call.what == 'N') {
      EXPECT_FALSE(in_run) << "run " << runs_seen << " began inside another";
      in_run = true;
      next_id = 0;
      ++runs_seen;
      continue;
    }
    if (call.what != 'R') continue;  // delegate events, worker chunks: none in this program's runs
    ASSERT_TRUE(in_run) << "a record outside a run";
    EXPECT_LE(call.start, call.end);
    if (call.kind == ET_TRACE_METHOD) {
      EXPECT_EQ(next_id, instructions) << "run " << runs_seen << " ended before its last instruction";
      EXPECT_LT(call.start, call.end) << "run " << runs_seen << " has no duration: its ticks were converted wrongly";
      in_run = false;
    } else {
      EXPECT_EQ(call.id, static_cast<long long>(next_id)) << "run " << runs_seen;
      ++next_id;
    }
    EXPECT_GE(call.end, previous_end) << "run " << runs_seen << " ends before the span before it";
    previous_end = call.end;
  }
  EXPECT_FALSE(in_run);
  EXPECT_EQ(runs_seen, runs);
  EXPECT_EQ(records, static_cast<size_t>(runs) * (instructions + 1));
  EXPECT_GE(full, 2u) << "the buffer never filled";
  EXPECT_GE(mid_run, 1u) << "no full buffer was delivered in the middle of a run";
  EXPECT_LT(batches, static_cast<size_t>(runs) / 2) << "records went to the tracer after (nearly) every run";
}

// The ETDump of runs fetched once equals the one fetched after every run: the same
// run blocks, each with the same events (names, instructions, chains), in order.
TEST(Tracing, ManyRunsBetweenFetchesGiveTheSameRunBlocksAsAFetchAfterEachRun) {
  etrt::Program program = load("plain");
  etrt::Method method = program.load_method("forward");
  const size_t instructions = program.method_info("forward").num_instructions;
  const int runs = static_cast<int>(kHostRecordBuffer / (instructions + 1)) + 5;  // a full buffer in mid-run
  Input input(program, "forward", 0.5f);
  auto etdump_of = [&](bool fetch_each_run) {
    etrt::TraceSession session("etdump", 0, "plain.pte");
    method.set_trace_session(&session);
    for (int i = 0; i < runs; ++i) {
      run(method, input);
      if (fetch_each_run) {
        EXPECT_FALSE(session.result("etdump").empty());
      }
    }
    std::string bytes = session.result("etdump");
    method.set_trace_session(nullptr);
    return bytes;
  };
  const std::string each = etdump_of(true), once = etdump_of(false);
  const etrt::etdump::ETDump* a = parse(each);
  const etrt::etdump::ETDump* b = parse(once);
  ASSERT_NE(a->run_data(), nullptr);
  ASSERT_NE(b->run_data(), nullptr);
  ASSERT_EQ(a->run_data()->size(), static_cast<size_t>(runs));
  ASSERT_EQ(b->run_data()->size(), static_cast<size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    const auto& ea = *a->run_data()->Get(r)->events();
    const auto& eb = *b->run_data()->Get(r)->events();
    EXPECT_EQ(b->run_data()->Get(r)->name()->str(), "Execute");
    ASSERT_EQ(ea.size(), instructions + 1) << "run " << r;
    ASSERT_EQ(eb.size(), ea.size()) << "run " << r;
    for (size_t i = 0; i < ea.size(); ++i) {
      const auto* pa = ea.Get(i)->profile_event();
      const auto* pb = eb.Get(i)->profile_event();
      ASSERT_NE(pa, nullptr);
      ASSERT_NE(pb, nullptr);
      EXPECT_EQ(pb->name()->str(), pa->name()->str()) << "run " << r << " event " << i;
      EXPECT_EQ(pb->instruction_id(), pa->instruction_id()) << "run " << r << " event " << i;
      EXPECT_EQ(pb->chain_index(), pa->chain_index()) << "run " << r << " event " << i;
    }
    EXPECT_EQ(eb.Get(instructions)->profile_event()->name()->str(), "Method::execute");
  }
}

}  // namespace
