// Parsing and applying test-only candidate faults.
#include "tuner/test_faults.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt::tune {

namespace {

struct FaultName {
  TestFault fault;
  const char* name;
};

constexpr FaultName kFaultNames[] = {
    {TestFault::kOutOfBounds, "oob"},
    {TestFault::kTrap, "trap"},
    {TestFault::kHang, "hang"},
    {TestFault::kWrongResult, "wrong"},
    {TestFault::kCompileCrash, "compile_crash"},
};

constexpr const char* kDefine = "#define KT_TEST_FAULT ";

}  // namespace

const char* to_string(TestFault fault) {
  for (const auto& f : kFaultNames)
    if (f.fault == fault) return f.name;
  return "none";
}

TestFaults parse_test_faults(const std::string& spec) {
  TestFaults faults;
  for (std::string_view entry : split(spec, ',')) {
    if (entry.empty()) continue;
    const std::size_t colon = entry.rfind(':');
    const std::string kind(colon == std::string_view::npos ? "" : entry.substr(colon + 1));
    TestFault fault = TestFault::kNone;
    for (const auto& f : kFaultNames)
      if (kind == f.name) fault = f.fault;
    if (colon == 0 || fault == TestFault::kNone)
      throw_invalid(
          fmt::format("test fault '{}': expected configkey:kind with kind one of oob, "
                      "trap, hang, wrong, compile_crash",
                      entry));
    faults[std::string(entry.substr(0, colon))] = fault;
  }
  return faults;
}

void apply_test_fault(TestFault fault, gen::GeneratedSource& source) {
  if (fault == TestFault::kNone) return;
  source.code = fmt::format("{}{}\n{}", kDefine, int(fault), source.code);
}

TestFault test_fault_of(const gen::GeneratedSource& source) {
  if (source.code.rfind(kDefine, 0) != 0) return TestFault::kNone;
  return TestFault(std::atoi(source.code.c_str() + std::string_view(kDefine).size()));
}

}  // namespace kt::tune
