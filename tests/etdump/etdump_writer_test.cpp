// The ETDump writer against its own schema (flatbuffers verifier + read-back),
// the debug buffer's alignment and overflow accounting, and the Chrome trace.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "chrome_trace.h"
#include "debug_buffer.h"
#include "etdump_generated.h"
#include "etdump_writer.h"
#include "event_log.h"
#include "utf8.h"

namespace etrt::etdump {
namespace {

EventLog two_blocks() {
  EventLog log;
  log.begin_block("Default");
  log.add(ProfileRecord{log.intern("Method::init"), 0, -1, -1, kNoName, 10, 20, 0});
  log.begin_block("Execute");
  log.add(ProfileRecord{log.intern("aten::add.out"), 0, 3, -1, kNoName, 100, 250, 0});
  DebugRecord debug;
  debug.instruction = 3;
  debug.name = log.intern("aten::add.out");
  debug.kind = DebugRecord::Kind::Tensor;
  debug.tensors.push_back(TensorRecord{6, {2, 3}, {3, 1}, 64});
  debug.is_output = true;
  log.add(std::move(debug));
  log.add(ProfileRecord{log.intern("XnnpackBackend"), 0, 4, 7, log.intern("Fully Connected #1"), 260, 300, 1});
  return log;
}

TEST(EtdumpWriter, WritesASizePrefixedED00BufferThatVerifies) {
  std::vector<uint8_t> bytes = write_etdump(two_blocks());
  ASSERT_GE(bytes.size(), 12u);
  uint32_t prefix;
  std::memcpy(&prefix, bytes.data(), 4);
  EXPECT_EQ(prefix, bytes.size() - 4);  // the length of everything after the prefix
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, 4), "ED00");
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  EXPECT_TRUE(VerifySizePrefixedETDumpBuffer(verifier));
}

