// The kerntune CLI as a user meets it: the built binary run as a subprocess with a fresh
// database and no CUDA driver (so it behaves the same on a GPU machine): help text, the model's
// explanation, generated source, and one clear error line for each kind of bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/versions.hpp"
#include "generator/embedded_templates.hpp"
#include "kerntune/kerntune.h"
#include "support/cli_runner.hpp"
#include "support/file_bytes.hpp"
#include "support/gemm_builders.hpp"
#include "tuner/run_ledger.hpp"

namespace {

using Result = kt::testing::CliResult;
using kt::testing::run_cli;

// A database path of its own per test, removed afterwards.
class TempDatabase {
 public:
  TempDatabase() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kt_cli_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".db");
    std::filesystem::remove(path_);
  }
  ~TempDatabase() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path_.string() + suffix, ignored);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(KT_BINARY_DIR "/src/tools/kerntune"))
        << "build the kerntune target first";
  }
  Result run(const std::string& args) { return run_cli(args, db_.path()); }
  // A failing run: non-zero exit, and the output contains every needle.
  void expect_error(const std::string& args, const std::vector<std::string>& needles) {
    SCOPED_TRACE("kerntune " + args);
    const Result r = run(args);
    EXPECT_NE(r.status, 0) << r.output;
    for (const auto& needle : needles)
      EXPECT_TRUE(contains(r.output, needle)) << "no '" << needle << "' in:\n" << r.output;
  }
  // `kerntune <args>`'s stdout parsed by python3's json as `d`, and `expression` of it printed:
  // stdout must hold one JSON value and nothing else.
  std::string json_fields(const std::string& args, const std::string& expression) {
    return run(args + " 2>/dev/null | python3 -c 'import json, sys; d = json.load(sys.stdin); " +
               "print(" + expression + ")'")
        .output;
  }

  TempDatabase db_;
};

}  // namespace

// One exit status table (the --help footer): 0 done, 1 the command failed, 2 a usage error.
TEST_F(Cli, VersionAndExitStatusTable) {
  const Result version = run("--version");
  EXPECT_EQ(version.status, 0) << version.output;
  EXPECT_TRUE(contains(version.output, std::string("kerntune ") + kt_version())) << version.output;
  for (const char* usage :
       {"", "tune --bogus", "frobnicate", "tune --shape", "explain --rounds x"}) {
    const Result r = run(usage);
    EXPECT_EQ(r.status, 2) << "kerntune " << usage << ":\n" << r.output;
  }
  const Result failed = run("explain --shape 0x4096x4096");
  EXPECT_EQ(failed.status, 1) << failed.output;
  EXPECT_TRUE(contains(run("--help").output, "Exit status: 0 done; 1 the command failed"));
}

TEST_F(Cli, HelpListsEverySubcommand) {
  const Result r = run("--help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* sub :
       {"info", "gen", "compile", "explain", "tune", "bench", "cache", "doctor", "trace"}) {
    // Each subcommand is listed at the start of a line of the Subcommands section.
    EXPECT_TRUE(contains(r.output, std::string("\n  ") + sub + " "))
        << "no subcommand '" << sub << "' in:\n"
        << r.output;
  }
}

TEST_F(Cli, MissingOrUnknownSubcommandIsAnError) {
  const Result r = run("");
  EXPECT_NE(r.status, 0) << r.output;
  expect_error("frobnicate", {"subcommand"});
}

TEST_F(Cli, TuneHelpDescribesShape) {
  const Result r = run("tune --help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "--shape")) << r.output;
  EXPECT_TRUE(contains(r.output, "MxNxK")) << r.output;
}

TEST_F(Cli, ExplainPrintsWavesAndEfficiencies) {
  const Result r = run("explain --shape 4096x4096x4096");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "gemm:bf16:bf16:nt:4096x4096x4096")) << r.output;
  EXPECT_TRUE(contains(r.output, "waves")) << r.output;
  EXPECT_TRUE(contains(r.output, "wave efficiency")) << r.output;
  EXPECT_TRUE(contains(r.output, "tile eff")) << r.output;
  EXPECT_TRUE(contains(r.output, "predicted")) << r.output;
  EXPECT_FALSE(contains(r.output, "first DRAM round trip")) << r.output;
}

