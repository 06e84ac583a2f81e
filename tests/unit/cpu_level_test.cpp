// CPU levels and the choice among a manifest's library variants (loader/cpu_level.h),
// and how manifests declare the variants (loader/manifest.h). Hosts are built by
// hand, so every architecture and level is covered on any machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "loader/cpu_level.h"
#include "loader/manifest.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace etrt::loader;
namespace fs = std::filesystem;

namespace {

const CpuHost kV3Host{"x86_64", 2};       // AVX2 + FMA, no AVX-512
const CpuHost kBaselineHost{"x86_64", 0};  // SSE2 only
const CpuHost kArmHost{"aarch64", 0};

std::vector<LibraryVariant> kernels_like() {
  return {{"x86-64", "/p/libk.so.1", ""}, {"x86-64-v3", "/p/x86-64-v3/libk.so.1", ""}};
}

TEST(CpuLevel, KnownLevelsAreRankedWithinTheirArchitecture) {
  ASSERT_NE(find_cpu_level("x86-64"), nullptr);
  EXPECT_EQ(find_cpu_level("x86-64")->rank, 0);
  EXPECT_EQ(find_cpu_level("x86-64-v3")->rank, 2);
  EXPECT_STREQ(find_cpu_level("armv8-a")->arch, "aarch64");
  EXPECT_EQ(find_cpu_level("armv8-a")->rank, 0);
  EXPECT_EQ(find_cpu_level("pentium4"), nullptr);
  EXPECT_EQ(kV3Host.best_name(), "x86-64-v3");
  EXPECT_EQ(kV3Host.levels_text(), "x86-64, x86-64-v2, x86-64-v3, x86-64-v4");
}

TEST(CpuLevel, ThisCpuAgreesWithThePluginsOwnAvx2Check) {
  // The plugins' GEMM checks AVX2+FMA the same way (plugins/common/cpu_features.h);
  // a host the loader rates x86-64-v3 or better must pass it, and one rated lower has no AVX2.
  const CpuHost& host = this_cpu();
#if defined(__x86_64__)
  EXPECT_EQ(host.arch, "x86_64");
  // Every CPU with AVX2, FMA and BMI1/2 also has the rest of x86-64-v3 (F16C, MOVBE, LZCNT).
  bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
            __builtin_cpu_supports("bmi2");
  EXPECT_EQ(host.best_rank >= 2, v3);
  EXPECT_EQ(host.best_rank >= 1, __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt"));
#elif defined(__aarch64__)
  EXPECT_EQ(host.arch, "aarch64");
#endif
  EXPECT_FALSE(host.best_name().empty());
}

TEST(CpuLevel, PicksTheHighestLevelTheHostRuns) {
  VariantChoice v3 = choose_library_variant(kernels_like(), kV3Host, cpu_level_limit(kV3Host, nullptr));
  ASSERT_TRUE(v3.ok) << v3.error;
  EXPECT_EQ(v3.index, 1u);
  EXPECT_EQ(v3.level, "x86-64-v3");
  EXPECT_THAT(v3.reason, AllOf(HasSubstr("x86-64, x86-64-v3"), HasSubstr("this CPU runs up to x86-64-v3")));

  VariantChoice base = choose_library_variant(kernels_like(), kBaselineHost, cpu_level_limit(kBaselineHost, ""));
  ASSERT_TRUE(base.ok) << base.error;
  EXPECT_EQ(base.index, 0u);
  EXPECT_EQ(base.level, "x86-64");
}

TEST(CpuLevel, AHigherHostStillTakesTheBestDeclared) {
  CpuHost v4{"x86_64", 3};
  VariantChoice choice = choose_library_variant(kernels_like(), v4, cpu_level_limit(v4, nullptr));
  ASSERT_TRUE(choice.ok);
  EXPECT_EQ(choice.level, "x86-64-v3");
}

TEST(CpuLevel, ForcedLevelCapsTheChoice) {
  CpuLevelLimit limit = cpu_level_limit(kV3Host, "x86-64");
  ASSERT_TRUE(limit.error.empty()) << limit.error;
  EXPECT_TRUE(limit.forced);
  VariantChoice choice = choose_library_variant(kernels_like(), kV3Host, limit);
  ASSERT_TRUE(choice.ok);
  EXPECT_EQ(choice.index, 0u);
  EXPECT_THAT(choice.reason, HasSubstr("ETRT_CPU_LEVEL=x86-64"));
  // v2 is not built: the best declared level at or below it is the baseline.
  EXPECT_EQ(choose_library_variant(kernels_like(), kV3Host, cpu_level_limit(kV3Host, "x86-64-v2")).index, 0u);
  EXPECT_EQ(choose_library_variant(kernels_like(), kV3Host, cpu_level_limit(kV3Host, "x86-64-v3")).index, 1u);
}

TEST(CpuLevel, ForcingWhatTheHostCannotRunIsAnErrorNamingTheVariable) {
  CpuLevelLimit v4 = cpu_level_limit(kV3Host, "x86-64-v4");
  EXPECT_THAT(v4.error, AllOf(HasSubstr("ETRT_CPU_LEVEL=x86-64-v4"), HasSubstr("cannot run"),
                              HasSubstr("up to x86-64-v3")));
  VariantChoice choice = choose_library_variant(kernels_like(), kV3Host, v4);
  EXPECT_FALSE(choice.ok);
  EXPECT_THAT(choice.error, HasSubstr("ETRT_CPU_LEVEL"));

  EXPECT_THAT(cpu_level_limit(kBaselineHost, "x86-64-v3").error, HasSubstr("cannot run"));
  EXPECT_THAT(cpu_level_limit(kV3Host, "haswell").error,
              AllOf(HasSubstr("ETRT_CPU_LEVEL=haswell"), HasSubstr("unknown CPU level"), HasSubstr("x86-64-v3")));
  EXPECT_THAT(cpu_level_limit(kV3Host, "armv8-a").error,
              AllOf(HasSubstr("ETRT_CPU_LEVEL=armv8-a"), HasSubstr("a level of aarch64"), HasSubstr("x86_64")));
}

TEST(CpuLevel, LevelsTheHostCannotRunAreNeverChosen) {
  // Unknown names, other architectures and higher levels are skipped, whatever their order.
  std::vector<LibraryVariant> candidates = {{"x86-64-v4", "/a", ""}, {"znver9", "/b", ""},
                                            {"armv8-a", "/c", ""}, {"x86-64-v2", "/d", ""}};
  VariantChoice choice = choose_library_variant(candidates, kV3Host, cpu_level_limit(kV3Host, nullptr));
  ASSERT_TRUE(choice.ok);
  EXPECT_EQ(choice.index, 3u);
  EXPECT_EQ(choose_library_variant(candidates, kArmHost, cpu_level_limit(kArmHost, nullptr)).index, 2u);

  VariantChoice none = choose_library_variant({{"x86-64-v4", "/a", ""}}, kV3Host, cpu_level_limit(kV3Host, nullptr));
  EXPECT_FALSE(none.ok);
  EXPECT_THAT(none.error, AllOf(HasSubstr("no library variant"), HasSubstr("declares x86-64-v4"),
                                HasSubstr("up to x86-64-v3")));
}

TEST(CpuLevel, ALibraryWithoutALevelIsTheFallback) {
  std::vector<LibraryVariant> candidates = {{"", "/base", ""}, {"x86-64-v3", "/v3", ""}};
  EXPECT_EQ(choose_library_variant(candidates, kV3Host, cpu_level_limit(kV3Host, nullptr)).index, 1u);
  EXPECT_EQ(choose_library_variant(candidates, kBaselineHost, cpu_level_limit(kBaselineHost, nullptr)).index, 0u);
  EXPECT_EQ(choose_library_variant(candidates, kArmHost, cpu_level_limit(kArmHost, nullptr)).index, 0u);
  // A single library without a level: nothing to choose, nothing to report.
  VariantChoice single = choose_library_variant({{"", "/only", ""}}, kV3Host, cpu_level_limit(kV3Host, nullptr));
  EXPECT_TRUE(single.ok);
  EXPECT_EQ(single.reason, "");
}

// --------------------------------------------------------------- manifests

class ManifestVariants : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("etrt_cpu_level_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& variants_json) {
    std::string path = (dir_ / "plugin.json").string();
    std::ofstream(path) << R"({
  "manifest_version": 1,
  "name": "k",
  "version": "1",
  "library": "libk.so.1",
  "abi": {"major": 1, "minor": 4},)" << variants_json << R"(
  "provides": {"operators": ["aten::add.out"]}
})";
    return path;
  }

  fs::path dir_;
};

