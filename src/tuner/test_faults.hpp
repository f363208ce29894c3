// Deliberately broken candidates, for the fault-injection tests only. A fault is attached to a
// config key; the candidate's generated source then starts with `#define KT_TEST_FAULT <n>`,
// which switches on a tiny block in the templates (templates/common/test_fault.cuh): an
// out-of-bounds store, a trap, an endless loop, or no output at all. The define changes the
// compile key, so a broken cubin never aliases the good one. compile_crash makes the compile
// worker raise SIGSEGV instead of compiling. Nothing sets faults but tests and
// KERNTUNE_TEST_FAULTS.
#pragma once

#include <map>
#include <string>

#include "generator/generated_source.hpp"

namespace kt::tune {

enum class TestFault {
  kNone = 0,
  kOutOfBounds = 1,   // a store 1 TiB past the output: illegal address
  kTrap = 2,          // PTX trap: launch failure
  kHang = 3,          // spins forever: timeout
  kWrongResult = 4,   // returns without writing: wrong result
  kCompileCrash = 5,  // the compile worker dies with SIGSEGV
};

using TestFaults = std::map<std::string, TestFault>;  // by config key

// "configkey:kind,configkey:kind" with kinds oob, trap, hang, wrong, compile_crash. Throws
// kt::Error (kInvalidArgument) naming the bad entry.
TestFaults parse_test_faults(const std::string& spec);
const char* to_string(TestFault fault);

// Prepends the fault's define to `source` (nothing for kNone).
void apply_test_fault(TestFault fault, gen::GeneratedSource& source);

// The fault `source` carries (kNone when it has no define): how the compile worker knows.
TestFault test_fault_of(const gen::GeneratedSource& source);

}  // namespace kt::tune
