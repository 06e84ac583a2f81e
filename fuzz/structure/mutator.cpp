// fuzz/structure/mutator.h: decoding, a few mutations, encoding.
#include "mutator.h"

#include "containers.h"
#include "graph_mutations.h"
#include "program_mutations.h"

namespace etrt_fuzz {
namespace {

// Turns every jump back (to itself or an earlier instruction of its chain) into a jump to the end of
// the chain. A loop whose condition stays false runs until the executor's limit of 10,000,000
// instructions: kernel calls far past libFuzzer's -timeout under the sanitizers, a timeout that is
// no defect. Jumps forward and out of range (negative, past the end) stay.
void no_backward_jumps(PteFile& file) {
  for (auto& plan : file.program->execution_plan) {
    for (auto& chain : plan->chains) {
      for (size_t i = 0; i < chain->instructions.size(); ++i) {
        pte::JumpFalseCallT* jump = chain->instructions[i]->instr_args.AsJumpFalseCall();
        if (jump != nullptr && jump->destination_instruction >= 0 &&
            static_cast<size_t>(jump->destination_instruction) <= i)
          jump->destination_instruction = static_cast<int32_t>(chain->instructions.size());
      }
    }
  }
}

}  // namespace

bool mutate_file(const uint8_t* data, size_t size, uint64_t seed, std::vector<uint8_t>* out,
                 std::vector<const char*>* applied) {
  PteFile file;
  if (!decode_pte(data, size, &file)) return false;
  Random random(seed);
  size_t wanted = random.one_in(3) ? 2 + random.below(3) : 1;
  size_t done = 0;
  for (size_t attempt = 0; attempt < 16 && done < wanted; ++attempt) {
    const char* name = nullptr;
    // Payload pointers go stale when a program mutation resizes the segments: fetched every time.
    std::vector<std::vector<uint8_t>*> payloads = delegate_payloads(file);
    if (!payloads.empty() && random.one_in(2)) {
      std::vector<uint8_t>* bytes = random.pick(payloads);
      XnnBlob blob;
      if (decode_blob(*bytes, &blob) && (name = mutate_graph(blob, random)) != nullptr) *bytes = encode_blob(blob);
    } else {
      name = mutate_program(file, random);
    }
    if (name == nullptr) continue;
    ++done;
    if (applied != nullptr) applied->push_back(name);
  }
  if (done == 0) return false;
  no_backward_jumps(file);
  *out = encode_pte(file);
  return true;
}

bool cross_files(const uint8_t* data, size_t size, const uint8_t* donor, size_t donor_size, uint64_t seed,
                 std::vector<uint8_t>* out, const char** applied) {
  PteFile file, other;
  if (!decode_pte(data, size, &file) || !decode_pte(donor, donor_size, &other)) return false;
  Random random(seed);
  const char* name = nullptr;
  std::vector<std::vector<uint8_t>*> ours = delegate_payloads(file), theirs = delegate_payloads(other);
  if (!ours.empty() && !theirs.empty() && random.one_in(2)) {
    std::vector<uint8_t>* bytes = random.pick(ours);
    XnnBlob blob, donor_blob;
    if (decode_blob(*bytes, &blob) && decode_blob(*random.pick(theirs), &donor_blob) &&
        (name = cross_graphs(blob, donor_blob, random)) != nullptr)
      *bytes = encode_blob(blob);
  }
  if (name == nullptr) name = cross_programs(file, other, random);
  if (name == nullptr) return false;
  if (applied != nullptr) *applied = name;
  no_backward_jumps(file);
  *out = encode_pte(file);
  return true;
}

}  // namespace etrt_fuzz
