// The tuning database: one SQLite file holding compiled cubins (content-addressed by compile
// key) and tuning results (every measurement, and the winner per tuning key). The only code in
// kerntune that includes sqlite3.h. WAL mode, busy timeout, schema version with migrations.
// Every error is a kt::Error; a NaN time is stored (as NULL) and read back as NaN.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kt::cache {

inline constexpr int kSchemaVersion = 4;

// One compiled translation unit: a cubin with one or more kernels.
struct CubinRecord {
  std::string compile_key;  // hex SHA-256 of source, headers, options, NVRTC version, arch, codegen
  // Hex SHA-256 of the same but the NVRTC version (gen::source_key): how a runtime finds the cubin
  // without loading NVRTC. Empty for rows stored before schema version 4.
  std::string source_key;
  std::string arch;                           // "sm_90a", "sm_80", ...
  std::string source_name;                    // human-readable, e.g. the config key
  std::vector<std::string> name_expressions;  // e.g. "kt::gemm_sm80<...>"
  std::vector<std::string> lowered_names;     // same order: mangled names for cuModuleGetFunction
  std::vector<char> cubin;
  std::string cubin_sha256;  // hex SHA-256 of `cubin`: put_cubin sets it, the runtime checks it
  int registers = 0;         // of the first (main) kernel
  int spill_bytes = 0;       // spill stores + spill loads, all kernels
  int smem_static_bytes = 0;
  std::string log;            // NVRTC/ptxas log
  std::string nvrtc_version;  // "13.0"
  double compile_ms = 0;
};

// A candidate's outcome. The last four come from crash isolation: the compile worker died
// (NVRTC crashed), the candidate ran past its time limit, or it left the CUDA context broken
// with an illegal address or another fatal launch failure (trap, assert, illegal instruction).
enum class Status {
  kOk,
  kPredicted,
  kRejected,
  kCompileError,
  kLaunchError,
  kWrongResult,
  kCompileCrash,
  kTimeout,
  kIllegalAddress,
  kLaunchFailure,
};
const char* to_string(Status status);
Status parse_status(const std::string& text);  // throws kt::Error on unknown text
// True for the outcomes of crash isolation: a worker died, a CUDA context broke, or a time limit
// passed (compile_crash, timeout, illegal_address, launch_failure). Only those a kernel caused on
// the device blocklist it (the tuner's CandidatePipeline decides; see is_device_fault).
bool is_crash(Status status);

// The tuning key: (problem, device, benchmark protocol version, template version).
struct TuningKey {
  std::string problem_key;         // e.g. "gemm:bf16:bf16:nt:4096x4096x4096"
  std::string device_fingerprint;  // e.g. "NVIDIA H200/cc90/132sm"
  int protocol_version = 0;
  int template_version = 0;
  bool operator==(const TuningKey&) const = default;
};

// One measured (or predicted, or failed) candidate.
struct Measurement {
  TuningKey key;
  std::string config_key;
  Status status = Status::kOk;
  double median_us = 0;   // measured median; for kPredicted, the model's time
  double spread_pct = 0;  // (p90 - p10) / median, in percent
  int num_reps = 0;
  double tflops = 0;
  int sm_clock_mhz = 0;           // SM clock read while measuring, 0 if unknown
  double predicted_us = 0;        // the model's time for this candidate
  std::string detail;             // error text for failures, notes otherwise
  std::string run_id;             // which tuning run wrote it
  std::int64_t created_unix = 0;  // set by the database on insert when 0
};

struct Winner {
  TuningKey key;
  std::string config_key;
  double median_us = 0;
  bool predicted = false;  // true when chosen by the model without a GPU
  std::string run_id;
  std::int64_t created_unix = 0;
};

// A kernel kept out of later tuning runs on one device because it crashed, faulted or hung.
// Keyed by (device_fingerprint, compile_key): the compile key covers the exact generated code,
// every template, the NVRTC version and the target arch, and no problem size.
struct BlocklistEntry {
  std::string device_fingerprint;
  std::string compile_key;
  std::string nvrtc_version;
  int template_version = 0;
  std::string op;  // "gemm", "attention"
  std::string config_key;
  std::string kernel;       // the main kernel's name expression
  std::string problem_key;  // the problem it failed on first
  Status reason = Status::kCompileCrash;
  std::string detail;
  std::string run_id;
  std::int64_t created_unix = 0;  // set by the database on insert when 0
};

// Whether `entry` records a fault of the kernel on the device: illegal_address, launch_failure,
// or a timeout of the benchmark worker. False for what the host caused: a compile worker that
// died or ran out of time (reason compile_crash, or timeout with a detail starting "compile
// worker"), which builds before issue 35 also blocklisted. The tuner ignores such entries.
bool is_device_fault(const BlocklistEntry& entry);

