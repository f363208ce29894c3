// Dispatch grades for every op: this problem measured on this device, on this GPU model, on this
// compute capability (re-scored by the model) -> the nearest tuned problems' measurements
// calibrating the model's ranking for this problem -> this problem predicted -> model default.
#include "runtime/op_dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/versions.hpp"

namespace kt::rt {

namespace {

constexpr std::size_t kNearestProblems = 8;
// The model's own picks for the problem that join the neighbours' measured configs.
constexpr std::size_t kModelCandidates = 8;
// The neighbours' configs that may compete: those among the model's first this many for the
// problem, as many as a default tune measures (the tuner's first round).
constexpr std::size_t kModelShortlist = 24;
// A config no neighbour measured is trusted this much less than the model's typical error near
// here says; measurements near here wear the penalty down with their weight.
constexpr double kUnmeasuredPenalty = 1.05;
// A neighbour offers the configs it measured within this factor of its best: the ones far behind
// there are candidates only as the model's own picks (picking the lowest of many noisy scores
// favours the configs whose error happens to be underestimated).
constexpr double kNearBest = 1.10;
// The weight of the prior (the typical error and the penalty) in a config's error: as much as two
// measurements at this very shape (a measurement weighs 1 / (1 + distance)). A config measured
// at a few neighbours a factor 2 away in one dimension keeps about half the prior.
constexpr double kPriorWeight = 2.0;
// Scores this close to the best left are ties, which the model's ranking breaks: the neighbours'
// errors move a score by less than the spread of the times they come from (operand placement
// alone moves a GEMM's by up to 3%), and the model predicts a config's stage variants equal.
constexpr double kTieMargin = 0.02;

bool usable(const OpSpec& op, const std::string& problem_key, const std::string& config_key,
            const DeviceDesc& device, std::int64_t max_workspace) {
  return !op.validate_config(problem_key, config_key, device) &&
         op.workspace_bytes(problem_key, config_key, device) <= max_workspace;
}

// A config's standing near this problem: the model's time here, and the model's error on it at the
// tuned neighbours (measured over predicted, log-averaged with weights 1 / (1 + distance)).
struct Candidate {
  double log_error_sum = 0;
  double weight_sum = 0;
  std::string measured_at;  // the nearest neighbour that measured it
  bool measured = false;    // measured (not predicted) at some neighbour
  bool offered = false;     // within kNearBest of a neighbour's best, or the model's own pick
  // Its place in the model's kModelShortlist for this problem (npos: not on it).
  std::size_t rank = std::string::npos;
};

// A tuned problem near this one: its distance, its winner and, once read, its rows (a winner
// without measurements, imported or predicted, stands as its own row).
struct Neighbour {
  double distance = 0;
  cache::Winner winner;
  std::vector<cache::Measurement> rows;
};

// The kNearestProblems tuned problems nearest this one on this device, nearest first, rows not
// read. A stored row that does not parse is skipped here, never fatal: it says nothing of this
// problem.
std::vector<Neighbour> nearest_winners(const cache::Database& db, const OpSpec& op,
                                       const std::string& problem_key, const DeviceDesc& device) {
  std::vector<Neighbour> near;
  for (auto& w : db.winners_with_prefix(device.fingerprint(), op.neighbour_prefix(problem_key),
                                        kBenchmarkProtocolVersion, op.template_version())) {
    try {
      if (auto d = op.distance(problem_key, w.key.problem_key))
        near.push_back({*d, std::move(w), {}});
    } catch (const Error& e) {
      logger().debug("skipping tuned row {}: {}", w.key.problem_key, e.what());
    }
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  if (near.size() > kNearestProblems) near.resize(kNearestProblems);
  return near;
}

// nearest_winners with their rows.
std::vector<Neighbour> nearest_neighbours(const cache::Database& db, const OpSpec& op,
                                          const std::string& problem_key,
                                          const DeviceDesc& device) {
  std::vector<Neighbour> near = nearest_winners(db, op, problem_key, device);
  for (Neighbour& n : near) {
    n.rows = db.measurements(n.winner.key);
    if (n.rows.empty()) {
      cache::Measurement m;
      m.config_key = n.winner.config_key;
      m.median_us = n.winner.median_us;
      m.status = n.winner.predicted ? cache::Status::kPredicted : cache::Status::kOk;
      n.rows.push_back(m);
    }
  }
  return near;
}

// A row that calibrates the model: measured, with a time.
bool calibrates(const cache::Measurement& m) {
  return m.status == cache::Status::kOk && m.median_us > 0;
}

// A candidate's score (the model's time here times its error near here, µs) and its place in the
// model's shortlist.
struct Scored {
  double us;
  std::size_t rank;
  DispatchChoice choice;
};

// `scored` best first: repeatedly the best score left, or the one the model ranks first among
// those within kTieMargin of it.
std::vector<DispatchChoice> best_first(std::vector<Scored> scored) {
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return std::tie(a.us, a.rank) < std::tie(b.us, b.rank);
  });
  std::vector<DispatchChoice> out;
  std::vector<bool> taken(scored.size(), false);
  for (std::size_t n = 0; n < scored.size(); ++n) {
    std::size_t head = 0;  // the best score left
    while (taken[head]) ++head;
    std::size_t pick = head;
    for (std::size_t i = head + 1;
         i < scored.size() && scored[i].us <= scored[head].us * (1 + kTieMargin); ++i)
      if (!taken[i] && scored[i].rank < scored[pick].rank) pick = i;
    taken[pick] = true;
    out.push_back(std::move(scored[pick].choice));
  }
  return out;
}

// nearest_choices' two lists.
struct NearChoices {
  std::vector<DispatchChoice> ranked, off_shortlist;
};

// The configs the nearest tuned problems measured within kNearBest of their best that the model
// ranks among its first kModelShortlist here, and the model's own top picks for this problem,
// each scored as the model's time here times the model's error on that config near here: the
// weighted log-mean of its errors at the neighbours, shrunk by kPriorWeight towards a prior of
// their typical error (the log-mean over all they measured) times kUnmeasuredPenalty; a config
// measured at no neighbour takes the prior whole. So a neighbour's winner whose tile, split or
// cluster does not suit this shape loses to what the model ranks first here, unless the
// measurements say the model misjudges it. Graded nearest-shape when the pick was measured at a
// neighbour, model-default when it is the model's own; nothing when no neighbour is tuned.
// `ranked` holds them best first (best_first); `off_shortlist` the neighbours' near-best configs
// the shortlist left out, scored alike: the last resort of a runtime that cannot compile, whose
// stored kernels are the neighbours' (a slow kernel at hand beats an error).
NearChoices nearest_choices(const std::vector<Neighbour>& near, const OpSpec& op,
                            const std::string& problem_key, const DeviceDesc& device,
                            std::int64_t max_workspace) {
  if (near.empty()) return {};
  std::map<std::string, Candidate> candidates;
  double typical_sum = 0, typical_weight = 0;
  for (const auto& [distance, w, rows] : near) {
    const double weight = 1.0 / (1.0 + distance);
    double best = 0;
    for (const cache::Measurement& m : rows)
      if (calibrates(m) && (best == 0 || m.median_us < best)) best = m.median_us;
    for (const cache::Measurement& m : rows) {
      if (m.status != cache::Status::kOk && m.status != cache::Status::kPredicted) continue;
      Candidate& c = candidates[m.config_key];
      if (!calibrates(m)) {
        c.offered = true;  // a predicted winner: the neighbour's only word on it
        continue;
      }
      if (m.median_us <= kNearBest * best) c.offered = true;
      double predicted = 0;
      try {
        predicted = op.predicted_us(w.key.problem_key, m.config_key, device);
      } catch (const Error&) {
        continue;  // a config of an older space: it says nothing here
      }
      if (!(predicted > 0)) continue;
      const double log_error = std::log(m.median_us / predicted);
      c.log_error_sum += weight * log_error;
      c.weight_sum += weight;
      if (!c.measured) c.measured_at = w.key.problem_key;
      c.measured = true;
      typical_sum += weight * log_error;
      typical_weight += weight;
    }
  }
  // A neighbour's config competes only where the model ranks it among the configs a tune of this
  // shape would measure: one that suited the neighbour's shape but not this one (a swap-AB tile
  // for M in the thousands, a tile the shape's waves leave half idle) is out of the running.
  const std::vector<std::string> shortlist =
      model_ranked_configs(op, problem_key, device, max_workspace, kModelShortlist);
  for (std::size_t i = 0; i < shortlist.size(); ++i) {
    if (i < kModelCandidates) candidates[shortlist[i]].offered = true;
    if (auto it = candidates.find(shortlist[i]); it != candidates.end()) it->second.rank = i;
  }

  // The prior, a config's error before any measurement near here, is the typical error and the
  // penalty; measurements pull it their way by their weight, so a config measured once, far
  // away, keeps most of the penalty, and one measured close by little of it.
  const double typical = typical_weight > 0 ? typical_sum / typical_weight : 0.0;
  const double prior = typical + std::log(kUnmeasuredPenalty);
  std::vector<Scored> listed, unlisted;
  for (const auto& [config_key, c] : candidates) {
    if (!c.offered || !usable(op, problem_key, config_key, device, max_workspace)) continue;
    const double log_error =
        (c.log_error_sum + kPriorWeight * prior) / (c.weight_sum + kPriorWeight);
    const double us = op.predicted_us(problem_key, config_key, device) * std::exp(log_error);
    logger().debug("dispatch {}: {} scores {:.2f} us (model error x{:.3f}{}{})", problem_key,
                   config_key, us, std::exp(log_error), c.measured ? ", measured at " : "",
                   c.measured_at);
    // Measured near here: nearest-shape; the model's own pick otherwise.
    (c.rank == std::string::npos ? unlisted : listed)
        .push_back({us, c.rank,
                    c.measured
                        ? DispatchChoice{config_key, DispatchGrade::kNearestShape, c.measured_at,
                                         false, device.fingerprint()}
                        : DispatchChoice{config_key, DispatchGrade::kModelDefault, "", true}});
  }
  return {best_first(std::move(listed)), best_first(std::move(unlisted))};
}

}  // namespace