// A problem key as `cache ls` prints it serves as a shape: it names the same problem as the
// op's shape syntax and flags; a key of another op, one not in canonical form, or one beside a
// flag it would override, is refused.
TEST_F(Cli, AShapeMayBeTheProblemKeyCacheLsPrints) {
  const Result by_shape = run("explain --op rmsnorm --shape rows=16384,hidden=8192 --residual");
  const Result by_key = run("explain --op rmsnorm --shape rmsnorm:bf16:r16384.h8192.res");
  ASSERT_EQ(by_key.status, 0) << by_key.output;
  EXPECT_TRUE(contains(by_key.output, "rmsnorm:bf16:r16384.h8192.res on h200")) << by_key.output;
  EXPECT_EQ(by_key.output, by_shape.output);
  const Result nn = run("explain --shape gemm:fp16:fp32:nn:100x200x300");
  ASSERT_EQ(nn.status, 0) << nn.output;
  EXPECT_TRUE(contains(nn.output, "gemm:fp16:fp32:nn:100x200x300 on h200")) << nn.output;
  expect_error("explain --shape attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d128.causal",
               {"is a problem key of op attention", "--op attention"});
  expect_error("explain --op rmsnorm --shape rmsnorm:bf16:r016384.h8192", {"not canonical"});
  expect_error("explain --op rmsnorm --shape rmsnorm:bf16:r16384.h8192 --residual",
               {"names its own dtypes, layout and flags"});
}

// A decode step's memory term names the part of it no stream hides.
TEST_F(Cli, ExplainShowsADecodeStepsFirstDramRoundTrip) {
  const Result r = run("explain --shape 64x4096x4096");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "incl. 1.0 first DRAM round trip")) << r.output;
}

// Operands whose rows are not 16-byte aligned: the sm80 family loads them element by element
// (explain says which operand and what to change), the sm90 family reads padded copies (explain
// says which and how long their rows become) or copies an nn B of even N itself (explain says
// how wide its copies are); nothing of it for aligned ones.
TEST_F(Cli, ExplainNamesUnalignedOperandsAndWhatToChange) {
  const Result nn =
      run("explain --shape 108x124x32768 --layout nn --config "
          "sm80.bm64.bn64.bk64.wm16.wn32.s5.g1.sk64");
  ASSERT_EQ(nn.status, 0) << nn.output;
  EXPECT_TRUE(contains(nn.output, "rows of B (nn with N % 8 != 0) are not 16-byte aligned"))
      << nn.output;
  EXPECT_TRUE(contains(nn.output, "an sm90 config with a producer warpgroup copies them 8 bytes"))
      << nn.output;
  EXPECT_TRUE(contains(nn.output, "store B as N x K (--layout nt)")) << nn.output;
  const Result odd =
      run("explain --shape 108x123x32768 --layout nn --config "
          "sm80.bm64.bn64.bk64.wm16.wn32.s5.g1.sk64");
  ASSERT_EQ(odd.status, 0) << odd.output;
  EXPECT_TRUE(contains(odd.output, "or pad N to a multiple of 8 for them")) << odd.output;
  const Result k =
      run("explain --shape 100x128x777 --config sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1");
  ASSERT_EQ(k.status, 0) << k.output;
  EXPECT_TRUE(contains(k.output, "rows of A and B (K % 8 != 0)")) << k.output;
  const Result padded =
      run("explain --shape 100x128x777 --config sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1");
  ASSERT_EQ(padded.status, 0) << padded.output;
  EXPECT_TRUE(contains(padded.output, "A's rows of 777 elements are not 16-byte aligned: copied"))
      << padded.output;
  EXPECT_TRUE(contains(padded.output, "as rows of 784")) << padded.output;
  EXPECT_TRUE(contains(padded.output, "+ padded copies")) << padded.output;
  const Result copied =
      run("explain --shape 108x334x32768 --layout nn --config "
          "sm90.bm64.bn64.bk128.s6.c1.e0.cl1.g1.sk16");
  ASSERT_EQ(copied.status, 0) << copied.output;
  EXPECT_TRUE(contains(copied.output,
                       "B's rows of 334 elements are not 16-byte aligned: the producer warpgroup "
                       "copies them with 4-byte cp.async"))
      << copied.output;
  EXPECT_FALSE(contains(copied.output, "padded")) << copied.output;
  const Result aligned = run("explain --shape 108x128x32768 --layout nn");
  ASSERT_EQ(aligned.status, 0) << aligned.output;
  EXPECT_FALSE(contains(aligned.output, "element by element")) << aligned.output;
  EXPECT_FALSE(contains(aligned.output, "padded")) << aligned.output;
}

