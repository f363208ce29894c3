// Field codecs of the worker protocol's payloads.
#include "tuner/worker_messages.hpp"

#include "core/text.hpp"

namespace kt::tune {

namespace {

// Lists travel as one field, joined by a byte that no name, option or expression holds.
constexpr char kListSeparator = '\x1f';

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += kListSeparator;
    out += items[i];
  }
  return out;
}

std::vector<std::string> split_list(const std::string& joined) {
  std::vector<std::string> items;
  if (joined.empty()) return items;
  for (std::string_view part : split(joined, kListSeparator)) items.emplace_back(part);
  return items;
}

}  // namespace

void put_source(Message& m, const std::string& p, const gen::GeneratedSource& s) {
  m.set(p + "name", s.name)
      .set(p + "code", s.code)
      .set(p + "name_expressions", join(s.name_expressions))
      .set(p + "arch", s.arch)
      .set(p + "options", join(s.options));
}

gen::GeneratedSource get_source(const Message& m, const std::string& p) {
  gen::GeneratedSource s;
  s.name = m.get(p + "name");
  s.code = m.get(p + "code");
  s.name_expressions = split_list(m.get(p + "name_expressions"));
  s.arch = m.get(p + "arch");
  s.options = split_list(m.get(p + "options"));
  return s;
}

void put_record(Message& m, const std::string& p, const cache::CubinRecord& r) {
  m.set(p + "compile_key", r.compile_key)
      .set(p + "source_key", r.source_key)
      .set(p + "arch", r.arch)
      .set(p + "source_name", r.source_name)
      .set(p + "name_expressions", join(r.name_expressions))
      .set(p + "lowered_names", join(r.lowered_names))
      .set(p + "cubin", std::string(r.cubin.begin(), r.cubin.end()))
      .set(p + "registers", r.registers)
      .set(p + "spill_bytes", r.spill_bytes)
      .set(p + "smem_static_bytes", r.smem_static_bytes)
      .set(p + "log", r.log)
      .set(p + "nvrtc_version", r.nvrtc_version)
      .set(p + "compile_ms", r.compile_ms);
}

cache::CubinRecord get_record(const Message& m, const std::string& p) {
  cache::CubinRecord r;
  r.compile_key = m.get(p + "compile_key");
  r.source_key = m.get(p + "source_key");
  r.arch = m.get(p + "arch");
  r.source_name = m.get(p + "source_name");
  r.name_expressions = split_list(m.get(p + "name_expressions"));
  r.lowered_names = split_list(m.get(p + "lowered_names"));
  const std::string& bytes = m.get(p + "cubin");
  r.cubin.assign(bytes.begin(), bytes.end());
  r.registers = int(m.get_int(p + "registers"));
  r.spill_bytes = int(m.get_int(p + "spill_bytes"));
  r.smem_static_bytes = int(m.get_int(p + "smem_static_bytes"));
  r.log = m.get(p + "log");
  r.nvrtc_version = m.get(p + "nvrtc_version");
  r.compile_ms = m.get_double(p + "compile_ms");
  return r;
}

void put_timing(Message& m, const std::string& p, const Timing& t) {
  m.set(p + "median_us", t.median_us)
      .set(p + "p10_us", t.p10_us)
      .set(p + "p90_us", t.p90_us)
      .set(p + "num_reps", t.num_reps)
      .set(p + "stopped_early", t.stopped_early);
}

Timing get_timing(const Message& m, const std::string& p) {
  Timing t;
  t.median_us = m.get_double(p + "median_us");
  t.p10_us = m.get_double(p + "p10_us");
  t.p90_us = m.get_double(p + "p90_us");
  t.num_reps = int(m.get_int(p + "num_reps"));
  t.stopped_early = m.get_int(p + "stopped_early") != 0;
  return t;
}

void put_bench_options(Message& m, const BenchmarkOptions& o) {
  m.set("warmup", o.warmup)
      .set("warmup_ms", o.warmup_ms)
      .set("probe_reps", o.probe_reps)
      .set("min_reps", o.min_reps)
      .set("max_reps", o.max_reps)
      .set("target_ms", o.target_ms);
}

BenchmarkOptions get_bench_options(const Message& m) {
  BenchmarkOptions o;
  o.warmup = int(m.get_int("warmup"));
  o.warmup_ms = m.get_double("warmup_ms");
  o.probe_reps = int(m.get_int("probe_reps"));
  o.min_reps = int(m.get_int("min_reps"));
  o.max_reps = int(m.get_int("max_reps"));
  o.target_ms = m.get_double("target_ms");
  return o;
}

}  // namespace kt::tune