const char* to_string(DispatchGrade grade) {
  switch (grade) {
    case DispatchGrade::kExact:
      return "exact";
    case DispatchGrade::kSameModel:
      return "same-model";
    case DispatchGrade::kSameCc:
      return "same-cc";
    case DispatchGrade::kPredicted:
      return "predicted";
    case DispatchGrade::kNearestShape:
      return "nearest-shape";
    case DispatchGrade::kModelDefault:
      return "model-default";
    case DispatchGrade::kFallback:
      return "fallback";
  }
  return "?";
}

std::int64_t workspace_cap_for(const OpSpec& op, const std::string& problem_key,
                               const DeviceDesc& device, std::int64_t cap_bytes) {
  return std::max(cap_bytes, op.required_workspace_bytes(problem_key, device));
}

std::vector<std::string> model_ranked_configs(const OpSpec& op, const std::string& problem_key,
                                              const DeviceDesc& device, std::int64_t max_workspace,
                                              std::size_t count) {
  std::vector<std::string> out;
  for (const RankedConfigKey& r : op.ranked_configs(problem_key, device)) {
    if (op.workspace_bytes(problem_key, r.config_key, device) > max_workspace) continue;
    out.push_back(r.config_key);
    if (out.size() >= count) break;
  }
  if (out.empty())
    throw Error(ErrorKind::kUnsupported,
                fmt::format("no {} config fits {} on {}", op.name(), problem_key, device.name));
  return out;
}

