// Shared CLI options and terminal helpers.
#include "tools/cli_common.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "core/error.hpp"

namespace kt::cli {

namespace {

struct Suite {
  const char* name;
  const char* description;
  std::vector<std::string> shapes;
};

const std::vector<Suite>& suites() {
  static const std::vector<Suite> all = {
      {"foundation",
       "square, 8k-token LLM, ragged, wave-quantized, split-K and decode shapes",
       {"4096x4096x4096", "8192x8192x8192", "2048x2048x2048", "8192x6144x4096", "8192x28672x4096",
        "8192x4096x14336", "4100x4096x4096", "1536x1536x8192", "512x512x32768", "64x14336x4096",
        "16x4096x4096"}},
      {"square", "square shapes", {"2048x2048x2048", "4096x4096x4096", "8192x8192x8192"}},
      {"ragged", "tails in every dimension", {"127x129x65", "1x4096x4096", "4100x4096x4096"}},
      // Decoding: a batch of 1, 16 or 64 tokens through a 4096 projection and an MLP's
      // 14336-wide up projection; memory-bound (B streamed once), served by the small-M family.
      {"decode",
       "M <= 64 decoding shapes: memory-bound, bench reports TB/s",
       {"1x4096x4096", "16x4096x4096", "64x4096x4096", "64x14336x4096"}},
      // FlashAttention's benchmark: batch x seqlen = 16k tokens, hidden 2048 (heads = 2048 / d).
      {"attention-d128",
       "16k tokens, hidden 2048, d = 128, seqlen 512..16k",
       {"b=32,h=16,s=512,d=128", "b=16,h=16,s=1024,d=128", "b=8,h=16,s=2048,d=128",
        "b=4,h=16,s=4096,d=128", "b=2,h=16,s=8192,d=128", "b=1,h=16,s=16384,d=128"}},
      {"attention-d64",
       "16k tokens, hidden 2048, d = 64, seqlen 512..16k",
       {"b=32,h=32,s=512,d=64", "b=16,h=32,s=1024,d=64", "b=8,h=32,s=2048,d=64",
        "b=4,h=32,s=4096,d=64", "b=2,h=32,s=8192,d=64", "b=1,h=32,s=16384,d=64"}},
      {"attention-extra",
       "GQA 32/8 at 8k and d = 256",
       {"b=1,hq=32,hkv=8,s=8192,d=128", "b=2,h=8,s=4096,d=256"}},
  };
  return all;
}

}  // namespace

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const auto& s : suites()) names.emplace_back(s.name);
  return names;
}

std::vector<std::string> suite_shapes(const std::string& name) {
  for (const auto& s : suites())
    if (name == s.name) return s.shapes;
  throw Error(ErrorKind::kNotFound, fmt::format("unknown suite '{}': expected one of {}", name,
                                                fmt::join(suite_names(), ", ")));
}

bool ProblemOptions::is_attention() const {
  if (op == "attention") return true;
  if (op == "gemm") return false;
  throw_invalid(fmt::format("unknown --op '{}': expected gemm or attention", op));
}

std::vector<AttentionProblem> ProblemOptions::attention_problems() const {
  std::vector<std::string> all = shapes;
  if (!suite.empty())
    for (auto& s : suite_shapes(suite)) all.push_back(s);
  if (all.empty() && shape_required)
    throw_invalid(
        "no problem given: pass --shape b=4,hq=32,hkv=8,sq=4096,sk=4096,d=128 or --suite");
  std::vector<AttentionProblem> problems;
  for (const auto& shape : all) {
    AttentionProblem p;
    p.dtype = parse_dtype(dtype);
    p.causal = causal;
    parse_attention_shape(shape, p);
    problems.push_back(p);
  }
  return problems;
}

std::vector<GemmProblem> ProblemOptions::gemm_problems() const {
  if (is_attention()) throw_invalid("this subcommand needs --op gemm here");
  std::vector<std::string> all = shapes;
  if (!suite.empty())
    for (auto& s : suite_shapes(suite)) all.push_back(s);
  if (all.empty() && shape_required)
    throw_invalid("no problem given: pass --shape MxNxK (e.g. --shape 4096x4096x4096) or --suite");
  std::vector<GemmProblem> problems;
  for (const auto& shape : all) {
    GemmProblem p;
    p.in_dtype = parse_dtype(dtype);
    p.out_dtype = out_dtype.empty() ? p.in_dtype : parse_dtype(out_dtype);
    p.layout = parse_layout(layout);
    parse_gemm_shape(shape, p);
    problems.push_back(p);
  }
  return problems;
}

void add_problem_options(CLI::App& cmd, ProblemOptions& o) {
  cmd.add_option("--op", o.op, "Operation: gemm or attention")->capture_default_str();
  cmd.add_option("--shape", o.shapes,
                 "Problem shape (repeatable): MxNxK for gemm (C[M,N] = A[M,K] B); for attention "
                 "b=4,hq=32,hkv=8,sq=4096,sk=4096,d=128 (h= and s= set both; hkv, sk default "
                 "to hq, sq)");
  cmd.add_flag("--causal", o.causal, "Attention: causal mask (bottom-right aligned)");
  cmd.add_option("--suite", o.suite,
                 fmt::format("A named list of shapes: {}", fmt::join(suite_names(), ", ")));
  cmd.add_option("--dtype", o.dtype, "Input dtype: bf16 or fp16")->capture_default_str();
  cmd.add_option("--out-dtype", o.out_dtype, "Output dtype: bf16, fp16 or fp32 (default: --dtype)");
  cmd.add_option("--layout", o.layout,
                 "B layout: nt (B is NxK, a linear layer's weight) or nn (B is KxN)")
      ->capture_default_str();
}

void add_database_option(CLI::App& cmd, std::string& path) {
  // An empty --db would silently fall back to the default database.
  const CLI::Validator non_empty(
      [](std::string& value) {
        return value.empty() ? std::string(
                                   "--db '' names no file: pass a path, or leave --db out "
                                   "for the default database")
                             : std::string();
      },
      "");
  cmd.add_option("--db", path,
                 "Tuning database (default: $KERNTUNE_DB, else ~/.cache/kerntune/kerntune.db)")
      ->check(non_empty);
}

void add_profile_option(CLI::App& cmd, std::string& profile) {
  cmd.add_option(
         "--device-profile", profile,
         fmt::format("Built-in device to model: {}", fmt::join(device_profile_names(), ", ")))
      ->capture_default_str();
}

std::string resolve_database_path(const std::string& option) {
  return option.empty() ? cache::default_database_path() : option;
}

cache::Database open_database(const std::string& option) {
  return cache::Database::open(resolve_database_path(option));
}

tune::ProgressFn progress_printer() {
  const bool tty = isatty(STDERR_FILENO) != 0;
  return [tty](const tune::Progress& p) {
    const std::string line = fmt::format("[{} {}/{} | {:.1f}s elapsed, ETA {:.1f}s] {}", p.phase,
                                         p.done, p.total, p.elapsed_s, p.eta_s, p.message);
    if (tty) {
      fmt::print(stderr, "\r\033[K{}", line.substr(0, 160));
      if (p.done == p.total) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "{}\n", line);
    }
    std::fflush(stderr);
  };
}

}  // namespace kt::cli
