// Host tests of the results model: baseline, reference rows, best, goals,
// peak, extra columns, skipped rows, notes, options, exit code, and the two
// printers.
#include "fixtures.hpp"
#include "steps/catch.hpp"
#include "steps/summary.hpp"

#include <cmath>
#include <sstream>

namespace {

steps::RowResult row(const std::string& name, steps::Role role, double bytes, double ms, bool ok = true) {
  auto r = steps_test::named_row<steps::RowResult>(name, role, "does things");
  r.work.bytes = bytes;
  r.work.flops = bytes; // same numbers, for the flops tests
  r.timed = true;
  r.ms.median = r.ms.min = r.ms.max = ms;
  steps::Comparison c;
  c.ok = ok;
  if (!ok) {
    c.bad_count = 1;
    c.first_bad = 7;
    c.expected_at_first_bad = 1.0;
    c.got_at_first_bad = 2.0;
  }
  r.comparison = c;
  r.verified = ok;
  return r;
}

steps::DeviceInfo device() {
  steps::DeviceInfo d;
  d.name = "Test GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  d.mem_clock_khz = 3201000;
  d.mem_bus_bits = 6016;
  d.peak_bandwidth_gbs = 4000;
  return d;
}

steps::ChapterInfo chapter() {
  steps::ChapterInfo i = steps_test::chapter_99("memcpy");
  i.metric = steps::Metric::bandwidth;
  i.goals = {{"best", "memcpy", 0.9, ">= 0.90x memcpy"}, {"fast", "slow", 2.0, "fast >= 2x slow"}};
  return i;
}

} // namespace

TEST_CASE("summary: baseline by name, best and first among versions only", "[summary]") {
  steps::Options opts;
  std::vector<steps::RowResult> rows{
      row("slow", steps::Role::version, 1e9, 1.0),        // 1000 GB/s
      row("memcpy", steps::Role::baseline, 1e9, 0.25),    // 4000 GB/s
      row("probe", steps::Role::reference, 1e9, 0.2),     // 5000 GB/s: faster, but a reference
      row("fast", steps::Role::version, 1e9, 0.3125),     // 3200 GB/s
      row("mine", steps::Role::yours, 1e9, 0.1),          // 10000 GB/s: yours never ranks
  };
  const auto s = steps::summarize(chapter(), opts, {device()}, {"a problem"}, rows, false);
  CHECK(s.baseline == "memcpy");
  CHECK(s.first == "slow");
  CHECK(s.best == "fast");
  CHECK(s.exit_code == 0);
  CHECK(s.rows[2].ranked == false);
  CHECK(std::isnan(s.rows[2].speedup));        // a reference has no speedup
  CHECK(s.rows[2].ratio_to_baseline == Approx(1.25)); // but is shown as % of the baseline
  CHECK(s.rows[3].speedup == Approx(3.2));
  CHECK(s.rows[4].speedup == Approx(10.0)); // yours, on the same problem as the versions
  CHECK(s.rows[3].pct_of_peak == Approx(80.0)); // the DRAM peak by default
  CHECK(s.peak.label == "DRAM");
  REQUIRE(s.goals.size() == 2);
  CHECK(s.goals[0].numerator_row == "fast");
  CHECK(s.goals[0].ratio == Approx(0.8));
  CHECK_FALSE(s.goals[0].met);
  CHECK(s.goals[1].ratio == Approx(3.2)); // a goal between two named rows
  CHECK(s.goals[1].met);
}

