#include "etdump_writer.h"

#include "etdump_generated.h"
#include "utf8.h"

namespace etrt::etdump {
namespace {

namespace fb = ::etrt::etdump;  // generated tables live beside us
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

class Writer {
 public:
  explicit Writer(const EventLog& log) : log_(log), strings_(log.name_count()) {}

  std::vector<uint8_t> write() {
    std::vector<Offset<RunData>> runs;
    for (const RunBlock& block : log_.blocks()) runs.push_back(run(block));
    auto root = CreateETDump(builder_, kEtdumpVersion, builder_.CreateVector(runs));
    FinishSizePrefixedETDumpBuffer(builder_, root);
    return {builder_.GetBufferPointer(), builder_.GetBufferPointer() + builder_.GetSize()};
  }

 private:
  // Each name written once and shared by every event naming it (a run repeats a few names).
  Offset<flatbuffers::String> string(NameId id) {
    if (id == kNoName) return 0;
    Offset<flatbuffers::String>& written = strings_[id];
    if (written.IsNull()) written = builder_.CreateSharedString(repair_utf8(log_.text(id)));
    return written;
  }

  Offset<RunData> run(const RunBlock& block) {
    std::vector<Offset<Event>> events;
    events.reserve(block.event_count);
    for (const EventRecord& record : log_.events(block)) {
      if (record.is_profile) {
        if (!log_.profile(record).in_etdump) continue;
        auto profile = this->profile(log_.profile(record));
        events.push_back(CreateEvent(builder_, profile, 0, 0));
      } else {
        auto debug = this->debug(log_.debug(record));
        events.push_back(CreateEvent(builder_, 0, 0, debug));
      }
    }
    auto name = string(block.name);
    return CreateRunData(builder_, name, -1, 0, builder_.CreateVector(events));
  }

  Offset<ProfileEvent> profile(const ProfileRecord& p) {
    auto name = string(p.name);
    auto delegate_str = string(p.delegate_id_str);
    return CreateProfileEvent(builder_, name, p.chain, p.instruction, p.delegate_id_int, delegate_str, 0,
                              p.start_ns, p.end_ns);
  }

  Offset<fb::Tensor> tensor(const TensorRecord& t) {
    auto sizes = builder_.CreateVector(t.sizes);
    auto strides = builder_.CreateVector(t.strides);
    return CreateTensor(builder_, static_cast<ScalarType>(t.scalar_type), sizes, strides, t.offset);
  }

  Offset<Value> value(const DebugRecord& d) {
    Offset<fb::Tensor> single = 0;
    Offset<TensorList> list = 0;
    Offset<Int> int_value = 0;
    Offset<Double> double_value = 0;
    Offset<Bool> bool_value = 0;
    ValueType type = ValueType::Null;
    switch (d.kind) {
      case DebugRecord::Kind::Null: break;
      case DebugRecord::Kind::Int: type = ValueType::Int, int_value = CreateInt(builder_, d.int_value); break;
      case DebugRecord::Kind::Bool: type = ValueType::Bool, bool_value = CreateBool(builder_, d.bool_value); break;
      case DebugRecord::Kind::Double:
        type = ValueType::Double, double_value = CreateDouble(builder_, d.double_value);
        break;
      case DebugRecord::Kind::Tensor:
        type = ValueType::Tensor;
        if (!d.tensors.empty()) single = tensor(d.tensors.front());
        break;
      case DebugRecord::Kind::TensorList: {
        type = ValueType::TensorList;
        std::vector<Offset<fb::Tensor>> items;
        for (const TensorRecord& t : d.tensors) items.push_back(tensor(t));
        list = CreateTensorList(builder_, builder_.CreateVector(items));
        break;
      }
    }
    auto output = CreateBool(builder_, d.is_output);
    return CreateValue(builder_, type, single, list, int_value, 0, double_value, bool_value, output);
  }

  Offset<DebugEvent> debug(const DebugRecord& d) {
    auto entry = value(d);
    auto delegate_str = string(d.delegate_id_str);
    auto name = string(d.name);
    return CreateDebugEvent(builder_, d.chain, d.instruction, entry, d.delegate_id_int, delegate_str, name);
  }

  const EventLog& log_;
  std::vector<Offset<flatbuffers::String>> strings_;  // by NameId; null until written
  FlatBufferBuilder builder_{1024};
};

}  // namespace

std::vector<uint8_t> write_etdump(const EventLog& log) { return Writer(log).write(); }

}  // namespace etrt::etdump