TEST_F(Cli, ExplainAttentionCountsCtasAsBatchTimesHeadsTimesQueryBlocks) {
  // 2 x 8 x ceil(1000 / 128) = 2 x 8 x 8 = 128 CTAs for 128-row query blocks.
  const Result r =
      run("explain --op attention --shape b=2,hq=8,hkv=2,s=1000,d=128 --causal "
          "--config fa2.bm128.bn64.w8.s2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "attn:bf16:b2.hq8.hkv2.sq1000.sk1000.d128.causal")) << r.output;
  EXPECT_TRUE(contains(r.output, "= 2 x 8 x 8 = 128")) << r.output;
  EXPECT_TRUE(contains(r.output, "wave efficiency")) << r.output;
  // Causal: 128 KB of K and V an entry, all 16 entries in one L2 section.
  EXPECT_TRUE(contains(r.output, "over sections of 16 (head, batch) entries, 1 section(s)"))
      << r.output;
}

TEST_F(Cli, Fa3KeysAreExplainedAndGeneratedForSm90a) {
  const std::string shape = "--op attention --shape b=2,hq=8,hkv=2,s=1000,d=128 --causal";
  Result r = run("explain " + shape + " --config fa3.bm128.bn128.s2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "fa3: wgmma + TMA, 1 producer + 2 consumer")) << r.output;
  EXPECT_TRUE(contains(r.output, "= 2 x 8 x 8 = 128")) << r.output;
  EXPECT_TRUE(contains(r.output, "384 threads")) << r.output;
  r = run("gen " + shape + " --config fa3.bm64.bn128.s3");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "#include \"kerntune/attention/attention_fwd_sm90.cuh\""))
      << r.output;
  EXPECT_TRUE(contains(
      r.output,
      "kt::attention_fwd_sm90<kt::bf16, 128, 64, 128, 3, false, false, true, false, false>"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "--gpu-architecture=sm_90a")) << r.output;
  expect_error("explain " + shape + " --config fa3.bm128.bn128.s2 --device-profile a100",
               {"sm_90a"});
}

TEST_F(Cli, ExplainOfAGivenConfigShowsItsTileCount) {
  // 4096 / 128 = 32 tiles in each of M and N.
  const Result r =
      run("explain --shape 4096x4096x4096 --config sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "32 x 32 = 1024 tiles of 128x128")) << r.output;
  EXPECT_TRUE(contains(r.output, "wave efficiency")) << r.output;
}

// A stream-K config says which tiles it shares out by K: at 8192^3, 2048 tiles of 128 x 256 on
// the H200's 132 SMs are 15 whole waves and 68 tiles (128 k-tiles each, 66 a CTA); at 4224 x
// 4096 (528 tiles, four whole waves) nothing is shared.
TEST_F(Cli, ExplainOfAStreamKConfigShowsTheSharedTiles) {
  const std::string config = " --config sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1.st";
  Result r = run("explain --shape 8192x8192x8192" + config);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "the last 68 tiles shared out by K: 66 k-tiles of 8704 on each "
                       "of 132 CTAs, after 15 whole tiles each"))
      << r.output;
  r = run("explain --shape 4224x4096x4096" + config);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "stream-K ")) << r.output;
}