TEST_F(ManifestVariants, OldManifestsHaveOneLibraryWithoutALevel) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(read_manifest(write(""), &m, &error)) << error;
  EXPECT_EQ(m.cpu_level, "");
  EXPECT_TRUE(m.variants.empty());
  std::vector<LibraryVariant> candidates = library_candidates(m);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].library, (dir_ / "libk.so.1").string());
}

TEST_F(ManifestVariants, VariantsResolveRelativeToTheManifest) {
  std::string hash(64, 'a');
  Manifest m;
  std::string error;
  ASSERT_TRUE(read_manifest(write(R"(
  "cpu_level": "x86-64",
  "variants": [{"cpu_level": "x86-64-v3", "library": "x86-64-v3/libk.so.1", "sha256": ")" + hash + R"("},
               {"cpu_level": "armv8-a", "library": "/opt/arm/libk.so.1"}],)"),
                            &m, &error))
      << error;
  EXPECT_EQ(m.cpu_level, "x86-64");
  std::vector<LibraryVariant> candidates = library_candidates(m);
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].cpu_level, "x86-64");
  EXPECT_EQ(candidates[1].cpu_level, "x86-64-v3");
  EXPECT_EQ(candidates[1].library, (dir_ / "x86-64-v3" / "libk.so.1").string());
  EXPECT_EQ(candidates[1].sha256, hash);
  EXPECT_EQ(candidates[2].library, "/opt/arm/libk.so.1");
  EXPECT_EQ(candidates[2].sha256, "");
}