TEST(EtdumpWriter, ReadsBackEveryBlockAndEventInOrder) {
  std::vector<uint8_t> bytes = write_etdump(two_blocks());
  const ETDump* dump = GetSizePrefixedETDump(bytes.data());
  EXPECT_EQ(dump->version(), kEtdumpVersion);
  ASSERT_EQ(dump->run_data()->size(), 2u);
  EXPECT_EQ(dump->run_data()->Get(0)->name()->str(), "Default");
  const RunData* run = dump->run_data()->Get(1);
  EXPECT_EQ(run->name()->str(), "Execute");
  ASSERT_EQ(run->events()->size(), 3u);

  const ProfileEvent* add = run->events()->Get(0)->profile_event();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(run->events()->Get(0)->debug_event(), nullptr);
  EXPECT_EQ(add->name()->str(), "aten::add.out");
  EXPECT_EQ(add->instruction_id(), 3);
  EXPECT_EQ(add->delegate_debug_id_int(), -1);
  EXPECT_EQ(add->delegate_debug_id_str(), nullptr);
  EXPECT_EQ(add->start_time(), 100u);
  EXPECT_EQ(add->end_time(), 250u);

  const DebugEvent* debug = run->events()->Get(1)->debug_event();
  ASSERT_NE(debug, nullptr);
  EXPECT_EQ(debug->instruction_id(), 3);
  ASSERT_EQ(debug->debug_entry()->val(), ValueType::Tensor);
  const Tensor* tensor = debug->debug_entry()->tensor();
  EXPECT_EQ(tensor->scalar_type(), ScalarType::FLOAT);
  EXPECT_EQ(std::vector<int64_t>(tensor->sizes()->begin(), tensor->sizes()->end()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor->offset(), 64);
  EXPECT_TRUE(debug->debug_entry()->output()->bool_val());

  const ProfileEvent* node = run->events()->Get(2)->profile_event();
  EXPECT_EQ(node->delegate_debug_id_int(), 7);
  EXPECT_EQ(node->delegate_debug_id_str()->str(), "Fully Connected #1");
}

TEST(EtdumpWriter, AnEmptyLogIsAValidDumpWithNoRuns) {
  std::vector<uint8_t> bytes = write_etdump(EventLog{});
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(VerifySizePrefixedETDumpBuffer(verifier));
  EXPECT_EQ(GetSizePrefixedETDump(bytes.data())->run_data()->size(), 0u);
}

TEST(EventLog, InternsEachNameOnce) {
  EventLog log;
  NameId a = log.intern("aten::mul.out");
  EXPECT_EQ(log.intern(std::string("aten::mul.") + "out"), a);
  EXPECT_NE(log.intern("aten::add.out"), a);
  EXPECT_EQ(log.intern(""), kNoName);
  EXPECT_EQ(log.text(a), "aten::mul.out");
}

TEST(DebugBuffer, AlignsEveryBlobTo64Bytes) {
  DebugBuffer buffer(1024);
  float values[3] = {1, 2, 3};
  EXPECT_EQ(buffer.append(values, sizeof values), 0);
  EXPECT_EQ(buffer.append(values, 4), 64);
  EXPECT_EQ(buffer.append(values, 0), 128);
  EXPECT_EQ(buffer.append(values, 8), 128);
  float back;
  std::memcpy(&back, buffer.bytes().data() + 64, 4);
  EXPECT_EQ(back, 1.0f);
  EXPECT_FALSE(buffer.overflowed());
}

TEST(DebugBuffer, RemembersHowMuchAnOverflowingRunNeeded) {
  DebugBuffer buffer(100);
  std::vector<uint8_t> blob(80, 7);
  EXPECT_EQ(buffer.append(blob.data(), blob.size()), 0);
  EXPECT_EQ(buffer.append(blob.data(), blob.size()), std::nullopt);  // would span [128, 208)
  EXPECT_TRUE(buffer.overflowed());
  EXPECT_EQ(buffer.needed(), 208u);
  EXPECT_EQ(buffer.bytes().size(), 80u);  // what fitted stays
  buffer.clear();
  EXPECT_FALSE(buffer.overflowed());
  EXPECT_EQ(buffer.append(blob.data(), blob.size()), 0);
}

TEST(ChromeTrace, OneCompleteEventPerProfileRecordOnItsThreadTrack) {
  std::string json = write_chrome_trace(two_blocks(), "etrt: \"model\".pte");
  EXPECT_NE(json.find("\"name\":\"aten::add.out\",\"cat\":\"Execute\",\"ts\":0.100,\"dur\":0.150"),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"tid\":1,\"name\":\"XnnpackBackend\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"delegate_debug_name\":\"Fully Connected #1\""), std::string::npos);
  EXPECT_NE(json.find("etrt: \\\"model\\\".pte"), std::string::npos);  // escaped
  EXPECT_NE(json.find("\"name\":\"pool worker 1\""), std::string::npos);
}

// Names come from programs and may hold any bytes; both formats must stay UTF-8
// (found by fuzz/etdump_fuzzer.cpp: a name with byte 0xFF made the Chrome trace
// unreadable to JSON readers and the ETDump's strings invalid).
TEST(Utf8, InvalidBytesBecomeReplacementCharactersAndValidTextIsKept) {
  EXPECT_EQ(repair_utf8("aten::add.out"), "aten::add.out");
  EXPECT_EQ(repair_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(repair_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(repair_utf8("\xC3"), "\xEF\xBF\xBD");                  // truncated
  EXPECT_EQ(repair_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");   // overlong '/'
  EXPECT_EQ(repair_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

TEST(Utf8, NamesWithInvalidBytesAreWrittenAsValidUtf8) {
  EventLog log;
  log.begin_block("Execute");
  log.add(ProfileRecord{log.intern("op\xFF\"x"), 0, 0, -1, kNoName, 1, 2, 0});
  std::string json = write_chrome_trace(log, "etrt");
  EXPECT_NE(json.find("\"name\":\"op\xEF\xBF\xBD\\\"x\""), std::string::npos) << json;
  EXPECT_EQ(json.find('\xFF'), std::string::npos);
  std::vector<uint8_t> bytes = write_etdump(log);
  const ETDump* dump = GetSizePrefixedETDump(bytes.data());
  EXPECT_EQ(dump->run_data()->Get(0)->events()->Get(0)->profile_event()->name()->str(), "op\xEF\xBF\xBD\"x");
}

}  // namespace
}  // namespace etrt::etdump