// Without warp specialization explain says who issues the loads, and the CTA has no producer's
// 128 threads.
TEST_F(Cli, ExplainSaysWhoIssuesTheLoadsOfAnSm90Config) {
  const std::string config = " --config sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1";
  Result r = run("explain --shape 1536x1536x8192" + config);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "a producer warpgroup (one thread issues the TMA loads) + 2"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "384 threads")) << r.output;
  r = run("explain --shape 1536x1536x8192" + config + ".nows");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no producer warpgroup: consumer 0's thread issues the TMA"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "256 threads")) << r.output;
  expect_error(
      "explain --shape 1536x1536x8192 --config "
      "sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk4.nows",
      {"nows", "split-K"});
}

// A finalist has two rows, its first pass and the interleaved re-measurement the winner was
// picked by: explain counts the re-measurement, and a config once.
TEST_F(Cli, ExplainTakesAFinalistsReMeasurementOverItsFirstPass) {
  const kt::GemmProblem p = kt::testing::problem(4096, 4096, 4096);
  const std::string a = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
  const std::string b = "sm80.bm128.bn256.bk32.wm64.wn64.s3.g8.sk1";
  {
    kt::cache::Database database = kt::cache::Database::open(db_.path());
    auto row = [&](const std::string& config, double us, const std::string& detail) {
      kt::cache::Measurement m;
      m.key = {to_key(p), kt::device_profile("h200").fingerprint(), kt::kBenchmarkProtocolVersion,
               kt::kGemmTemplateVersion};
      m.config_key = config;
      m.median_us = us;
      m.tflops = p.flops() / us / 1e6;
      m.detail = detail;
      m.run_id = "r1";
      return m;
    };
    database.add_measurements({row(a, 1000, ""), row(b, 1010, "")});
    database.finish_run(
        "r1", {row(a, 1030, kt::tune::kFinalistDetail), row(b, 1020, kt::tune::kFinalistDetail)},
        std::nullopt);
  }
  const Result r = run("explain --shape 4096x4096x4096");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "measured winner: " + b)) << r.output;
  EXPECT_TRUE(contains(r.output, "measured runner-up: " + a)) << r.output;
  EXPECT_TRUE(contains(r.output, "measured 1020.0 us")) << r.output;
  EXPECT_TRUE(contains(r.output, "measured 1030.0 us")) << r.output;
}

// `cache ls` sizes its columns to the longest key: a GEMM and an attention winner line up.
TEST_F(Cli, CacheLsAlignsGemmAndAttentionWinners) {
  const std::string fingerprint = kt::device_profile("h200").fingerprint();
  const std::string gemm_key = "gemm:bf16:bf16:nt:4096x4096x4096";
  const std::string attention_key = "attn:bf16:b32.hq32.hkv8.sq1.sk32768.d128.full";
  {
    kt::cache::Database database = kt::cache::Database::open(db_.path());
    auto finish = [&](const std::string& problem, int template_version, const std::string& config,
                      const std::string& run_id) {
      kt::cache::Winner w;
      w.key = {problem, fingerprint, kt::kBenchmarkProtocolVersion, template_version};
      w.config_key = config;
      w.median_us = 1000;
      w.run_id = run_id;
      database.set_winner(w);
    };
    finish(gemm_key, kt::kGemmTemplateVersion, "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1", "g");
    finish(attention_key, kt::kAttentionTemplateVersion, "fa3.bm64.bn64.s3.gqa", "a");
  }
  const Result r = run("cache ls");
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; at < r.output.size(); at = end + 1) {
    end = r.output.find('\n', at);
    if (end == std::string::npos) end = r.output.size();
    lines.push_back(r.output.substr(at, end - at));
  }
  auto column_of = [&](const std::string& needle) {  // in the table, below the summary line
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (const auto at = lines[i].find(needle); at != std::string::npos) return at;
    return std::string::npos;
  };
  const std::size_t winner = column_of("winner");
  ASSERT_NE(winner, std::string::npos) << r.output;
  EXPECT_EQ(column_of("sm80.bm128"), winner) << r.output;
  EXPECT_EQ(column_of("fa3.bm64"), winner) << r.output;
  EXPECT_EQ(column_of(gemm_key), column_of("problem")) << r.output;
  EXPECT_EQ(column_of(attention_key), column_of("problem")) << r.output;
}

