// Compiles a test's kernels into its cubin cache on every core before the test checks them one
// at a time (one at a time, the compiles took most of the gpu tier's time).
#pragma once

#include <cstddef>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "generator/generated_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "support/parallel_for.hpp"

namespace kt::testing {

// Compiles the distinct ones of `sources` into `db`, so that the test's get_or_compile finds them
// there. A compile that fails here fails again in the test's own get_or_compile, which reports it.
inline void precompile(cache::Database& db, const std::vector<gen::GeneratedSource>& sources) {
  std::vector<const gen::GeneratedSource*> distinct;
  std::set<std::string> keys;
  for (const gen::GeneratedSource& s : sources)
    if (keys.insert(gen::compile_key(s)).second) distinct.push_back(&s);
  parallel_for(distinct.size(), [&](std::size_t i) {
    try {
      rt::get_or_compile(&db, *distinct[i], true, true);
    } catch (const std::exception&) {
    }
  });
}

}  // namespace kt::testing