TEST_CASE("summary: exit code from the roles of failed rows", "[summary]") {
  steps::Options opts;
  auto with = [&](steps::Role role) {
    std::vector<steps::RowResult> rows{row("memcpy", steps::Role::baseline, 1e9, 0.25),
                                       row("broken", role, 1e9, 0.5, false)};
    return steps::summarize(chapter(), opts, {device()}, {"p"}, rows, false);
  };
  CHECK(with(steps::Role::version).exit_code == 1);
  CHECK(with(steps::Role::reference).exit_code == 1);
  CHECK(with(steps::Role::mistake).exit_code == 0);
  CHECK(with(steps::Role::mistake).rows[1].verdict == "caught");
  CHECK(with(steps::Role::yours).exit_code == 0);
  CHECK(with(steps::Role::yours).rows[1].verdict == "not yet");
  opts.variants = {"broken"}; // yours, asked for by name: its failure counts
  CHECK(with(steps::Role::yours).exit_code == 1);
  // A wrong row has no speed: a fast wrong answer is not a speed.
  CHECK(std::isnan(with(steps::Role::version).rows[1].value));
  const auto failed = with(steps::Role::version);
  REQUIRE(failed.errors.size() == 1);
  CHECK(failed.errors[0].find("version 'broken' FAILED verification") != std::string::npos);
  opts.variants.clear();
  std::vector<steps::RowResult> rows{row("memcpy", steps::Role::baseline, 1e9, 0.25)};
  CHECK(steps::summarize(chapter(), opts, {device()}, {"p"}, rows, true).exit_code == 1); // aborted
}

TEST_CASE("summary: a chapter's own peak, the time metric, extra columns", "[summary]") {
  steps::Options opts;
  auto info = chapter();
  info.metric = steps::Metric::time;
  info.baseline = "plain";
  info.goals = {{"best", "plain", 2.5, ">= 2.5x plain launches"}};
  info.peak = [](const steps::DeviceInfo&) { return steps::Peak{"launch floor", 1.0, "one launch, measured"}; };
  auto plain = row("plain", steps::Role::baseline, 0, 0.0036);
  auto graph = row("graph", steps::Role::version, 0, 0.0011);
  graph.extras = {{"kernels", 100, 0}};
  const auto s = steps::summarize(info, opts, {device()}, {"p"}, {plain, graph}, false);
  CHECK(s.rows[1].value == Approx(1.1)); // microseconds
  CHECK(s.goals[0].ratio == Approx(3.6 / 1.1)); // lower time is the higher ratio
  CHECK(s.goals[0].met);
  CHECK(s.peak.label == "launch floor");
  CHECK(s.rows[1].pct_of_peak == Approx(100.0 / 1.1));
  REQUIRE(s.extra_columns.size() == 1);
  CHECK(s.extra_columns[0] == "kernels");

  std::ostringstream out, err;
  steps::print_table(s, out, err);
  CHECK(out.str().find("kernels") != std::string::npos);
  CHECK(out.str().find("% launch floor") != std::string::npos);
  CHECK(out.str().find("-> met") != std::string::npos);
  CHECK(err.str().empty());
}

TEST_CASE("summary: no peak for TFLOP/s unless the chapter names one", "[summary]") {
  steps::Options opts;
  auto info = chapter();
  info.metric = steps::Metric::flops;
  const auto s = steps::summarize(info, opts, {device()}, {"p"}, {row("memcpy", steps::Role::baseline, 1e9, 1)}, false);
  CHECK(s.peak.value == 0);
  CHECK(std::isnan(s.rows[0].pct_of_peak));
  CHECK(s.rows[0].value == Approx(1.0));
}

TEST_CASE("json: says what every number is", "[summary]") {
  steps::Options opts;
  std::vector<steps::RowResult> rows{row("memcpy", steps::Role::baseline, 1e9, 0.25),
                                     row("probe", steps::Role::reference, 1e9, 0.2),
                                     row("fast", steps::Role::version, 1e9, 0.3125)};
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p"}, rows, false);
  const std::string j = steps::to_json(s, "2026-01-01T00:00:00Z").dump();
  CHECK(j.find("\"schema\": " + std::to_string(steps::kResultsSchema)) != std::string::npos);
  CHECK(j.find("\"machine\": ") != std::string::npos); // the results file's name, made in C++ only
  CHECK(j.find("\"role\": \"reference\"") != std::string::npos);
  CHECK(j.find("\"ranked\": false") != std::string::npos);
  CHECK(j.find("\"label\": \"DRAM\"") != std::string::npos);
  CHECK(j.find("\"baseline\": \"memcpy\"") != std::string::npos);
  CHECK(j.find("\"numerator_row\": \"fast\"") != std::string::npos);
  CHECK(j.find("\"gpu_count\": 1") != std::string::npos);
  CHECK(j.find("\"exit_code\": 0") != std::string::npos);
  CHECK(j.find("\"label\": \"short K\"") == std::string::npos); // no --label: the default problem
  steps::Options labelled;
  labelled.label = "short K";
  const auto s2 = steps::summarize(chapter(), labelled, {device()}, {"p"}, rows, false);
  CHECK(steps::to_json(s2, "2026-01-01T00:00:00Z").dump().find("\"label\": \"short K\"") != std::string::npos);
}