// The completion script comes from the CLI's definition: sourced in bash it completes
// subcommands, nested ones and each command's options; zsh gets it through bashcompinit.
TEST_F(Cli, CompletionScriptsCompleteSubcommandsAndOptions) {
  const Result bash = run("completion bash");
  ASSERT_EQ(bash.status, 0) << bash.output;
  const std::string script = (std::filesystem::temp_directory_path() /
                              ("kt_completion_" + std::to_string(::getpid()) + ".bash"))
                                 .string();
  kt::testing::write_file_bytes(script, bash.output);
  auto complete = [&](const std::string& words) {
    return kt::testing::run_shell("bash -c 'source " + script + "; COMP_WORDS=(" + words +
                                  "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _kerntune; echo "
                                  "\"${COMPREPLY[*]}\"'")
        .output;
  };
  EXPECT_EQ(complete("kerntune tu"), "tune\n");
  EXPECT_EQ(complete("kerntune cache l"), "ls\n");
  EXPECT_EQ(complete("kerntune cache ls --d"), "--db\n");
  EXPECT_TRUE(contains(complete("kerntune tune --shape 64x64x64 --ca"), "--causal"));
  EXPECT_TRUE(contains(complete("kerntune explain --"), "--device-profile"));
  std::filesystem::remove(script);
  const Result zsh = run("completion zsh");
  ASSERT_EQ(zsh.status, 0) << zsh.output;
  EXPECT_TRUE(contains(zsh.output, "bashcompinit")) << zsh.output;
  expect_error("completion fish", {"fish", "bash or zsh"});
}

// --json prints one object a script can parse (python3's json here), stdout only.
TEST_F(Cli, JsonOfInfoAndCacheLsParses) {
  {
    kt::cache::Database database = kt::cache::Database::open(db_.path());
    kt::cache::Winner w;
    w.key = {"attn:bf16:b32.hq32.hkv8.sq1.sk4096.d128.full",
             kt::device_profile("h200").fingerprint(), kt::kBenchmarkProtocolVersion,
             kt::kAttentionTemplateVersion};
    w.config_key = "fa3.bm64.bn64.s3.gqa";
    w.median_us = 130.25;
    w.run_id = "r";
    database.set_winner(w);
  }
  EXPECT_EQ(json_fields("cache ls --json",
                        "len(d[\"winners\"]), d[\"winners\"][0][\"config\"], "
                        "d[\"winners\"][0][\"median_us\"], d[\"schema_version\"]"),
            fmt::format("1 fa3.bm64.bn64.s3.gqa 130.25 {}\n", kt::cache::kSchemaVersion));
  EXPECT_EQ(json_fields("info --json",
                        "d[\"version\"], d[\"device\"], \"error\" in d[\"driver\"], "
                        "d[\"database\"][\"winners\"]"),
            std::string(kt_version()) + " None True 1\n");
}

// explain --json: the model's pick and runner-up with their times and the text's explanation; a
// given config; and, once the database holds measurements, the measured ones.
TEST_F(Cli, JsonOfExplainParses) {
  EXPECT_EQ(
      json_fields("explain --json --shape 4096x4096x4096 --shape 64x64x64",
                  "len(d[\"problems\"]), d[\"device_profile\"], d[\"device\"], "
                  "[(p[\"source\"], [c[\"role\"] for c in p[\"configs\"]]) for p in "
                  "d[\"problems\"]], d[\"problems\"][0][\"configs\"][0][\"measured_us\"], "
                  "d[\"problems\"][0][\"configs\"][0][\"predicted_us\"] > 0, "
                  "\"wave efficiency\" in d[\"problems\"][0][\"configs\"][0][\"explanation\"], "
                  "round(d[\"problems\"][0][\"gflop\"], 1)"),
      "2 h200 NVIDIA H200/cc90/132sm [('model', ['winner', 'runner_up']), ('model', "
      "['winner', 'runner_up'])] None True True 137.4\n");
  const std::string config = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
  EXPECT_EQ(
      json_fields("explain --json --shape 4096x4096x4096 --config " + config,
                  "d[\"problems\"][0][\"source\"], d[\"problems\"][0][\"configs\"][0][\"role\"], "
                  "d[\"problems\"][0][\"configs\"][0][\"config\"]"),
      "given given " + config + "\n");
  {
    kt::cache::Database database = kt::cache::Database::open(db_.path());
    kt::cache::Measurement m;
    m.key = {"gemm:bf16:bf16:nt:4096x4096x4096", kt::device_profile("h200").fingerprint(),
             kt::kBenchmarkProtocolVersion, kt::kGemmTemplateVersion};
    m.config_key = config;
    m.median_us = 1000.5;
    m.predicted_us = 900;
    m.run_id = "r1";
    database.add_measurements({m});
  }
  EXPECT_EQ(json_fields("explain --json --shape 4096x4096x4096",
                        "d[\"problems\"][0][\"source\"], len(d[\"problems\"][0][\"configs\"]), "
                        "d[\"problems\"][0][\"configs\"][0][\"measured_us\"], "
                        "d[\"problems\"][0][\"configs\"][0][\"predicted_us\"]"),
            "measured 1 1000.5 900\n");
}

