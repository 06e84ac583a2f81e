// The structure-aware mutator of fuzz/structure/ (pte_struct_fuzzer):
//   - decoding and re-encoding a program (extended header, segments, XNNPACK blobs and
//     their headers) keeps every reference program running with the same results, so
//     mutants differ from their parent only where a mutation changed a field;
//   - every mutant decodes again (the chain of mutations never falls back to bytes) and
//     has no jump back (a loop runs to the executor's instruction limit: a fuzzer timeout),
//     and every mutation of the program and of the graph applies to the seed corpus;
//   - a union that names a type without its table survives encoding (flatc's object API
//     cannot write one without fuzz/structure/null_union_tables.py);
//   - crossover copies pieces between programs.
// Mutants are not run here: that is the fuzzer's job (fuzz/run_fuzzer.sh).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "containers.h"
#include "etrt/etrt.h"
#include "graph_mutations.h"
#include "mutator.h"
#include "program_mutations.h"
#include "pte_exercise.h"

namespace {

namespace fs = std::filesystem;
using etrt_fuzz::PteFile;
using etrt_fuzz::XnnBlob;

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<fs::path> programs_under(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && entry.path().extension() == ".pte") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// What one run of every method on zero inputs gives: errors and output bytes, in order.
std::vector<std::string> run_all(const std::vector<uint8_t>& bytes) {
  std::vector<std::string> results;
  et_program* program = nullptr;
  et_error* error = nullptr;
  if (et_program_load_bytes(bytes.data(), bytes.size(), "roundtrip.pte", &program, &error) != ET_OK)
    return {"load: " + etrt_pte::take_message(error)};
  for (size_t m = 0; m < et_program_method_count(program); ++m) {
    const char* name = et_program_method_name(program, m);
    et_method* method = nullptr;
    error = nullptr;
    if (et_method_load(program, name, &method, &error) != ET_OK) {
      results.push_back(std::string(name) + ": load: " + etrt_pte::take_message(error));
      continue;
    }
    etrt_pte::InputStorage storage;
    results.push_back(std::string(name) + ": inputs: " + etrt_pte::set_zero_inputs(program, name, method, &storage));
    error = nullptr;
    if (et_method_execute(method, &error) != ET_OK) {
      results.push_back(std::string(name) + ": execute: " + etrt_pte::take_message(error));
    } else {
      for (size_t o = 0; o < et_method_output_count(method); ++o) {
        const et_value* out = et_method_output(method, o);
        std::string text = std::string(name) + ": output " + std::to_string(o) + " tag " + std::to_string(out->tag);
        if (out->tag == ET_VALUE_TENSOR && out->tensor->data != nullptr)
          text.append(static_cast<const char*>(out->tensor->data), out->tensor->nbytes);
        else
          text += " " + std::to_string(out->as_int) + " " + std::to_string(out->as_double);
        results.push_back(text);
      }
    }
    et_method_destroy(method);
  }
  et_program_destroy(program);
  return results;
}

// True when every method loaded, took its inputs and ran.
bool ran_cleanly(const std::vector<std::string>& results) {
  for (const std::string& r : results) {
    if (r.rfind("load: ", 0) == 0 || r.find(": load: ") != std::string::npos ||
        r.find(": execute: ") != std::string::npos)
      return false;
    size_t inputs = r.find(": inputs: ");
    if (inputs != std::string::npos && inputs + 10 != r.size()) return false;
  }
  return true;
}

// JumpFalse instructions whose destination is themselves or an earlier instruction: loops.
size_t backward_jumps(PteFile& file) {
  size_t count = 0;
  for (auto& plan : file.program->execution_plan)
    for (auto& chain : plan->chains)
      for (size_t i = 0; i < chain->instructions.size(); ++i)
        if (auto* jump = chain->instructions[i]->instr_args.AsJumpFalseCall();
            jump != nullptr && jump->destination_instruction >= 0 && static_cast<size_t>(jump->destination_instruction) <= i)
          ++count;
  return count;
}

// Decoded and encoded again, every delegate blob with it.
std::vector<uint8_t> round_trip(const std::vector<uint8_t>& bytes, size_t* blobs) {
  PteFile file;
  if (!etrt_fuzz::decode_pte(bytes.data(), bytes.size(), &file)) return {};
  for (std::vector<uint8_t>* payload : etrt_fuzz::delegate_payloads(file)) {
    XnnBlob blob;
    if (!etrt_fuzz::decode_blob(*payload, &blob)) continue;
    *payload = etrt_fuzz::encode_blob(blob);
    ++*blobs;
  }
  return etrt_fuzz::encode_pte(file);
}

TEST(StructureMutator, RoundTripKeepsEveryReferenceProgramRunning) {
  size_t programs = 0, clean = 0, blobs = 0, clean_with_blobs = 0;
  for (const fs::path& path : programs_under(ETRT_MODELS_ROOT)) {
    if (fs::file_size(path) > (size_t{1} << 20)) continue;  // the zoo's large models: slow, nothing new
    SCOPED_TRACE(path.string());
    std::vector<uint8_t> original = read_bytes(path);
    size_t program_blobs = 0;
    std::vector<uint8_t> encoded = round_trip(original, &program_blobs);
    ASSERT_FALSE(encoded.empty()) << "does not decode";
    std::vector<std::string> expected = run_all(original);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(run_all(encoded), expected);
    ++programs;
    blobs += program_blobs;
    if (ran_cleanly(expected)) {
      ++clean;
      if (program_blobs > 0) ++clean_with_blobs;
    }
  }
  // Equal results mean something only where the programs ran: nearly all of them, XNNPACK's included
  // (their blobs in segments and inline).
  std::printf("%zu programs (%zu ran cleanly), %zu blobs (%zu programs with blobs ran cleanly)\n", programs, clean,
              blobs, clean_with_blobs);
  EXPECT_GE(programs, 60u);
  EXPECT_GE(clean, programs - 5) << clean << " of " << programs << " programs ran cleanly";
  EXPECT_GE(blobs, 20u);
  EXPECT_GE(clean_with_blobs, 20u);
}

TEST(StructureMutator, MutantsDecodeAndEveryMutationApplies) {
  std::map<std::string, size_t> applied;
  size_t mutants = 0, unchanged = 0;
  for (const fs::path& path : programs_under(ETRT_STRUCT_CORPUS)) {
    SCOPED_TRACE(path.string());
    std::vector<uint8_t> seed = read_bytes(path);
    size_t blobs = 0;
    std::vector<uint8_t> normalised = round_trip(seed, &blobs);
    for (uint64_t s = 0; s < 400; ++s) {
      std::vector<uint8_t> mutant;
      std::vector<const char*> names;
      ASSERT_TRUE(etrt_fuzz::mutate_file(seed.data(), seed.size(), s, &mutant, &names)) << "seed " << s;
      PteFile decoded;
      ASSERT_TRUE(etrt_fuzz::decode_pte(mutant.data(), mutant.size(), &decoded)) << "mutant of seed " << s;
      ASSERT_FALSE(names.empty());
      EXPECT_EQ(backward_jumps(decoded), 0u) << "mutant of seed " << s;
      for (const char* name : names) ++applied[name];
      ++mutants;
      if (mutant == normalised) ++unchanged;
    }
  }
  ASSERT_GT(mutants, 0u);
  EXPECT_LT(unchanged * 10, mutants) << unchanged << " of " << mutants << " mutants equal their parent";
  for (const char* name : etrt_fuzz::program_mutation_names()) EXPECT_GT(applied[name], 0u) << name;
  for (const char* name : etrt_fuzz::graph_mutation_names()) EXPECT_GT(applied[name], 0u) << name;
}

TEST(StructureMutator, NullUnionTableSurvivesEncoding) {
  std::vector<uint8_t> bytes = read_bytes(fs::path(ETRT_MODELS_ROOT) / "generated_q/q_add/xnnpack.pte");
  PteFile file;
  ASSERT_TRUE(etrt_fuzz::decode_pte(bytes.data(), bytes.size(), &file));
  std::vector<std::vector<uint8_t>*> payloads = etrt_fuzz::delegate_payloads(file);
  ASSERT_EQ(payloads.size(), 1u);
  XnnBlob blob;
  ASSERT_TRUE(etrt_fuzz::decode_blob(*payloads[0], &blob));
  size_t dropped = 0;
  for (auto& value : blob.graph->values) {
    auto* quantized = value->kind.AsQuantizedTensorValue();
    if (quantized == nullptr || quantized->quantization.value == nullptr) continue;
    auto type = quantized->quantization.type;
    quantized->quantization.Reset();
    quantized->quantization.type = type;
    ++dropped;
  }
  ASSERT_GT(dropped, 0u);
  *payloads[0] = etrt_fuzz::encode_blob(blob);
  etrt_fuzz::pte::KernelTypes tensor = file.program->execution_plan[0]->values[0]->val.type;
  file.program->execution_plan[0]->values[0]->val.Reset();
  file.program->execution_plan[0]->values[0]->val.type = tensor;
  std::vector<uint8_t> encoded = etrt_fuzz::encode_pte(file);

  PteFile again;
  ASSERT_TRUE(etrt_fuzz::decode_pte(encoded.data(), encoded.size(), &again));
  EXPECT_EQ(again.program->execution_plan[0]->values[0]->val.type, tensor);
  EXPECT_EQ(again.program->execution_plan[0]->values[0]->val.value, nullptr);
  XnnBlob blob_again;
  ASSERT_TRUE(etrt_fuzz::decode_blob(*etrt_fuzz::delegate_payloads(again)[0], &blob_again));
  size_t still_null = 0;
  for (auto& value : blob_again.graph->values) {
    auto* quantized = value->kind.AsQuantizedTensorValue();
    if (quantized != nullptr && quantized->quantization.type != etrt_fuzz::xnnblob::Quantization::NONE &&
        quantized->quantization.value == nullptr)
      ++still_null;
  }
  EXPECT_EQ(still_null, dropped);
}

TEST(StructureMutator, CrossoverCombinesTwoPrograms) {
  std::vector<fs::path> seeds = programs_under(ETRT_STRUCT_CORPUS);
  ASSERT_GE(seeds.size(), 2u);
  std::set<std::string> kinds;
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::vector<uint8_t> a = read_bytes(seeds[i]), b = read_bytes(seeds[(i + 1) % seeds.size()]);
    for (uint64_t s = 0; s < 40; ++s) {
      std::vector<uint8_t> child;
      const char* kind = nullptr;
      if (!etrt_fuzz::cross_files(a.data(), a.size(), b.data(), b.size(), s, &child, &kind)) continue;
      PteFile decoded;
      ASSERT_TRUE(etrt_fuzz::decode_pte(child.data(), child.size(), &decoded));
      kinds.insert(kind);
    }
  }
  for (const char* kind : {"cross_instruction", "cross_value", "cross_operator", "cross_delegate_payload", "cross_node"})
    EXPECT_EQ(kinds.count(kind), 1u) << kind;
}

}  // namespace