TEST_CASE("summary: your row's speedup only over the same problem", "[summary]") {
  steps::Options opts;
  auto mine = row("yours", steps::Role::yours, 1e9, 0.1);
  mine.problem = 1; // another problem (its own group)
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p", "q"},
                                  {row("slow", steps::Role::version, 1e9, 1.0), mine}, false);
  CHECK(std::isnan(s.rows[1].speedup));
}

TEST_CASE("summary: a goal that needs more GPUs than the run has is n/a", "[summary]") {
  steps::Options opts;
  steps::ChapterInfo info = chapter();
  info.goals = {{"fast", "memcpy", 0.9, ">= 0.90x memcpy", 2}};
  // One GPU: the multi-GPU rows did not run; the goal is not applicable, not missed.
  std::vector<steps::RowResult> one{row("fast", steps::Role::version, 1e9, 1.0)};
  const auto s1 = steps::summarize(info, opts, {device()}, {"p"}, one, false);
  REQUIRE(s1.goals.size() == 1);
  CHECK_FALSE(s1.goals[0].applicable);
  CHECK_FALSE(s1.goals[0].measured);
  CHECK(s1.exit_code == 0);
  std::ostringstream out, err;
  steps::print_table(s1, out, err);
  CHECK(out.str().find("n/a (needs 2 GPUs; this run has 1)") != std::string::npos);
  CHECK(steps::to_json(s1, "2026-01-01T00:00:00Z").dump().find("\"applicable\": false") != std::string::npos);
  // Two GPUs: the same goal counts.
  std::vector<steps::RowResult> two{row("memcpy", steps::Role::baseline, 1e9, 1.0),
                                    row("fast", steps::Role::version, 1e9, 2.0)};
  const auto s2 = steps::summarize(info, opts, {device(), device()}, {"p"}, two, false);
  CHECK(s2.goals[0].applicable);
  CHECK(s2.goals[0].measured);
  CHECK_FALSE(s2.goals[0].met); // 0.5x < 0.9x
}