// One tuning run of one tuning key, for resuming a killed run.
struct TuningRun {
  std::string run_id;
  TuningKey key;
  std::string options_sha256;  // everything that shapes the candidate list
  bool done = false;
  std::int64_t pid = 0;  // the process running it (last claimed it)
  std::string host;
  std::int64_t started_unix = 0;
  std::int64_t finished_unix = 0;
};

// Row counts, for `cache ls` and tests.
struct Summary {
  std::int64_t num_cubins = 0;
  std::int64_t cubin_bytes = 0;
  std::int64_t num_measurements = 0;
  std::int64_t num_winners = 0;
  int schema_version = 0;
};

// Stored rows that fail the checks of row_checks.hpp, for `kerntune doctor`.
struct InvalidRows {
  std::int64_t num_measurements = 0;  // unknown status, or measurement_problem
  std::int64_t num_winners = 0;       // winner_problem
  std::int64_t num_cubins = 0;        // cubin_problem: hash, ELF structure, kernel names
  std::vector<std::string> examples;  // "<row>: <reason>", the first few, printable
};

class Database {
 public:
  // Opens (creating if absent, with parent directories) the file at `path`, or ":memory:".
  // Sets WAL mode and a busy timeout, creates or migrates the schema. Throws kt::Error
  // (kDatabase) naming the path and the fix when the file is not a SQLite database, is
  // corrupt, or has a newer schema than this build understands.
  // One Database may be used from several threads (calls are serialized inside); several
  // processes may open the same file.
  static Database open(const std::string& path);
  // Opens an existing file read-only (the runtime's mode when it may not write, and every CLI
  // command that only reads): never creates, migrates or writes it. Throws kt::Error (kNotFound)
  // when the file does not exist, (kDatabase) as open() does otherwise, and also for an empty
  // file and a file of an older schema (which only a read-write open migrates: the message names
  // `kerntune cache migrate`).
  static Database open_readonly(const std::string& path);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const;

  std::optional<CubinRecord> find_cubin(const std::string& compile_key) const;
  // The cubins compiled for `arch` from the source `source_key` names, by any NVRTC version,
  // newest first (ties by compile key): what a runtime serves without loading NVRTC.
  std::vector<CubinRecord> find_cubins_by_source(const std::string& source_key,
                                                 const std::string& arch) const;
  // The distinct NVRTC versions of the stored cubins, sorted.
  std::vector<std::string> cubin_nvrtc_versions() const;
  // Insert or replace, one transaction. Throws kt::Error (kInvalidArgument) for an empty
  // compile key, a name that is empty or holds a newline, or name lists of unequal length.
  void put_cubin(const CubinRecord& record);
  void delete_cubin(const std::string& compile_key);

  // All rows in one transaction. A row equal in every field to a stored one is not stored
  // again (that is what makes merge and import idempotent).
  void add_measurements(const std::vector<Measurement>& rows);
  // In insertion order.
  std::vector<Measurement> measurements(const TuningKey& key) const;
  std::vector<Measurement> all_measurements() const;
  // The measured rows (status ok) on one device whose problem key starts with `problem_prefix`,
  // of every protocol and template version, ordered by problem key, then insertion: what the
  // tuner calibrates its model with (tuner/model_calibration.hpp).
  std::vector<Measurement> measured_with_prefix(const std::string& device_fingerprint,
                                                const std::string& problem_prefix) const;

  // The end of a tuning run, in one transaction: `rows` (the finalists' re-measurements), the
  // winner (set_winner's rule) and the run marked done. A run killed before this leaves no
  // winner and stays `running`, so that it can be resumed.
  void finish_run(const std::string& run_id, const std::vector<Measurement>& rows,
                  const std::optional<Winner>& winner);

  // The blocklist (run_state.cpp). add: insert, or replace the entry of the same key.
  void add_to_blocklist(const BlocklistEntry& entry);
  std::optional<BlocklistEntry> find_blocklisted(const std::string& device_fingerprint,
                                                 const std::string& compile_key) const;
  std::vector<BlocklistEntry> blocklist() const;  // by device, then creation time
  std::int64_t clear_blocklist();                 // returns the entries removed

  // Tuning runs (run_state.cpp). begin_run inserts `run` as running (started_unix 0: now);
  // throws kt::Error (kDatabase) when the run id exists.
  void begin_run(const TuningRun& run);
  std::optional<TuningRun> find_run(const std::string& run_id) const;
  // Runs of `key` with these options still marked running, oldest first.
  std::vector<TuningRun> unfinished_runs(const TuningKey& key,
                                         const std::string& options_sha256) const;
  // The run of `key` with these options marked done last (by finished_unix), if any.
  std::optional<TuningRun> last_finished_run(const TuningKey& key,
                                             const std::string& options_sha256) const;
  // Every tuning run, oldest first (for progress reports over a database).
  std::vector<TuningRun> all_runs() const;
  // Takes over a running run for process (pid, host) if it is still held by (old_pid,
  // old_host): true for exactly one of several processes racing for it.
  bool claim_run(const std::string& run_id, std::int64_t old_pid, const std::string& old_host,
                 std::int64_t pid, const std::string& host);