namespace {

// How a tuned winner's device stands to this one.
enum class DeviceMatch { kExact, kSameModel, kSameCc, kOther };

DeviceMatch match_of(const std::string& fingerprint, const DeviceDesc& device) {
  if (fingerprint == device.fingerprint()) return DeviceMatch::kExact;
  const std::optional<FingerprintParts> parts = parse_fingerprint(fingerprint);
  if (!parts || parts->cc_major != device.cc_major || parts->cc_minor != device.cc_minor)
    return DeviceMatch::kOther;
  return parts->name == device.name ? DeviceMatch::kSameModel : DeviceMatch::kSameCc;
}

// The winner of `winners` whose device's SM count is nearest this one's (ties: the faster).
const cache::Winner* nearest_sm_count(const std::vector<const cache::Winner*>& winners,
                                      const DeviceDesc& device) {
  const cache::Winner* best = nullptr;
  int best_gap = 0;
  for (const cache::Winner* w : winners) {
    const int gap =
        std::abs(parse_fingerprint(w->key.device_fingerprint)->num_sms - device.num_sms);
    if (best == nullptr || gap < best_gap || (gap == best_gap && w->median_us < best->median_us)) {
      best = w;
      best_gap = gap;
    }
  }
  return best;
}

// The winner of `winners` the model times fastest on this device (their configs re-scored here).
const cache::Winner* rescored(const std::vector<const cache::Winner*>& winners, const OpSpec& op,
                              const std::string& problem_key, const DeviceDesc& device) {
  const cache::Winner* best = nullptr;
  double best_us = 0;
  for (const cache::Winner* w : winners) {
    const double us = op.predicted_us(problem_key, w->config_key, device);
    if (best == nullptr || us < best_us) {
      best = w;
      best_us = us;
    }
  }
  return best;
}

DispatchChoice choice_of(const cache::Winner& w, DispatchGrade grade) {
  return {w.config_key, grade, w.key.problem_key, w.predicted, w.key.device_fingerprint};
}

}  // namespace

