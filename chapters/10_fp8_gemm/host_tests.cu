// Chapter 10: host tests of the code that decides what the chapter prints
// and what cuBLASLt reads, runnable without a GPU (ctest -L host):
// the percentiles of the quantization error, its sample of D, the copy
// of our fine scales into cuBLASLt's block-scale layouts, and how v7 cuts
// the last wave.
#include "reference.hpp"
#include "v0_cublaslt.cuh"
#include "v7_plan.hpp"

#include "steps/catch.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

using ch10::nearest_rank;

TEST_CASE("nearest-rank percentiles", "[ch10]") {
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(nearest_rank(ten, 0.5) == 5);  // 5 of 10 values at or below 5
  CHECK(nearest_rank(ten, 0.9) == 9);  // 9 of 10 at or below 9 (not 10)
  CHECK(nearest_rank(ten, 0.91) == 10);
  CHECK(nearest_rank(ten, 1.0) == 10);
  CHECK(nearest_rank(ten, 0.01) == 1);
  const std::vector<double> one{7};
  CHECK(nearest_rank(one, 0.5) == 7);
  CHECK(nearest_rank(one, 0.9) == 7);
  CHECK(std::isnan(nearest_rank({}, 0.5)));
  // 260 values 1..260: the 90th percentile is the 234th (ceil(0.9 * 260)).
  std::vector<double> v;
  for (int i = 1; i <= 260; ++i) v.push_back(i);
  CHECK(nearest_rank(v, 0.9) == 234);
  CHECK(nearest_rank(v, 0.5) == 130);
}

TEST_CASE("the quantization sample: all of a small D, distinct elements of a large one", "[ch10]") {
  const auto all = ch10::quantization_sample(1, 3, 5, 100);
  REQUIRE(all.size() == 15);
  std::set<std::pair<int, int>> seen(all.begin(), all.end());
  CHECK(seen.size() == 15);

  for (const auto& [m, n] : {std::pair<int, int>{128, 2112}, {8192, 8192}, {1, 4096}, {4096, 24576}}) {
    const auto s = ch10::quantization_sample(42, m, n, 1000);
    REQUIRE(s.size() == 1000);
    std::set<std::pair<int, int>> distinct(s.begin(), s.end());
    CHECK(distinct.size() == 1000);
    for (const auto& [r, c] : s) {
      CHECK(r >= 0);
      CHECK(r < m);
      CHECK(c >= 0);
      CHECK(c < n);
    }
  }
}

TEST_CASE("A's scales K-block-major (sa_by_kb: v4's and cuBLASLt's layout)", "[ch10]") {
  // 6 rows, K = 300 (3 K blocks, the last partial): scale (r, kb) = 10 r + kb.
  ch10::HostOperand a;
  a.rows = 6;
  a.k = 300;
  const int kbs = ch10::k_blocks(a.k);
  REQUIRE(kbs == 3);
  for (int r = 0; r < a.rows; ++r)
    for (int kb = 0; kb < kbs; ++kb) a.scales.push_back(10.0f * r + kb);
  REQUIRE(ch10::sa_by_kb_ld(6) == 8);
  REQUIRE(ch10::sa_by_kb_ld(8) == 8);
  const std::vector<float> by_kb = ch10::scales_by_k_block(a);
  REQUIRE(by_kb.size() == 8u * kbs);
  for (int kb = 0; kb < kbs; ++kb) {
    for (int r = 0; r < a.rows; ++r) CHECK(by_kb[static_cast<std::size_t>(kb) * 8 + r] == 10.0f * r + kb);
    for (int r = a.rows; r < 8; ++r) CHECK(by_kb[static_cast<std::size_t>(kb) * 8 + r] == 0.0f); // padding
  }
  // Per tensor: the one scale in every place of a row.
  a.scaling = ch10::Scaling::per_tensor;
  a.scales = {0.5f};
  const std::vector<float> one = ch10::scales_by_k_block(a);
  for (int kb = 0; kb < kbs; ++kb)
    for (int r = 0; r < a.rows; ++r) CHECK(one[static_cast<std::size_t>(kb) * 8 + r] == 0.5f);
}