TEST_F(ManifestVariants, ALevelDeclaredTwiceIsRefused) {
  Manifest m;
  std::string error;
  std::string path = write(R"(
  "cpu_level": "x86-64-v3",
  "variants": [{"cpu_level": "x86-64-v3", "library": "v3/libk.so.1"}],)");
  EXPECT_FALSE(read_manifest(path, &m, &error));
  EXPECT_THAT(error, AllOf(HasSubstr(path + ":8: field 'variants[0]'"), HasSubstr("'x86-64-v3' is declared twice")));
}

TEST_F(ManifestVariants, OneFileForTwoLevelsIsRefused) {
  Manifest m;
  std::string error;
  EXPECT_FALSE(read_manifest(write(R"(
  "variants": [{"cpu_level": "x86-64-v3", "library": "./libk.so.1"}],)"),
                             &m, &error));
  EXPECT_THAT(error, AllOf(HasSubstr("field 'variants[0]'"), HasSubstr("is already the library of level '(none)'")));
}

TEST_F(ManifestVariants, SchemaRefusesMalformedVariants) {
  struct Case {
    const char* json;
    const char* expected;
  } cases[] = {
      {R"( "variants": [{"library": "v3/libk.so.1"}],)", "missing required field 'cpu_level'"},
      {R"( "variants": [{"cpu_level": "x86-64-v3"}],)", "missing required field 'library'"},
      {R"( "variants": [],)", "field 'variants'"},
      {R"( "variants": [{"cpu_level": "X86 64", "library": "a"}],)", "field 'variants[0].cpu_level'"},
      {R"( "variants": [{"cpu_level": "x86-64-v3", "library": "a", "march": "x"}],)", "unknown field 'march'"},
      {R"( "variants": [{"cpu_level": "x86-64-v3", "library": "a", "sha256": "xyz"}],)", "field 'variants[0].sha256'"},
      {R"( "cpu_level": 3,)", "field 'cpu_level'"},
  };
  for (const Case& c : cases) {
    Manifest m;
    std::string error;
    EXPECT_FALSE(read_manifest(write(c.json), &m, &error)) << c.json;
    EXPECT_THAT(error, HasSubstr(c.expected)) << c.json;
  }
}

}  // namespace