  // Insert or replace for winner.key, except that a predicted winner never replaces a measured
  // one. created_unix 0 is set to the current time.
  void set_winner(const Winner& winner);
  std::optional<Winner> find_winner(const TuningKey& key) const;
  // Winners on one device whose problem key starts with `problem_prefix` (e.g.
  // "gemm:bf16:bf16:nt:"), for the runtime's nearest-shape grade. Ordered by problem key
  // (bytewise).
  std::vector<Winner> winners_with_prefix(const std::string& device_fingerprint,
                                          const std::string& problem_prefix, int protocol_version,
                                          int template_version) const;
  std::vector<Winner> all_winners() const;
  // The winners of `problem_key` on every device (the runtime's device grades), by device.
  std::vector<Winner> winners_of_problem(const std::string& problem_key, int protocol_version,
                                         int template_version) const;

  // Copies every valid cubin, measurement and winner of `other_path` into this database.
  // Idempotent: merging the same file twice adds nothing. Winners: the faster measured one wins;
  // a measured winner always replaces a predicted one. Each row is checked first (row_checks.hpp:
  // measurement_problem, winner_problem, cubin_problem; a measurement's status must be known); a
  // row that fails is not stored, and "<path>: <row>: <reason>" is appended to `skipped` (when
  // given) and logged. Returns rows added (cubins and measurements inserted, winners inserted or
  // replaced). `other_path` is opened read-only and checked as open() checks a file: a missing
  // one is kt::Error (kNotFound), a corrupt, foreign or newer one kt::Error (kDatabase); either
  // way this database is left unchanged.
  std::int64_t merge_from(const std::string& other_path,
                          std::vector<std::string>* skipped = nullptr);

  // CSV of measurements and winners (one row each, a `kind` column first), and back. Cubins
  // are not exported: they are rebuilt from source on demand. RFC 4180 (fields holding a comma,
  // quote or newline are quoted, quotes doubled), a header line, times in shortest round-trip
  // form. Export writes a temporary file beside `out_path` and renames it over `out_path`; it
  // throws kt::Error (kInvalidArgument) when `out_path` is this database or one of its journal
  // files (always), or exists and `existing` is kRefuse. A stored row that cannot be read (an
  // unknown status) is left out and reported in `skipped`. Import is the inverse and
  // idempotent: it takes winners by merge_from's rule and returns rows added; a malformed file
  // is kt::Error (kInvalidArgument) "<path>:<line>: ...", and then nothing is added; a
  // well-formed row that fails merge_from's checks is skipped and reported as "<path>:<line>:
  // <reason>" in `skipped`.
  enum class ExistingFile { kRefuse, kReplace };
  void export_csv(const std::string& out_path, ExistingFile existing = ExistingFile::kRefuse,
                  std::vector<std::string>* skipped = nullptr) const;
  std::int64_t import_csv(const std::string& in_path, std::vector<std::string>* skipped = nullptr);

  // The provenance table (provenance.cpp): what a fleet shard or bundle says of itself, as
  // name -> value rows (fleet/provenance.hpp gives them meaning); empty for a plain database.
  std::map<std::string, std::string> provenance() const;
  // Replaces every provenance row with `rows`, in one transaction. Names are non-empty.
  void set_provenance(const std::map<std::string, std::string>& rows);
  // Hex SHA-256 of what the database serves and keeps, read from the rows as stored: every
  // winner (key, config, time, predicted), every cubin (compile key, source key, arch, the
  // SHA-256 of its bytes) and every measurement (its identity over all of its fields, so that
  // an edited row changes it). Not run ids' order, creation times of the file, the provenance,
  // the blocklist or tuning runs: merging the same shards twice gives the same hash.
  std::string content_sha256() const;
  // Makes the file complete by itself for shipping: the write-ahead log checkpointed into it and
  // the journal switched to rollback (DELETE), so that no -wal or -shm file goes with it. A later
  // read-write open switches it back to WAL.
  void make_self_contained();

  Summary summary() const;
  // Reads every row (and every cubin's bytes) and counts those that import or merge would refuse.
  InvalidRows invalid_rows() const;

 private:
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The schema version of the existing kerntune file at `path` (0: an empty file, which a
// read-write open makes a database), read without writing anything. Throws kt::Error as
// open_readonly() does for a missing, unreadable, damaged, foreign or newer file.
int schema_version_of(const std::string& path);

// Whether this process may write the file at `path` and create files beside it (a database's
// -wal, -shm and journal). False for a shipped database on a read-only filesystem or in a
// directory of another user: open it with Database::open_readonly.
bool may_write(const std::string& path);

// Default location: $KERNTUNE_DB, else $XDG_CACHE_HOME/kerntune/kerntune.db (when absolute, as
// the XDG spec requires), else ~/.cache/kerntune/kerntune.db. Throws kt::Error (kNotFound),
// asking for --db, when none of these is set.
std::string default_database_path();

}  // namespace kt::cache