TEST_CASE("B's scales K-block-major (sb_by_kb: the producer's B box)", "[ch10]") {
  // B: 200 rows (2 blocks of 128, the last partial), K = 300 (3 K blocks):
  // scale (block rb, kb) = 100 (rb + 1) + kb; one scale per block, blocks
  // padded to 4 with zeros, and 4 zeros at the end.
  ch10::HostOperand b;
  b.rows = 200;
  b.k = 300;
  b.is_b = true;
  const int kbs = ch10::k_blocks(b.k);
  for (int rb = 0; rb < 2; ++rb)
    for (int kb = 0; kb < kbs; ++kb) b.scales.push_back(100.0f * (rb + 1) + kb);
  REQUIRE(ch10::sb_by_kb_ld(200) == 4);
  REQUIRE(ch10::sb_by_kb_ld(5 * 128) == 8);
  REQUIRE(ch10::sb_by_kb_ld(4 * 128 + 1) == 8);
  const std::vector<float> by_kb = ch10::scales_by_k_block(b);
  REQUIRE(by_kb.size() == 4u * kbs + 4); // + 4: the producer's 32-byte copy of the last group stays inside
  for (int kb = 0; kb < kbs; ++kb) {
    for (int rb = 0; rb < 2; ++rb) CHECK(by_kb[static_cast<std::size_t>(kb) * 4 + rb] == 100.0f * (rb + 1) + kb);
    for (int rb = 2; rb < 4; ++rb) CHECK(by_kb[static_cast<std::size_t>(kb) * 4 + rb] == 0.0f);
  }
  for (int i = 0; i < 4; ++i) CHECK(by_kb[4u * kbs + i] == 0.0f);
  b.scaling = ch10::Scaling::per_tensor;
  b.scales = {0.25f};
  const std::vector<float> one = ch10::scales_by_k_block(b);
  for (int kb = 0; kb < kbs; ++kb)
    for (int rb = 0; rb < 2; ++rb) CHECK(one[static_cast<std::size_t>(kb) * 4 + rb] == 0.25f);
}

TEST_CASE("B's fine scales in cuBLASLt's layout", "[ch10]") {

  // B: 200 rows (2 blocks of 128, the last partial), K = 640 (5 K blocks):
  // rows of the scale grid padded to 8; the padding is 0.
  const int rows_b = 200, k_b = 640, kbs_b = ch10::k_blocks(k_b);
  REQUIRE(kbs_b == 5);
  std::vector<float> b(static_cast<std::size_t>(2) * kbs_b);
  for (int rb = 0; rb < 2; ++rb)
    for (int kb = 0; kb < kbs_b; ++kb) b[static_cast<std::size_t>(rb) * kbs_b + kb] = 100.0f * (rb + 1) + kb;
  const std::vector<float> lt_b = ch10::v0::lt_scales_of(b, rows_b, k_b);
  REQUIRE(lt_b.size() == 16);
  for (int rb = 0; rb < 2; ++rb) {
    for (int kb = 0; kb < kbs_b; ++kb) CHECK(lt_b[static_cast<std::size_t>(rb) * 8 + kb] == 100.0f * (rb + 1) + kb);
    for (int kb = kbs_b; kb < 8; ++kb) CHECK(lt_b[static_cast<std::size_t>(rb) * 8 + kb] == 0.0f);
  }
  // K blocks a multiple of 4: no padding, the same order as ours.
  const std::vector<float> four{1, 2, 3, 4};
  CHECK(ch10::v0::lt_scales_of(four, 128, 512) == four);
}