TEST_CASE("summary: a goal set at another shape is n/a, and judged at its own", "[summary]") {
  steps::ChapterInfo info = chapter();
  steps::Goal shaped{"best", "memcpy", 0.9, ">= 0.90x memcpy at a short K"};
  shaped.shape = "short K 4096 x 4096 x 256";
  shaped.at_shape = [](const steps::Options& o) { return o.get("--k") == 256; };
  info.goals = {{"best", "memcpy", 0.5, ">= 0.50x memcpy"}, shaped};
  std::vector<steps::RowResult> rows{row("memcpy", steps::Role::baseline, 1e9, 1.0),
                                     row("fast", steps::Role::version, 1e9, 1.25)}; // 0.8x memcpy
  steps::Options other;
  other.ints["--k"] = 4096;
  const auto s1 = steps::summarize(info, other, {device()}, {"p"}, rows, false);
  REQUIRE(s1.goals.size() == 2);
  CHECK(s1.goals[0].applicable); // the default problem's goal: this run's options are the defaults
  CHECK(s1.goals[0].met);
  CHECK_FALSE(s1.goals[1].applicable);
  CHECK_FALSE(s1.goals[1].at_shape);
  CHECK(s1.goals[1].not_here == "set at short K 4096 x 4096 x 256");
  CHECK(s1.exit_code == 0);
  std::ostringstream out, err;
  steps::print_table(s1, out, err);
  CHECK(out.str().find("at a short K: n/a (set at short K 4096 x 4096 x 256)") != std::string::npos);
  const std::string j1 = steps::to_json(s1, "2026-01-01T00:00:00Z").dump();
  CHECK(j1.find("\"shape\": \"short K 4096 x 4096 x 256\"") != std::string::npos);
  CHECK(j1.find("\"not_here\": \"set at short K 4096 x 4096 x 256\"") != std::string::npos);
  CHECK(j1.find("\"at_shape\": false") != std::string::npos);

  steps::Options at;
  at.ints["--k"] = 256;
  const auto s2 = steps::summarize(info, at, {device()}, {"p"}, rows, false);
  CHECK(s2.goals[1].applicable);
  CHECK(s2.goals[1].measured);
  CHECK_FALSE(s2.goals[1].met); // 0.8x < 0.9x
  CHECK(s2.goals[1].not_here.empty());
  CHECK(steps::to_json(s2, "2026-01-01T00:00:00Z").dump().find("not_here") == std::string::npos);

  // A parsed run at the shape is off the default problem (Cli::parse fills
  // off_default): the default problem's goal is n/a there, not judged on
  // another problem, and the shape's own goal is still judged.
  at.off_default = "--k 256";
  const auto s3 = steps::summarize(info, at, {device()}, {"p"}, rows, false);
  CHECK_FALSE(s3.goals[0].applicable);
  CHECK(s3.goals[0].not_here == "set at the default problem; this run has --k 256");
  CHECK(s3.goals[0].measured);
  CHECK_FALSE(s3.goals[0].met); // 0.8x >= 0.5x, but n/a is neither met nor missed, in the JSON too
  CHECK(steps::to_json(s3, "2026-01-01T00:00:00Z").dump().find("\"met\": true") == std::string::npos);
  CHECK(s3.goals[1].applicable);
  CHECK(s3.exit_code == 0);
  std::ostringstream out3, err3;
  steps::print_table(s3, out3, err3);
  CHECK(out3.str().find(">= 0.50x memcpy: n/a (set at the default problem; this run has --k 256)") !=
        std::string::npos);

  // At the default problem, but with a --variant list: "best" is the best of
  // those picked, not the chapter's best version, so the default problem's
  // goal is n/a (a run of one version must not read "NOT met"). A goal set at
  // a shape keeps its own rule (its bench line picks the versions it needs).
  steps::Options picked;
  picked.ints["--k"] = 4096;
  picked.variants = {"memcpy", "fast"};
  const auto s4 = steps::summarize(info, picked, {device()}, {"p"}, rows, false);
  CHECK_FALSE(s4.goals[0].applicable);
  CHECK(s4.goals[0].not_here == "set over every version; this run has --variant memcpy,fast");
  CHECK_FALSE(s4.goals[0].met);
  CHECK(s4.goals[1].not_here == "set at short K 4096 x 4096 x 256");
  picked.ints["--k"] = 256;
  picked.off_default = "--k 256";
  const auto s5 = steps::summarize(info, picked, {device()}, {"p"}, rows, false);
  CHECK(s5.goals[1].applicable);
  CHECK(s5.goals[1].measured);
  // A goal with a named numerator still applies to a --variant run that has both of its rows.
  steps::ChapterInfo named = chapter();
  named.goals = {{"fast", "memcpy", 0.5, ">= 0.50x memcpy"}};
  picked.ints["--k"] = 4096;
  picked.off_default.clear();
  const auto s6 = steps::summarize(named, picked, {device()}, {"p"}, rows, false);
  CHECK(s6.goals[0].applicable);
  CHECK(s6.goals[0].met);
}

