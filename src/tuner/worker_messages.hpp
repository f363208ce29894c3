// The payloads of worker requests and replies: a generated source, a cubin record, a timing and
// the benchmark options as message fields under a name prefix, and back. Every put_* has a
// get_* that is its exact inverse (tests/cpu/worker_protocol_test.cpp).
#pragma once

#include <string>

#include "cache/database.hpp"
#include "generator/generated_source.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/worker_protocol.hpp"

namespace kt::tune {

void put_source(Message& m, const std::string& prefix, const gen::GeneratedSource& source);
gen::GeneratedSource get_source(const Message& m, const std::string& prefix);

void put_record(Message& m, const std::string& prefix, const cache::CubinRecord& record);
cache::CubinRecord get_record(const Message& m, const std::string& prefix);

// Median, p10, p90, repetitions and whether it stopped early (not the samples: only the summary
// crosses the pipe).
void put_timing(Message& m, const std::string& prefix, const Timing& timing);
Timing get_timing(const Message& m, const std::string& prefix);

void put_bench_options(Message& m, const BenchmarkOptions& options);
BenchmarkOptions get_bench_options(const Message& m);

}  // namespace kt::tune