TEST_CASE("v7's cut of the last wave", "[ch10]") {
  using ch10::v7::cut_last_wave;
  using ch10::v7::piece_start;
  const int saving = ch10::v7::kDefaultMinSaving;
  // The benchmark's shapes on 132 SMs (128 x 192 tiles, K blocks of 128).
  // 4096 x 7168 x 16384: 1216 tiles, 28 left after 9 waves, cut 4 ways.
  auto c = cut_last_wave(1216, 132, 128, saving);
  CHECK(c.first_tile == 1188);
  CHECK(c.ways == 4);
  CHECK(c.grid == 112);
  // 4096 x 4096 x 7168: 704 tiles, 44 left, 3 ways of 18 and 19 K blocks.
  c = cut_last_wave(704, 132, 56, saving);
  CHECK(c.ways == 3);
  CHECK(piece_start(56, 3, 1) == 18);
  CHECK(piece_start(56, 3, 2) == 37);
  // 4096^3: the same 44 tiles of 32 K blocks; 3 ways would save 21: no cut.
  CHECK_FALSE(cut_last_wave(704, 132, 32, saving).splits());
  CHECK(cut_last_wave(704, 132, 32, 0).ways == 3);
  // 4096 x 24576 x 1536: 4096 tiles, 4 left, 12 K blocks: pieces of 4 at most 3 ways.
  CHECK_FALSE(cut_last_wave(4096, 132, 12, saving).splits());
  CHECK(cut_last_wave(4096, 132, 12, 0).ways == 3);
  // Whole waves, and a last wave more than half full: no cut.
  CHECK_FALSE(cut_last_wave(264, 132, 128, 0).splits());
  CHECK_FALSE(cut_last_wave(132 + 67, 132, 128, 0).splits());
  CHECK(cut_last_wave(132 + 66, 132, 128, 0).ways == 2);
  // Fewer tiles than SMs: all of them are the last wave. 128 x 2112 x 7168:
  // 11 tiles of 56 K blocks, 12 ways (pieces of 4 and 5).
  c = cut_last_wave(11, 132, 56, saving);
  CHECK(c.first_tile == 0);
  CHECK(c.ways == 12);
  CHECK(c.grid == 132);

  // Every cut: at most one block per SM, pieces that cover [0, num_kb) in
  // order, none shorter than 4 K blocks, lengths within one of each other,
  // the longest at least min_saving shorter than a tile; and no cut that
  // would have paid is missed.
  for (int sms : {1, 7, 114, 132})
    for (int tiles : {1, 2, 5, 66, 131, 133, 200, 1216})
      for (int num_kb : {1, 2, 8, 9, 33, 128, 1000})
        for (int min_saving : {0, 4, 32}) {
          INFO("tiles " << tiles << ", SMs " << sms << ", K blocks " << num_kb << ", min saving " << min_saving);
          const auto cut = cut_last_wave(tiles, sms, num_kb, min_saving);
          const int rest = tiles % sms;
          const int ways = rest == 0 ? 0 : std::min(sms / rest, num_kb / ch10::v7::kMinBlocksPerPiece);
          const bool pays = ways >= 2 && num_kb - (num_kb + ways - 1) / ways >= min_saving;
          REQUIRE(cut.splits() == pays);
          if (!cut.splits()) continue;
          CHECK(cut.ways == ways);
          CHECK(cut.grid <= sms);
          CHECK(cut.grid == (tiles - cut.first_tile) * cut.ways);
          CHECK(cut.first_tile == tiles - rest);
          CHECK(piece_start(num_kb, cut.ways, 0) == 0);
          CHECK(piece_start(num_kb, cut.ways, cut.ways) == num_kb);
          for (int i = 0; i < cut.ways; ++i) {
            const int len = piece_start(num_kb, cut.ways, i + 1) - piece_start(num_kb, cut.ways, i);
            CHECK(len >= ch10::v7::kMinBlocksPerPiece);
            CHECK(len >= num_kb / cut.ways);
            CHECK(len <= num_kb / cut.ways + 1);
            CHECK(num_kb - len >= min_saving);
          }
        }
  // K near its limit (2^31 - 1): num_kb x i does not fit in 32 bits.
  const int most_kb = static_cast<int>((2147483647LL + 127) / 128);
  CHECK(piece_start(most_kb, 132, 131) == static_cast<int>(static_cast<long long>(most_kb) * 131 / 132));
  CHECK(piece_start(most_kb, 132, 132) == most_kb);
}