namespace {

// This problem's winners on every device of this compute capability, usable here, by
// [predicted][exact, same model, same compute capability].
struct MatchedWinners {
  std::vector<cache::Winner> winners;
  std::vector<const cache::Winner*> by_match[2][3];
};

void match_winners(const cache::Database& db, const OpSpec& op, const std::string& problem_key,
                   const DeviceDesc& device, std::int64_t max_workspace, MatchedWinners& m) {
  m.winners = db.winners_of_problem(problem_key, kBenchmarkProtocolVersion, op.template_version());
  for (const cache::Winner& w : m.winners) {
    const DeviceMatch match = match_of(w.key.device_fingerprint, device);
    if (match == DeviceMatch::kOther) continue;
    if (!usable(op, problem_key, w.config_key, device, max_workspace)) {
      logger().debug("tuned config {} for {} (tuned on {}) is not usable here", w.config_key,
                     problem_key, w.key.device_fingerprint);
      continue;
    }
    m.by_match[w.predicted ? 1 : 0][int(match)].push_back(&w);
  }
}

void add_measured(const MatchedWinners& m, const OpSpec& op, const std::string& problem_key,
                  const DeviceDesc& device, std::vector<DispatchChoice>& out) {
  const auto& measured = m.by_match[0];
  if (!measured[0].empty()) out.push_back(choice_of(*measured[0].front(), DispatchGrade::kExact));
  if (!measured[1].empty())
    out.push_back(choice_of(*nearest_sm_count(measured[1], device), DispatchGrade::kSameModel));
  if (!measured[2].empty())
    out.push_back(
        choice_of(*rescored(measured[2], op, problem_key, device), DispatchGrade::kSameCc));
}

// This problem's predicted winner: this fingerprint's, else the same model's, else the same
// compute capability's re-scored.
void add_predicted(const MatchedWinners& m, const OpSpec& op, const std::string& problem_key,
                   const DeviceDesc& device, std::vector<DispatchChoice>& out) {
  const auto& predicted = m.by_match[1];
  if (!predicted[0].empty())
    out.push_back(choice_of(*predicted[0].front(), DispatchGrade::kPredicted));
  else if (!predicted[1].empty())
    out.push_back(choice_of(*nearest_sm_count(predicted[1], device), DispatchGrade::kPredicted));
  else if (!predicted[2].empty())
    out.push_back(
        choice_of(*rescored(predicted[2], op, problem_key, device), DispatchGrade::kPredicted));
}

}  // namespace