TEST_CASE("summary: a row that ran another row's kernel ranks only without it", "[summary]") {
  steps::Options opts;
  auto alias = row("split", steps::Role::version, 1e9, 0.30); // 3333 GB/s: faster by noise
  alias.same_as = "fast";
  const std::vector<steps::RowResult> both{row("memcpy", steps::Role::baseline, 1e9, 0.25),
                                           row("fast", steps::Role::version, 1e9, 0.3125), alias};
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p"}, both, false);
  CHECK(s.best == "fast"); // one kernel, one chance
  CHECK(s.rows[2].ranked == false);
  CHECK(s.rows[2].verdict == "yes"); // still verified and shown
  CHECK(s.rows[2].ratio_to_baseline == Approx(0.25 / 0.30));
  std::ostringstream out, err;
  steps::print_table(s, out, err);
  CHECK(out.str().find("split (= fast)") != std::string::npos);
  CHECK(out.str().find("(= X): the row ran version X's kernel") != std::string::npos);
  const std::string j = steps::to_json(s, "2026-01-01T00:00:00Z").dump();
  CHECK(j.find("\"same_as\": \"fast\"") != std::string::npos);

  // Alone (its twin not selected), the row is the only measurement of that kernel: it ranks.
  const auto alone = steps::summarize(chapter(), opts, {device()}, {"p"},
                                      {row("memcpy", steps::Role::baseline, 1e9, 0.25), alias}, false);
  CHECK(alone.best == "split");
  CHECK(alone.rows[1].ranked);
}

namespace {
// A row that a precondition left out: no timing, no comparison.
steps::RowResult skipped_row(const std::string& name, steps::Role role, const std::string& why, int problem = 0) {
  auto r = steps_test::named_row<steps::RowResult>(name, role, "does things");
  r.problem = problem;
  r.skipped = why;
  return r;
}
} // namespace

TEST_CASE("summary: a skipped row is shown with its reason, never fails, never ranks", "[summary]") {
  steps::Options opts;
  std::vector<steps::RowResult> rows{row("memcpy", steps::Role::baseline, 1e9, 0.25),
                                     row("slow", steps::Role::version, 1e9, 1.0),
                                     skipped_row("fast", steps::Role::version, "needs 2 GPUs (this run has 1)")};
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p"}, rows, false);
  CHECK(s.exit_code == 0);
  CHECK(s.errors.empty());
  CHECK(s.best == "slow");
  CHECK(s.rows[2].verdict == "skipped");
  CHECK_FALSE(s.rows[2].ranked);
  CHECK_FALSE(s.rows[2].failed);
  CHECK(std::isnan(s.rows[2].value));
  // The goal "fast >= 2x slow" needs the skipped row: not measured, with the reason.
  REQUIRE(s.goals.size() == 2);
  CHECK_FALSE(s.goals[1].measured);
  CHECK_FALSE(s.goals[1].met);
  CHECK(s.goals[1].skipped == "needs 2 GPUs (this run has 1)");
  CHECK(s.goals[0].skipped.empty()); // best vs memcpy: both ran

  std::ostringstream out, err;
  steps::print_table(s, out, err);
  CHECK(out.str().find("skipped: needs 2 GPUs (this run has 1)") != std::string::npos); // the verdict cell
  CHECK(out.str().find("not measured (skipped: needs 2 GPUs (this run has 1))") != std::string::npos);
  CHECK(err.str().empty());

  const std::string j = steps::to_json(s, "2026-01-01T00:00:00Z").dump();
  CHECK(j.find("\"skipped\": \"needs 2 GPUs (this run has 1)\"") != std::string::npos);
  CHECK(j.find("\"verified\": \"skipped\"") != std::string::npos);
  // No timing fields for the skipped row: the JSON has exactly two medians.
  std::size_t medians = 0;
  for (std::size_t at = j.find("\"median_ms\""); at != std::string::npos; at = j.find("\"median_ms\"", at + 1)) ++medians;
  CHECK(medians == 2);
}

TEST_CASE("summary: a row skipped before its problem was built has no problem", "[summary]") {
  steps::Options opts;
  std::vector<steps::RowResult> rows{row("slow", steps::Role::version, 1e9, 1.0),
                                     skipped_row("peer", steps::Role::reference, "needs 2 GPUs", -1)};
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p"}, rows, false);
  const std::string j = steps::to_json(s, "2026-01-01T00:00:00Z").dump();
  CHECK(j.find("\"problem\": null") != std::string::npos);
  CHECK(j.find("\"problem\": 0") != std::string::npos);
}

