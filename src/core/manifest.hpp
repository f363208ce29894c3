// The fleet manifest: the problems a fleet runs (per op, in the CLI's shape syntax and flags) and
// the device profiles to tune them for, as a versioned, human-editable text file (its grammar in
// docs/FLEET.md). The parser names the line and field of the first error; to_text writes the
// canonical form, which parses back to the same manifest and whose SHA-256 identifies it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_desc.hpp"

namespace kt {

// The first word of every manifest (its first line that is not blank or a comment), followed by
// the format version.
inline constexpr const char* kManifestMagic = "kerntune-manifest";
inline constexpr int kManifestVersion = 1;

// A target device: a built-in profile, optionally another part of its GPU model
// (device_variant: name, SM count, boost clock).
struct ManifestDevice {
  std::string profile;      // "h200", "a100", ... (device_profile_names)
  std::string name;         // empty: the profile's
  int num_sms = 0;          // 0: the profile's
  int sm_clock_mhz = 0;     // 0: the profile's
  DeviceDesc desc() const;  // the profile with these applied
};

// The tuning options every shard of a manifest tunes with (so that shards agree with a run of
// the whole manifest in one process).
struct ManifestTuning {
  int candidates = 0;  // at most this many per problem (0: the op's whole search)
  int finalists = 3;   // re-measured interleaved before the pick (measuring only)
  bool operator==(const ManifestTuning&) const = default;
};

struct Manifest {
  std::vector<ManifestDevice> devices;    // distinct fingerprints, in the order given
  std::vector<std::string> problem_keys;  // distinct canonical keys, in the order given
  ManifestTuning tuning;
};

// Parses manifest text; `source` names it in errors. Throws kt::Error (invalid argument)
// "<source>:<line>: field <n> '<text>': <reason>" (or "<source>:<line>: <reason>" for a line
// as a whole) at the first malformed line: a missing or unknown version line, an unknown
// directive, op, profile, flag or option, a shape the op refuses, a value out of range. A
// problem or device given twice is kept once (a recorded manifest may repeat them); a manifest
// without problems or devices is an error.
Manifest parse_manifest(std::string_view text, const std::string& source);
// Reads and parses the file at `path`; kt::Error (kNotFound) when it cannot be read.
Manifest read_manifest(const std::string& path);

// The canonical text: the version line, the tune line, each device and each problem (by
// problem_line) in order, no comments. parse_manifest(to_text(m)) gives m back.
std::string to_text(const Manifest& manifest);
// Hex SHA-256 of to_text(manifest): the manifest's identity in shard and bundle provenance.
std::string manifest_sha256(const Manifest& manifest);

// The manifest line naming `problem_key`: "<op> <shape> [flag...] [dtype=..] [out-dtype=..]
// [layout=..]" when the op gives the shape back (OpSpec::shape_of), else "key <problem_key>".
// Throws kt::Error (invalid argument) for a key of no registered op.
std::string problem_line(std::string_view problem_key);
// The manifest line "device <profile> [name=\"..\"] [sms=N] [clock_mhz=N]" describing `device`:
// the built-in profile of the same name and compute capability, else the first of the same
// compute capability with the name given; nullopt when no profile has its compute capability.
std::optional<std::string> device_line(const DeviceDesc& device);

}  // namespace kt
