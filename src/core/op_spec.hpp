// One op (GEMM, attention, RMSNorm, ...) described once for every layer: its problem and config
// codecs, validation, config space and model, and the kernels a config instantiates. Problems
// and configs cross this interface as their canonical keys; each op parses its own. Runtime and
// tuner facets of an op live in those layers (rt::OpLauncher, tune::OpTuning) and are found
// through the same registry entry (core/op_registry.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_desc.hpp"
#include "core/occupancy.hpp"
#include "core/types.hpp"

namespace kt {

// The CLI's problem options besides the shape itself.
struct ShapeOptions {
  DType dtype = DType::kBF16;
  std::optional<DType> out_dtype;  // unset: dtype
  std::string layout;              // empty: the op's default
  std::vector<std::string> flags;  // the op's flags given (OpFlag::name), e.g. "causal"
};

// Whether `flag`, the op's one flag, was given in `options` (never, when `flag` is empty). Throws
// kt::Error (invalid argument), "<op> takes no --<flag>", for the first other flag given.
bool take_flag(const ShapeOptions& options, std::string_view op, std::string_view flag = {});
// The same for an op of several flags: whether each of `flags` was given, in their order.
std::vector<bool> take_flags(const ShapeOptions& options, std::string_view op,
                             const std::vector<std::string_view>& flags);

// A problem as the CLI names it: the --shape text and the options besides it.
struct ProblemShape {
  std::string shape;
  ShapeOptions options;
};

// An op-specific CLI flag (`--causal`, `--residual`).
struct OpFlag {
  std::string name;
  std::string help;
};

// What reports need of a problem.
struct ProblemSummary {
  double flops = 0;           // useful floating-point operations
  double min_bytes = 0;       // bytes any kernel must move at least (read once, written once)
  bool memory_bound = false;  // report TB/s and the ratio to a copy of min_bytes
};

// A config and the model's time for it.
struct RankedConfigKey {
  std::string config_key;
  double predicted_us = 0;
};

// Two fields of a config that name its tile, as its key spells them (GEMM's "bm" and "bn"): the
// axes of a report's heatmap of the configs measured.
struct ConfigTile {
  std::string x_name;
  int x = 0;
  std::string y_name;
  int y = 0;
};

// The kernels a (problem, config) instantiates: the generator writes a stub that includes
// `headers` (embedded template paths) and asks NVRTC for `name_expressions`, main kernel first.
struct KernelSource {
  std::string name;
  std::vector<std::string> headers;
  std::vector<std::string> name_expressions;
};

class OpSpec {
 public:
  virtual ~OpSpec() = default;

  virtual std::string name() const = 0;          // the --op value, e.g. "rmsnorm"
  virtual std::string key_prefix() const = 0;    // every problem key starts with it: "rmsnorm:"
  virtual std::string shape_syntax() const = 0;  // the --shape syntax, e.g. "rows=R,hidden=H"
  virtual std::string description() const = 0;   // one line for `kerntune ops`
  virtual std::vector<std::string> families() const = 0;
  virtual std::vector<OpFlag> flags() const { return {}; }
  // Bumped when a template changes performance or config semantics: part of every tuning key.
  virtual int template_version() const = 0;
  // Suites of --shape strings this op names (`--suite NAME`).
  virtual std::vector<std::pair<std::string, std::vector<std::string>>> suites() const {
    return {};
  }

  // A CLI shape and options -> the canonical problem key. Throws kt::Error (invalid argument)
  // naming the bad field, or a flag or layout the op does not take.
  virtual std::string problem_key(std::string_view shape, const ShapeOptions& options) const = 0;
  // The inverse of problem_key: a shape and options whose problem_key is `problem_key` (the
  // defaults left out: bf16, out dtype = in dtype, the op's default layout), for manifests;
  // nullopt when the op offers none (its problems are then written by key). Throws kt::Error
  // (invalid argument) for a malformed key.
  virtual std::optional<ProblemShape> shape_of(std::string_view /*problem_key*/) const {
    return std::nullopt;
  }
  // Parses and validates a problem key; throws kt::Error naming the problem.
  virtual ProblemSummary summarize(std::string_view problem_key) const = 0;
  // Distance between two problems in a space that reflects cost (>= 0); nullopt when a
  // config of one says nothing about the other (other dtype, head_dim, mask, ...).
  virtual std::optional<double> distance(std::string_view a, std::string_view b) const = 0;
  // The key prefix tuned neighbours of `problem_key` share (narrows the database's scan).
  virtual std::string neighbour_prefix(std::string_view /*problem_key*/) const {
    return key_prefix();
  }

  // Throws kt::Error (invalid argument) naming the problem when `config_key` is not a config
  // key of this op (whatever the problem or device; validate_config says whether it serves one).
  virtual void check_config_key(std::string_view config_key) const = 0;
  // The valid configs of the space for `problem_key` on `device`, best predicted first.
  virtual std::vector<RankedConfigKey> ranked_configs(std::string_view problem_key,
                                                      const DeviceDesc& device) const = 0;
  // Why `config_key` cannot serve `problem_key` on `device` (a malformed key included), or
  // nullopt when it can.
  virtual std::optional<std::string> validate_config(std::string_view problem_key,
                                                     std::string_view config_key,
                                                     const DeviceDesc& device) const = 0;
  // The model's time; `registers` (0: estimated) is the compiled kernel's count.
  virtual double predicted_us(std::string_view problem_key, std::string_view config_key,
                              const DeviceDesc& device, int registers = 0) const = 0;
  // Scratch memory the kernel needs on `device` (the runtime skips configs needing more than
  // it holds).
  virtual std::int64_t workspace_bytes(std::string_view /*problem_key*/,
                                       std::string_view /*config_key*/,
                                       const DeviceDesc& /*device*/) const {
    return 0;
  }
  // Scratch every config of the problem needs on `device`, whichever serves it (attention
  // backward's FP32 dQ accumulator): the runtime and the tuner grant it beyond their workspace
  // cap (runtime/op_dispatch.hpp, workspace_cap_for), the runtime as a scratch buffer apart
  // from its shared workspace. Default: none.
  virtual std::int64_t required_workspace_bytes(std::string_view /*problem_key*/,
                                                const DeviceDesc& /*device*/) const {
    return 0;
  }
  // The tile `config_key` names (ConfigTile); nullopt when the op names none. Throws kt::Error
  // (invalid argument) for a malformed key.
  virtual std::optional<ConfigTile> tile_of(std::string_view /*config_key*/) const {
    return std::nullopt;
  }
  // How the grid of `config_key` for `problem_key` falls into waves over `device`'s SMs as the
  // model counts them (estimated registers); nullopt when the op's model counts no waves.
  // Throws kt::Error (invalid argument) for a malformed key.
  virtual std::optional<WaveStats> waves(std::string_view /*problem_key*/,
                                         std::string_view /*config_key*/,
                                         const DeviceDesc& /*device*/) const {
    return std::nullopt;
  }
  // The model's reasoning for `kerntune explain`, several lines.
  virtual std::string explain(std::string_view problem_key, std::string_view config_key,
                              const DeviceDesc& device) const = 0;
  // The kernels to compile; `variant` names an instantiation the call chooses (attention's
  // "lse"); empty for the default.
  virtual KernelSource kernel_source(std::string_view problem_key, std::string_view config_key,
                                     std::string_view variant) const = 0;
  // Every variant a call may choose, the default ("") first: a fleet bundle holds each tuned
  // winner's cubin for every one, so that a machine without NVRTC serves them all.
  virtual std::vector<std::string> variants() const { return {""}; }
};

}  // namespace kt