TEST_CASE("summary: a skipped twin does not unrank the row that ran its kernel", "[summary]") {
  steps::Options opts;
  auto alias = row("split", steps::Role::version, 1e9, 0.30);
  alias.same_as = "fast";
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p"},
                                  {skipped_row("fast", steps::Role::version, "this shape"), alias}, false);
  CHECK(s.rows[1].ranked);
  CHECK(s.best == "split");
}

TEST_CASE("summary: every selected row skipped is a skipped run (77)", "[summary]") {
  steps::Options opts;
  const auto s = steps::summarize(chapter(), opts, {device()}, {},
                                  {skipped_row("memcpy", steps::Role::baseline, "needs 2 GPUs", -1),
                                   skipped_row("fast", steps::Role::version, "needs 2 GPUs", -1)},
                                  false);
  CHECK(s.exit_code == 77);
  REQUIRE(s.errors.size() == 1);
  CHECK(s.errors[0] == "ch99_test: skipped: every selected row was skipped here (reasons in the table)");
  // A failure beside skipped rows is still a failure.
  const auto f = steps::summarize(chapter(), opts, {device()}, {"p"},
                                  {skipped_row("memcpy", steps::Role::baseline, "no"),
                                   row("fast", steps::Role::version, 1e9, 1.0, false)},
                                  false);
  CHECK(f.exit_code == 1);
}

TEST_CASE("summary: the run's and the rows' notes reach the table and the JSON", "[summary]") {
  steps::Options opts;
  auto fast = row("fast", steps::Role::version, 1e9, 0.5);
  fast.notes = {"plan: 2 splits", "ring of 4 stages"};
  const auto s = steps::summarize(chapter(), opts, {device()}, {"p"},
                                  {row("memcpy", steps::Role::baseline, 1e9, 0.25), fast}, false,
                                  {"GPUs in this run: 1 of 1", "L2 fetch granularity: 64 bytes"});
  CHECK(s.notes.size() == 2);
  std::ostringstream out, err;
  steps::print_table(s, out, err);
  CHECK(out.str().find("fast: plan: 2 splits\n") != std::string::npos);
  CHECK(out.str().find("fast: ring of 4 stages\n") != std::string::npos);
  CHECK(out.str().find("GPUs in this run: 1 of 1\n") != std::string::npos);
  const std::string j = steps::to_json(s, "2026-01-01T00:00:00Z").dump();
  CHECK(j.find("\"notes\": [\n    \"GPUs in this run: 1 of 1\",\n    \"L2 fetch granularity: 64 bytes\"\n  ]") !=
        std::string::npos);
  CHECK(j.find("\"notes\": [\n        \"plan: 2 splits\",") != std::string::npos);
  // A row without notes has no "notes" key; the run always has one (maybe empty).
  const auto quiet = steps::summarize(chapter(), opts, {device()}, {"p"}, {row("memcpy", steps::Role::baseline, 1e9, 0.25)},
                                      false);
  const std::string q = steps::to_json(quiet, "2026-01-01T00:00:00Z").dump();
  CHECK(q.find("\"notes\": []") != std::string::npos);
  CHECK(q.find("\"notes\": [\n") == std::string::npos);
}

TEST_CASE("json: every chapter option as used, keys without dashes", "[summary]") {
  auto info = chapter();
  info.int_options = {{"--chase-mib", "MIB", "footprint", 512, 1, 4096}, {"--offset", "K", "offset", 0, 0, 3}};
  info.flag_options = {{"--littles-law", "also the Little's-law rows"}, {"--fine", "fine scales"}};
  steps::Options opts;
  opts.ints["--chase-mib"] = 64;
  opts.ints["--offset"] = 0;
  opts.flags.insert("--littles-law");
  const auto s = steps::summarize(info, opts, {device()}, {"p"}, {row("memcpy", steps::Role::baseline, 1e9, 0.25)}, false);
  const std::string j = steps::to_json(s, "2026-01-01T00:00:00Z").dump();
  CHECK(j.find("\"options\": {\n    \"chase-mib\": 64,\n    \"offset\": 0,\n    \"littles-law\": true,\n"
               "    \"fine\": false,\n    \"mistakes\": false\n  }") != std::string::npos);
}
