// Shared CLI options and terminal helpers.
#include "tools/cli_common.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"

namespace kt::cli {

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const OpEntry& op : OpRegistry::instance().all())
    for (const auto& [name, shapes] : op.spec->suites()) names.push_back(name);
  return names;
}

const OpSpec& ProblemOptions::spec() const { return op_spec(op); }

std::vector<std::string> ProblemOptions::problem_keys() const {
  const OpSpec& s = spec();
  std::vector<std::string> all = shapes;
  if (!suite.empty()) {
    bool found = false;
    for (const auto& [name, suite_shapes] : s.suites()) {
      if (name != suite) continue;
      all.insert(all.end(), suite_shapes.begin(), suite_shapes.end());
      found = true;
    }
    if (!found)
      throw Error(ErrorKind::kNotFound,
                  fmt::format("op {} has no suite '{}' (its suites: {}; `kerntune ops` lists "
                              "every op's)",
                              s.name(), suite, [&] {
                                std::vector<std::string> names;
                                for (const auto& entry : s.suites()) names.push_back(entry.first);
                                return names.empty() ? std::string("none")
                                                     : fmt::format("{}", fmt::join(names, ", "));
                              }()));
  }
  if (all.empty() && shape_required)
    throw_invalid(fmt::format("no problem given: pass --op {} --shape {} or --suite", s.name(),
                              s.shape_syntax()));
  ShapeOptions options;
  options.dtype = parse_dtype(dtype);
  if (!out_dtype.empty()) options.out_dtype = parse_dtype(out_dtype);
  options.layout = layout;
  options.flags = flags;
  std::vector<std::string> keys;
  for (const std::string& shape : all) {
    const OpEntry* keyed = OpRegistry::instance().find_by_key(shape);
    if (keyed == nullptr) {
      keys.push_back(s.problem_key(shape, options));
      continue;
    }
    // A problem key (as `cache ls`, exports and manifests print it) names every field itself.
    if (keyed->spec.get() != &s)
      throw_invalid(fmt::format("'{}' is a problem key of op {}: pass --op {} with it", shape,
                                keyed->spec->name(), keyed->spec->name()));
    if (!flags.empty() || !layout.empty() || !out_dtype.empty())
      throw_invalid(
          fmt::format("'{}' is a problem key: it names its own dtypes, layout and "
                      "flags, so drop --out-dtype, --layout and op flags with it",
                      shape));
    s.summarize(shape);  // validates; a key not in canonical form names the canonical one
    keys.push_back(shape);
  }
  return keys;
}

void add_problem_options(CLI::App& cmd, ProblemOptions& o) {
  std::vector<std::string> shapes;
  for (const OpEntry& op : OpRegistry::instance().all())
    shapes.push_back(fmt::format("{} for {}", op.spec->shape_syntax(), op.spec->name()));
  cmd.add_option("--op", o.op,
                 fmt::format("Operation: {} (`kerntune ops` lists them)",
                             fmt::join(OpRegistry::instance().names(), ", ")))
      ->capture_default_str();
  cmd.add_option(
      "--shape", o.shapes,
      fmt::format("Problem shape (repeatable): {}; or a problem key of the op, as "
                  "`kerntune cache ls` prints it (e.g. gemm:bf16:bf16:nt:4096x4096x4096)",
                  fmt::join(shapes, "; ")));
  // Each registered op's own flags; an op refuses a flag that is not its own.
  std::vector<std::string> seen;
  for (const OpEntry& op : OpRegistry::instance().all())
    for (const OpFlag& flag : op.spec->flags()) {
      if (std::find(seen.begin(), seen.end(), flag.name) != seen.end()) continue;
      seen.push_back(flag.name);
      const std::string name = flag.name;
      cmd.add_flag_callback(
          "--" + name, [&o, name] { o.flags.push_back(name); }, flag.help);
    }
  cmd.add_option("--suite", o.suite,
                 fmt::format("A named list of shapes: {}", fmt::join(suite_names(), ", ")));
  cmd.add_option("--dtype", o.dtype, "Input dtype: bf16 or fp16")->capture_default_str();
  cmd.add_option("--out-dtype", o.out_dtype,
                 "Output dtype: bf16, fp16 or fp32 (default: --dtype; gemm only)");
  cmd.add_option("--layout", o.layout,
                 "gemm's B layout: nt (B is NxK, a linear layer's weight; the default) or nn (B "
                 "is KxN)");
}