// cache show --json: every measurement of each problem given, a failure's NaN time as null.
TEST_F(Cli, JsonOfCacheShowParses) {
  const std::string key = "gemm:bf16:bf16:nt:256x256x256";
  {
    kt::cache::Database database = kt::cache::Database::open(db_.path());
    kt::cache::Measurement ok;
    ok.key = {key, kt::device_profile("h200").fingerprint(), kt::kBenchmarkProtocolVersion,
              kt::kGemmTemplateVersion};
    ok.config_key = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
    ok.median_us = 12.5;
    ok.run_id = "r1";
    kt::cache::Measurement failed = ok;
    failed.config_key = "sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1";
    failed.status = kt::cache::Status::kCompileError;
    failed.median_us = std::numeric_limits<double>::quiet_NaN();
    failed.detail = "line 1\n\"quoted\"\tline 2";
    database.add_measurements({ok, failed});
  }
  EXPECT_EQ(json_fields("cache show --json --shape 256x256x256 --shape 64x64x64",
                        "[(p[\"problem\"], len(p[\"measurements\"])) for p in d[\"problems\"]], "
                        "[(m[\"status\"], m[\"median_us\"]) for m in "
                        "d[\"problems\"][0][\"measurements\"]], "
                        "d[\"problems\"][0][\"measurements\"][1][\"detail\"] == "
                        "\"line 1\\n\\\"quoted\\\"\\tline 2\""),
            "[('" + key +
                "', 2), ('gemm:bf16:bf16:nt:64x64x64', 0)] [('ok', 12.5), ('compile_error', "
                "None)] True\n");
}

TEST_F(Cli, RejectsAZeroDimensionNamingM) { expect_error("explain --shape 0x1x1", {"M = 0"}); }

TEST_F(Cli, RejectsAShapeOfTwoDimensionsNamingTheForm) {
  expect_error("explain --shape 12x34", {"12x34", "MxNxK"});
}

TEST_F(Cli, RejectsAnUnknownDTypeListingTheAccepted) {
  expect_error("explain --shape 64x64x64 --dtype int8", {"int8", "bf16", "fp16"});
}

TEST_F(Cli, RejectsAnUnknownLayout) {
  expect_error("explain --shape 64x64x64 --layout tn", {"tn", "nn", "nt"});
}

TEST_F(Cli, AttentionShapeErrorsNameTheFieldAndTheForm) {
  expect_error("explain --shape 64x64x64 --op attention", {"64x64x64", "NAME=VALUE"});
  expect_error("explain --op attention --shape b=1,hq=6,hkv=4,s=128,d=64", {"heads_q", "multiple"});
  expect_error("explain --op attention --shape b=1,h=2,s=128,d=80", {"head_dim", "80"});
  expect_error("explain --op attention --shape b=1,h=2,d=64", {"sq"});
}

TEST_F(Cli, RejectsAnUnknownOp) {
  expect_error("explain --shape 64x64x64 --op foo", {"'foo'", "gemm"});
}

