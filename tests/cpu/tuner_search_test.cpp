// The GEMM search's shapes: variants of one shape differ only in stages, epilogue, cluster or
// raster order; a neighbouring shape is one halving or doubling of tile_m, tile_n or split_k,
// or a tile dimension and the split moved together (the same work units cut another way).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/op_registry.hpp"
#include "ops/gemm/gemm_search.hpp"
#include "tuner/op_tuning.hpp"

namespace kt::tune {
namespace {

GemmConfig key(const std::string& k) { return parse_gemm_config_key(k); }

TEST(GemmSearch, VariantsShareAShapeButSplitsDoNot) {
  EXPECT_TRUE(same_shape(key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"),
                         key("sm90.bm128.bn256.bk64.s3.c2.e0.cl2.g1.sk1")));
  EXPECT_FALSE(same_shape(key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"),
                          key("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk2")));
}

TEST(GemmSearch, NeighboursAreOneStepAway) {
  const GemmConfig best = key("sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk4");
  // One dimension halved or doubled.
  EXPECT_TRUE(neighbour_shape(best, key("sm90.bm64.bn128.bk64.s4.c1.e0.cl1.g8.sk2")));
  EXPECT_TRUE(neighbour_shape(best, key("sm90.bm64.bn128.bk64.s4.c1.e0.cl1.g8.sk8")));
  EXPECT_TRUE(neighbour_shape(best, key("sm90.bm64.bn256.bk64.s4.c1.e0.cl1.g8.sk4")));
  EXPECT_TRUE(neighbour_shape(best, key("sm90.bm64.bn64.bk64.s6.c1.e0.cl1.g8.sk4")));
  // The same 128 units cut another way: half the columns, half the splits (the H200's pick at
  // 64 x 4096 x 4096 beside the first round's).
  EXPECT_TRUE(neighbour_shape(best, key("sm90.bm64.bn64.bk64.s6.c1.e0.cl1.g8.sk2")));
  EXPECT_TRUE(neighbour_shape(best, key("sm90.bm64.bn256.bk64.s4.c1.e0.cl1.g8.sk8")));
}

TEST(GemmSearch, FartherShapesOtherFamiliesAndConsumersAreNotNeighbours) {
  const GemmConfig best = key("sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk4");
  EXPECT_FALSE(neighbour_shape(best, best));  // no step at all
  EXPECT_FALSE(neighbour_shape(best, key("sm90.bm64.bn64.bk64.s6.c1.e0.cl1.g8.sk8")));  // units x4
  EXPECT_FALSE(neighbour_shape(best, key("sm90.bm64.bn64.bk64.s6.c1.e0.cl1.g8.sk1")));  // two steps
  EXPECT_FALSE(neighbour_shape(best, key("sm90.bm64.bn144.bk64.s5.c1.e0.cl1.g8.sk4")));  // not x2
  EXPECT_FALSE(
      neighbour_shape(best, key("sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk4")));  // consumers
  EXPECT_FALSE(neighbour_shape(key("sm90.bm128.bn128.bk64.s4.c2.e0.cl1.g8.sk1"),
                               key("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1")));
}

TEST(GemmSearch, SmallMTileRowsAreADimensionToo) {
  // 16 rows in one tile of 16 beside two tiles of 8 (16 x 4096 x 4096 on the H200: 17.1 us
  // against 18.5).
  EXPECT_TRUE(neighbour_shape(key("smallm.bm8.bn64.bk128.wn16.wk4.sk1"),
                              key("smallm.bm16.bn64.bk128.wn16.wk4.sk1")));
}

// Round 2 moves to each neighbouring shape by its config closest to the base; a shape round 1
// already timed is moved to again only with a closer config than it had (16 x 4096 x 4096: the
// 16-row tile timed with 64-deep batches, not the 8-row best's 128).
TEST(GemmSearch, NeighbourMovesRetryAShapeTimedWithAFartherVariant) {
  const GemmConfig base = key("smallm.bm8.bn64.bk128.wn16.wk4.sk1");
  const std::vector<GemmConfig> candidates = {
      key("smallm.bm16.bn64.bk64.wn16.wk4.sk1"),    // 0: the model's first of the 16-row shape
      key("smallm.bm16.bn64.bk128.wn16.wk4.sk1"),   // 1: base's batch depth
      key("smallm.bm8.bn32.bk64.wn16.wk2.sk1"),     // 2: half the columns, other warps
      key("smallm.bm8.bn64.bk128.wn16.wk4.sk2"),    // 3: twice the splits
      key("smallm.bm32.bn64.bk128.wn16.wk4.sk1")};  // 4: not one step
  // Nothing measured but the base: one move per neighbouring shape, the closest config each,
  // the warp layout kept first.
  EXPECT_EQ(neighbour_moves(base, candidates, {base}, 6, 2), (std::vector<std::size_t>{1, 3, 2}));
  // The 16-row shape timed with bk64: tried again with bk128, as a retry.
  const std::vector<GemmConfig> timed = {base, candidates[0]};
  EXPECT_EQ(neighbour_moves(base, candidates, timed, 6, 2), (std::vector<std::size_t>{1, 3, 2}));
  EXPECT_EQ(neighbour_moves(base, candidates, timed, 6, 0), (std::vector<std::size_t>{3, 2}));
  EXPECT_EQ(neighbour_moves(base, candidates, timed, 1, 2), (std::vector<std::size_t>{1, 3}));
  // Timed with bk128 already: nothing closer is left for that shape.
  const std::vector<GemmConfig> closest = {base, candidates[1]};
  EXPECT_EQ(neighbour_moves(base, candidates, closest, 6, 2), (std::vector<std::size_t>{3, 2}));
}

TEST(GemmSearch, VariantDistanceCountsWhatTheShapeLeavesFree) {
  const GemmConfig best = key("sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g8.sk2");
  EXPECT_EQ(variant_distance(best, key("sm90.bm64.bn64.bk64.s6.c1.e2.cl1.g8.sk1")), 0);
  EXPECT_EQ(variant_distance(best, key("sm90.bm64.bn64.bk64.s3.c1.e0.cl1.g8.sk1")), 2);
  EXPECT_EQ(variant_distance(best, key("sm90.bm64.bn64.bk64.s3.c1.e0.cl2.g1.sk1")), 4);
}

TEST(GemmSearch, WarpLayoutDistanceCountsReCutWarps) {
  const GemmConfig best = key("smallm.bm8.bn64.bk128.wn16.wk4.sk1");
  EXPECT_EQ(warp_layout_distance(best, key("smallm.bm16.bn64.bk128.wn16.wk4.sk1")), 0);
  EXPECT_EQ(warp_layout_distance(best, key("smallm.bm8.bn32.bk128.wn16.wk2.sk1")), 1);
  EXPECT_EQ(warp_layout_distance(best, key("smallm.bm8.bn128.bk64.wn64.wk2.sk1")), 2);
  EXPECT_EQ(warp_layout_distance(key("sm90.bm64.bn64.bk64.s6.c1.e0.cl1.g8.sk1"),
                                 key("sm90.bm64.bn128.bk64.s4.c1.e2.cl1.g8.sk2")),
            0);
}

TEST(GemmSearch, BasesAreTheTwoFastestAndTheFastestOfEveryOtherFamily) {
  // 16 x 4096 x 4096 on the H200: two sm90 shapes ahead of the small-M 8-row tile, whose 16-row
  // neighbour was the fastest of all; the sm80 shape is searched around too.
  const std::vector<GemmConfig> by_time = {key("sm90.bm64.bn64.bk64.s12.c1.e0.cl1.g8.sk4"),
                                           key("sm90.bm64.bn64.bk64.s8.c1.e0.cl1.g1.sk4"),
                                           key("smallm.bm8.bn64.bk128.wn16.wk4.sk1"),
                                           key("sm90.bm64.bn128.bk64.s6.c1.e0.cl1.g8.sk2"),
                                           key("smallm.bm8.bn32.bk64.wn32.wk8.sk1"),
                                           key("sm80.bm64.bn64.bk64.wm64.wn64.s5.g8.sk1")};
  EXPECT_EQ(search_bases(by_time), (std::vector<std::size_t>{0, 1, 2, 5}));
  EXPECT_EQ(search_bases({by_time[2], by_time[0], by_time[1]}), (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(search_bases({}).empty());
}

// Swap-AB tiles the transposed product: never the same shape or a neighbour of an unswapped
// tile, and the fastest swapped config is a base of its own beside the two fastest.
TEST(GemmSearch, SwapAbIsAnOrientationOfItsOwn) {
  const GemmConfig plain = key("sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk1");
  const GemmConfig swab = key("sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g8.sk1.swab");
  EXPECT_FALSE(same_shape(plain, swab));
  EXPECT_FALSE(neighbour_shape(key("sm90.bm64.bn64.bk64.s12.c1.e0.cl1.g8.sk1"), swab));
  EXPECT_TRUE(neighbour_shape(key("sm90.bm64.bn16.bk64.s12.c1.e0.cl1.g8.sk1.swab"), swab));
  EXPECT_EQ(search_bases({plain, key("sm90.bm64.bn64.bk64.s12.c1.e0.cl1.g8.sk1"), swab}),
            (std::vector<std::size_t>{0, 1, 2}));
}

// The preview the tuner compiles ahead is the round next_round would give for the same
// candidates, and taking it advances nothing: the real round still comes, and the search still
// ends after its last local round.
TEST(GemmSearch, PreviewIsTheNextRoundWithoutAdvancingTheSearch) {
  const std::string problem = "gemm:bf16:bf16:nt:1536x1536x8192";
  const OpEntry& entry = OpRegistry::instance().by_key(problem);
  const std::vector<RankedConfigKey> ranked =
      entry.spec->ranked_configs(problem, device_profile("h200"));
  const std::unique_ptr<OpSearch> search = entry.tuning->start_search(problem, ranked, {});
  std::vector<SearchedConfig> searched;
  std::size_t round_size = 0;
  // Each round's candidates measured in reverse model order (the model is wrong), with one not
  // measured yet: what the tuner knows while a round's last candidates are still out.
  auto measure = [&](const std::vector<std::size_t>& round) {
    round_size = round.size();
    for (std::size_t i : round)
      searched.push_back({ranked[i].config_key, 1000.0 - double(searched.size())});
    searched.back().us.reset();
  };
  measure(search->next_round({}));
  int rounds = 1;
  while (true) {
    const std::vector<std::size_t> ahead = search->preview(searched);
    EXPECT_EQ(search->preview(searched), ahead);  // a preview changes nothing
    const std::vector<std::size_t> next = search->next_round(searched);
    EXPECT_EQ(next, ahead) << "round " << rounds + 1;
    if (next.empty()) break;
    measure(next);
    ++rounds;
  }
  EXPECT_GE(rounds, 2);
  EXPECT_LE(rounds, 4);  // the first round and at most three local ones
  EXPECT_GT(round_size, 0u);
  EXPECT_TRUE(search->preview(searched).empty());
}

// A family timed more than 1.5x behind the best gets no local round (sm80 on the H200: its
// variants never closed the gap); within 1.5x it does.
TEST(GemmSearch, AFamilyFarBehindIsNotSearchedAround) {
  const std::string problem = "gemm:bf16:bf16:nt:4096x4096x4096";
  const OpEntry& entry = OpRegistry::instance().by_key(problem);
  const std::vector<RankedConfigKey> ranked =
      entry.spec->ranked_configs(problem, device_profile("h200"));
  auto family = [](const std::string& key) { return key.substr(0, key.find('.')); };
  auto second_round = [&](double sm80_us) {
    const std::unique_ptr<OpSearch> search = entry.tuning->start_search(problem, ranked, {});
    std::vector<SearchedConfig> searched;
    for (std::size_t i : search->next_round({})) {
      const std::string& k = ranked[i].config_key;
      searched.push_back({k, family(k) == "sm80" ? sm80_us : 100.0 + double(searched.size())});
    }
    int sm80 = 0;
    for (std::size_t i : search->next_round(searched))
      sm80 += family(ranked[i].config_key) == "sm80";
    return std::make_pair(searched, sm80);
  };
  const auto [first, far] = second_round(170);
  ASSERT_TRUE(std::any_of(first.begin(), first.end(),
                          [&](const SearchedConfig& s) { return family(s.config_key) == "sm80"; }));
  EXPECT_EQ(far, 0);
  EXPECT_GT(second_round(140).second, 0);
}

TEST(WideSearch, OneRoundOfTheModelsFirstConfigs) {
  const std::unique_ptr<OpSearch> wide = model_top_search(10, 4);
  EXPECT_EQ(wide->next_round({}), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(wide->preview({{"a", 1.0}}).empty());
  EXPECT_TRUE(wide->next_round({{"a", 1.0}}).empty());
  EXPECT_EQ(model_top_search(3, 100)->next_round({}), (std::vector<std::size_t>{0, 1, 2}));
}

}  // namespace
}  // namespace kt::tune