void add_benchmark_option(CLI::App& cmd, int& count, const std::string& what) {
  cmd.add_option("--benchmark", count,
                 what +
                     " (benchmark mode, as cudnn.benchmark: a problem without a winner "
                     "measured on this GPU times this many of its dispatch choices on its "
                     "first call and is served the fastest; $KERNTUNE_BENCHMARK, "
                     "Runtime(benchmark=N))")
      ->check(CLI::Range(0, env::kMaxBenchmarkCandidates));
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

CLI::Option* add_profile_option(CLI::App& cmd, std::string& profile) {
  return cmd
      .add_option(
          "--device-profile", profile,
          fmt::format("Built-in device to model: {}", fmt::join(device_profile_names(), ", ")))
      ->capture_default_str();
}

std::string profile_for_arch(const std::string& profile, bool profile_given,
                             const std::string& arch) {
  const DeviceDesc& device = device_profile(profile);
  if (arch.empty() || arch == device.arch()) return profile;
  std::vector<std::string> archs;
  for (const std::string& name : device_profile_names()) {
    if (!profile_given && device_profile(name).arch() == arch) return name;
    archs.push_back(fmt::format("{} {}", name, device_profile(name).arch()));
  }
  throw_invalid(fmt::format(
      "--arch {} is not the arch of device profile {} ({}), whose configs would be chosen and "
      "may not compile for {} (fa3 and sm90 configs need sm_90a); pass --device-profile with a "
      "profile of that arch ({}), or leave --arch out",
      arch, profile, device.arch(), arch, fmt::join(archs, ", ")));
}

std::string resolve_database_path(const std::string& option) {
  return option.empty() ? cache::default_database_path() : option;
}

cache::Database open_database(const std::string& option) {
  return cache::Database::open(resolve_database_path(option));
}

std::optional<cache::Database> open_existing_database(const std::string& option) {
  namespace fs = std::filesystem;
  const std::string path = resolve_database_path(option);
  std::error_code error;
  if (fs::exists(path, error)) return cache::Database::open_readonly(path);
  // No file yet, unless none can ever be there: a path below a file is an error, not "none yet".
  for (fs::path above = fs::path(path).parent_path(); !above.empty() && above != above.root_path();
       above = above.parent_path()) {
    if (!fs::exists(above, error)) continue;
    if (!fs::is_directory(above, error))
      throw Error(ErrorKind::kDatabase,
                  fmt::format("'{}' cannot hold a database: '{}' is not a directory; pass --db "
                              "PATH naming a file in a directory",
                              path, above.string()));
    break;
  }
  return std::nullopt;
}

cache::Database required_existing_database(const std::string& option, const char* what) {
  if (std::optional<cache::Database> db = open_existing_database(option)) return std::move(*db);
  throw Error(ErrorKind::kNotFound, fmt::format("{} needs a database, and there is {}", what,
                                                no_database_note(resolve_database_path(option))));
}

std::string no_database_note(const std::string& path) {
  return fmt::format(
      "no database at '{}' yet: `kerntune tune` or `kerntune cache import` creates one (pass "
      "--db PATH for another file)",
      path);
}

tune::ProgressFn progress_printer(std::shared_ptr<const SuitePosition> suite) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  return [tty, suite](const tune::Progress& p) {
    std::string where;
    if (suite && suite->count > 1) {
      where = fmt::format("shape {}/{}", suite->index + 1, suite->count);
      if (suite->tuned > 0) {
        const double current =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - suite->shape_start)
                .count();
        const double mean = suite->tuned_s / double(suite->tuned);
        where += fmt::format(", all ETA {:.0f}s",
                             std::max(0.0, mean * double(suite->count - suite->index) - current));
      }
      where += " | ";
    }
    const std::string line = fmt::format("[{}{} {}/{} | {:.1f}s elapsed, ETA {:.1f}s] {}", where,
                                         p.phase, p.done, p.total, p.elapsed_s, p.eta_s, p.message);
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