TEST_F(Cli, ErrorsAreOneLineWithoutATrace) {
  const Result r = run("explain --shape 0x1x1");
  EXPECT_NE(r.status, 0);
  // Only log lines ("[hh:mm:ss] [level] ...") may accompany the one error line.
  std::size_t error_lines = 0;
  std::size_t start = 0;
  while (start < r.output.size()) {
    std::size_t end = r.output.find('\n', start);
    if (end == std::string::npos) end = r.output.size();
    const std::string line = r.output.substr(start, end - start);
    if (!line.empty() && line[0] != '[') {
      ++error_lines;
      EXPECT_EQ(line.rfind("kerntune: ", 0), 0u) << line;
    }
    start = end + 1;
  }
  EXPECT_EQ(error_lines, 1u) << r.output;
}

TEST_F(Cli, GenPrintsTheTemplateIncludeAndKernelExpression) {
  const std::string key = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
  const Result r = run("gen --shape 256x256x256 --config " + key);
  ASSERT_EQ(r.status, 0) << r.output;
  // The stub includes the GEMM template, and that header is one NVRTC is given.
  const std::string header = "kerntune/gemm/gemm_sm80.cuh";
  EXPECT_TRUE(contains(r.output, "#include \"" + header + "\"")) << r.output;
  const auto& embedded = kt::gen::embedded_templates();
  EXPECT_TRUE(std::any_of(embedded.begin(), embedded.end(),
                          [&](const kt::gen::EmbeddedFile& f) { return f.name == header; }));
  kt::GemmProblem p;
  p.m = p.n = p.k = 256;
  EXPECT_TRUE(contains(r.output, kt::gemm_kernel_expression(p, kt::parse_gemm_config_key(key))))
      << r.output;
  EXPECT_TRUE(contains(r.output, key)) << r.output;
}

TEST_F(Cli, GenRejectsAMalformedConfig) {
  expect_error("gen --shape 256x256x256 --config garbage", {"garbage", "config key"});
}

TEST_F(Cli, TraceNeedsAConfigAndRefusesOpsWithoutMarksBeforeAnyDeviceWork) {
  expect_error("trace --shape 64x64x64", {"--config"});
  expect_error("trace --op attention --shape b=1,h=1,s=64,d=64 --config fa2.bm64.bn64.w4.s2",
               {"fa2.bm64.bn64.w4.s2", "only the fa3 family of attention"});
  expect_error("trace --shape 64x64x64 --config sm80.bm64.bn64.bk32.wm32.wn32.s3.g8.sk1",
               {"sm80.bm64.bn64.bk32.wm32.wn32.s3.g8.sk1", "only the sm90 family"});
  expect_error("trace --op rmsnorm --shape rows=8,hidden=64 --config rms.t32.r1.v2.reg",
               {"rmsnorm kernels have none"});
}

TEST_F(Cli, BenchRefusesToAppendToAFileItDidNotWrite) {
  const std::string path = db_.path() + ".notes.csv";
  kt::testing::write_file_bytes(path, "my,own,data\n1,2,3\n");
  expect_error(fmt::format("bench --shape 64x64x64 --csv {}", path),
               {"--csv", "not a `kerntune bench` CSV"});
  EXPECT_EQ(kt::testing::read_file_bytes(path), "my,own,data\n1,2,3\n");
  std::filesystem::remove(path);
}

TEST_F(Cli, BenchTakesABenchmarkCountFromZeroTo64) {
  const Result r = run("bench --shape 64x64x64 --benchmark 65");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--benchmark") && contains(r.output, "65")) << r.output;
  EXPECT_TRUE(contains(run("bench --help").output, "cudnn.benchmark"));
}

TEST_F(Cli, BenchWithoutAGpuFailsSayingSo) {
  const Result r = run("bench --shape 64x64x64");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no GPU") || contains(r.output, "GPU and there is none"))
      << r.output;
}