std::vector<DispatchChoice> leading_choices(const cache::Database* db, const OpSpec& op,
                                            const std::string& problem_key,
                                            const DeviceDesc& device, std::int64_t max_workspace) {
  std::vector<DispatchChoice> out;
  if (db == nullptr) return out;
  MatchedWinners m;
  match_winners(*db, op, problem_key, device, max_workspace, m);
  add_measured(m, op, problem_key, device, out);
  // No neighbour measured anything (every nearest winner is predicted), so no nearest-shape
  // choice can come before the predicted one. Read from the winners alone: a measured winner is
  // a measurement.
  const std::vector<Neighbour> near = nearest_winners(*db, op, problem_key, device);
  if (std::all_of(near.begin(), near.end(), [](const Neighbour& n) { return n.winner.predicted; }))
    add_predicted(m, op, problem_key, device, out);
  return out;
}

std::vector<DispatchChoice> ranked_choices(const cache::Database* db, const OpSpec& op,
                                           const std::string& problem_key, const DeviceDesc& device,
                                           std::int64_t max_workspace, std::size_t model_tries) {
  std::vector<DispatchChoice> out;
  NearChoices near;
  if (db != nullptr) {
    MatchedWinners m;
    match_winners(*db, op, problem_key, device, max_workspace, m);
    add_measured(m, op, problem_key, device, out);
    // The calibrated neighbours' picks: those measured at a neighbour come before this problem's
    // predicted winner when the best of them is one; the model's own picks come after it.
    near = nearest_choices(nearest_neighbours(*db, op, problem_key, device), op, problem_key,
                           device, max_workspace);
    const bool near_first =
        !near.ranked.empty() && near.ranked.front().grade == DispatchGrade::kNearestShape;
    if (near_first)
      for (DispatchChoice& c : near.ranked)
        if (c.grade == DispatchGrade::kNearestShape) out.push_back(std::move(c));
    add_predicted(m, op, problem_key, device, out);
    for (DispatchChoice& c : near.ranked)
      if (!near_first || c.grade != DispatchGrade::kNearestShape) out.push_back(std::move(c));
  }
  for (std::string& config :
       model_ranked_configs(op, problem_key, device, max_workspace, model_tries))
    out.push_back({std::move(config), DispatchGrade::kModelDefault, "", true});
  for (DispatchChoice& c : near.off_shortlist) out.push_back(std::move(c));
  return out;
}

std::vector<DispatchChoice> benchmark_choices(const cache::Database* db, const OpSpec& op,
                                              const std::string& problem_key,
                                              const DeviceDesc& device, std::int64_t max_workspace,
                                              std::size_t count) {
  std::vector<DispatchChoice> out;
  std::unordered_set<std::string> seen;
  for (DispatchChoice& c : ranked_choices(db, op, problem_key, device, max_workspace, count)) {
    if (out.size() == count) break;
    if (seen.insert(c.config_key).second) out.push_back(std::move(c));
  }
  return out;
}

DispatchChoice choose_config(const cache::Database* db, const OpSpec& op,
                             const std::string& problem_key, const DeviceDesc& device,
                             std::int64_t max_workspace) {
  return ranked_choices(db, op, problem_key, device, max_workspace, 1).front();
}

}  // namespace kt::rt