// bench --json without a GPU: the error line on stderr and nothing on stdout.
TEST_F(Cli, BenchJsonWithoutAGpuFailsWithNothingOnStdout) {
  const std::string out = db_.path() + ".stdout";
  const Result r = kt::testing::run_cli_stdout_to(out, "bench --json --shape 64x64x64", db_.path());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "kerntune: unsupported: bench measures on a GPU")) << r.output;
  EXPECT_EQ(kt::testing::read_file_bytes(out), "");
  std::filesystem::remove(out);
}

TEST_F(Cli, InfoReportsNoGpu) {
  const Result r = run("info");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no GPU")) << r.output;
  EXPECT_TRUE(contains(r.output, db_.path())) << r.output;
}

// `cache ls` only reads: without a database it says so and how to make one, and makes none.
TEST_F(Cli, CacheLsWithoutADatabaseSaysSoAndCreatesNone) {
  const Result r = run("cache ls");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no database at '" + db_.path() + "' yet")) << r.output;
  EXPECT_TRUE(contains(r.output, "`kerntune tune`")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(db_.path()));
}

TEST_F(Cli, TuneHelpDocumentsTheTimeLimitAndTheBlocklistOverride) {
  const Result r = run("tune --help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* option : {"--candidate-timeout", "--compile-timeout", "--retry-blocklisted"})
    EXPECT_TRUE(contains(r.output, option)) << "no " << option << " in:\n" << r.output;
}

TEST_F(Cli, TuneHelpSaysCandidatesCapsEveryRoundAndHowToRetune) {
  const Result r = run("tune --help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* text : {"At most N candidates", "every round", "no more are compiled",
                           "--retune", "finished before"})
    EXPECT_TRUE(contains(r.output, text)) << "no '" << text << "' in:\n" << r.output;
}

TEST_F(Cli, TuneRefusesACandidateCapBesideExplicitConfigs) {
  expect_error(
      "tune --shape 64x64x64 --candidates 3 --config sm80.bm64.bn64.bk64.wm32.wn32.s4.g8.sk1",
      {"--candidates", "excludes", "--config"});
}

// The default profile (h200) prefers fa3 and sm90 configs, which need sm_90a: for another arch
// the config comes from the built-in profile of that arch.
TEST_F(Cli, GenForAnArchChoosesAConfigOfThatArch) {
  const Result attention = run("gen --op attention --shape b=1,h=8,s=1024,d=128 --arch sm_80");
  ASSERT_EQ(attention.status, 0) << attention.output;
  EXPECT_TRUE(contains(attention.output, "// config:  fa2.")) << attention.output;
  EXPECT_TRUE(contains(attention.output, "the model's pick for a100")) << attention.output;
  EXPECT_TRUE(contains(attention.output, "attention_fwd_sm80.cuh")) << attention.output;
  EXPECT_FALSE(contains(attention.output, "attention_fwd_sm90")) << attention.output;
  const Result gemm = run("gen --shape 4096x4096x4096 --arch sm_80");
  ASSERT_EQ(gemm.status, 0) << gemm.output;
  EXPECT_TRUE(contains(gemm.output, "// config:  sm80.")) << gemm.output;
  EXPECT_FALSE(contains(gemm.output, "gemm_sm90")) << gemm.output;
}

TEST_F(Cli, AnArchOtherThanTheGivenProfilesIsAnErrorNamingEachProfilesArch) {
  expect_error("gen --op attention --shape b=1,h=8,s=1024,d=128 --device-profile h200 --arch sm_80",
               {"--arch sm_80", "h200 (sm_90a)", "a100 sm_80", "--device-profile"});
  expect_error("compile --shape 256x256x256 --arch sm_86", {"--arch sm_86", "a100 sm_80"});
}

TEST_F(Cli, CacheBlocklistListsAndClearsAnEmptyList) {
  const Result list = run("cache blocklist");
  EXPECT_EQ(list.status, 0) << list.output;
  EXPECT_TRUE(contains(list.output, "0 blocklisted kernels")) << list.output;
  const Result clear = run("cache blocklist --clear");
  EXPECT_EQ(clear.status, 0) << clear.output;
  EXPECT_TRUE(contains(clear.output, "removed 0 blocklist entries")) << clear.output;
}
