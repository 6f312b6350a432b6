#include "steps/summary.hpp"

#include "steps/arch.hpp"
#include "steps/memory.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>

namespace steps {

const char* role_name(Role r) {
  switch (r) {
    case Role::version: return "version";
    case Role::baseline: return "baseline";
    case Role::reference: return "reference";
    case Role::yours: return "yours";
    case Role::mistake: return "mistake";
  }
  return "?";
}

const char* metric_unit(Metric m) {
  switch (m) {
    case Metric::bandwidth: return "GB/s";
    case Metric::flops: return "TFLOP/s";
    case Metric::time: return "us";
  }
  return "?";
}

static const char* metric_name(Metric m) {
  switch (m) {
    case Metric::bandwidth: return "bandwidth";
    case Metric::flops: return "flops";
    case Metric::time: return "time";
  }
  return "?";
}

Peak dram_peak(const DeviceInfo& dev) {
  return {"DRAM", dev.peak_bandwidth_gbs,
          "2 x " + std::to_string(dev.mem_clock_khz / 1000) + " MHz x " + std::to_string(dev.mem_bus_bits) +
              "-bit bus / 8"};
}

namespace {

// The row's value in the metric's unit; NaN when it has none (not timed, or
// wrong: a fast wrong answer is not a speed).
double value_of(Metric m, const RowResult& r) {
  if (!r.timed || !r.error.empty() || (r.comparison && !r.comparison->ok)) return NAN;
  switch (m) {
    case Metric::bandwidth: return gbps(r.work.bytes, r.ms.median);
    case Metric::flops: return tflops(r.work.flops, r.ms.median);
    case Metric::time: return r.ms.median * 1e3;
  }
  return NAN;
}

// Higher is better, whatever the metric.
double throughput(Metric m, double value) { return m == Metric::time ? 1.0 / value : value; }

bool asked_for(const Options& opts, const std::string& name) {
  for (const auto& v : opts.variants)
    if (v == name) return true;
  return false;
}

std::string verdict_of(const RowResult& r) {
  if (!r.skipped.empty()) return "skipped";
  if (!r.error.empty()) return r.role == Role::mistake ? "caught (error)" : "ERROR";
  if (r.verify_skipped) return "not run";
  if (r.role == Role::mistake) return r.verified ? "NOT caught" : "caught";
  if (r.role == Role::yours && !r.verified) return "not yet";
  return r.verified ? "yes" : "NO";
}

// "chase-mib" for "--chase-mib".
std::string without_dashes(const std::string& name) {
  std::size_t i = 0;
  while (i < name.size() && name[i] == '-') ++i;
  return name.substr(i);
}

} // namespace

Summary summarize(const ChapterInfo& info, const Options& opts, const std::vector<DeviceInfo>& devices,
                  const std::vector<std::string>& problems, std::vector<RowResult> rows, bool aborted,
                  const std::vector<std::string>& notes) {
  Summary s;
  s.info = info;
  s.notes = notes;
  for (const auto& o : info.int_options) {
    const auto it = opts.ints.find(o.name);
    s.options.push_back({without_dashes(o.name), false, it != opts.ints.end() ? it->second : o.default_value});
  }
  for (const auto& f : info.flag_options) s.options.push_back({without_dashes(f.name), true, opts.has(f.name) ? 1 : 0});
  s.options.push_back({"mistakes", true, opts.has("--mistakes") ? 1 : 0}); // every chapter has it
  s.devices = devices;
  s.problems = problems;
  s.size = opts.size;
  s.iters = opts.iters;
  s.warmup = opts.warmup;
  s.flush_l2 = opts.flush_l2;
  s.label = opts.label;
  s.aborted = aborted;
  if (!devices.empty()) {
    if (info.peak) s.peak = info.peak(devices.front());
    else if (info.metric == Metric::bandwidth) s.peak = dram_peak(devices.front());
  }
  const Metric m = info.metric;

  // Versions rank, except one that ran another row's kernel when that row ran too.
  std::vector<bool> ranked(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowResult& r = rows[i];
    ranked[i] = r.role == Role::version && r.skipped.empty() &&
                (r.same_as.empty() || std::none_of(rows.begin(), rows.end(), [&](const RowResult& o) {
                   return o.name == r.same_as && o.skipped.empty();
                 }));
  }

  // The baseline and the first and best version rows.
  double base = NAN, first = NAN, best = NAN;
  int first_problem = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowResult& r = rows[i];
    const double v = value_of(m, r);
    if (!info.baseline.empty() && r.name == info.baseline && std::isfinite(v)) {
      s.baseline = r.name;
      base = throughput(m, v);
    }
    const bool good = ranked[i] && std::isfinite(v) && (r.verified || r.verify_skipped);
    if (!good) continue;
    if (s.first.empty()) {
      s.first = r.name;
      first = throughput(m, v);
      first_problem = r.problem;
    }
    if (s.best.empty() || throughput(m, v) > best) {
      s.best = r.name;
      best = throughput(m, v);
    }
  }
  (void)best;

  for (std::size_t i = 0; i < rows.size(); ++i) {
    RowResult& r = rows[i];
    RowSummary row;
    row.value = value_of(m, r);
    const double t = throughput(m, row.value);
    row.ratio_to_baseline = t / base;
    row.pct_of_peak = s.peak.value > 0 ? 100.0 * (m == Metric::time ? s.peak.value / row.value : row.value / s.peak.value)
                                       : NAN;
    row.ranked = ranked[i];
    // A speedup compares two ways of solving one problem: versions, and your
    // row when it solves the same problem as the first version.
    row.speedup = r.role == Role::version || (r.role == Role::yours && r.problem == first_problem) ? t / first : NAN;
    row.verdict = verdict_of(r);
    row.failed = !r.error.empty() || (r.comparison && !r.comparison->ok);
    row.fails_run = row.failed && (r.role == Role::version || r.role == Role::baseline || r.role == Role::reference ||
                                   (r.role == Role::yours && asked_for(opts, r.name)));
    if (r.work.hw_bytes > 0) s.show_moved = true;
    for (const auto& e : r.extras) {
      bool known = false;
      for (const auto& c : s.extra_columns) known = known || c == e.name;
      if (!known) s.extra_columns.push_back(e.name);
    }
    if (row.failed) {
      const std::string what = !r.error.empty() ? r.error : r.comparison->describe();
      if (r.role == Role::mistake)
        s.messages.push_back("mistake '" + r.name + "' caught: " + what);
      else if (!row.fails_run)
        s.messages.push_back(r.name + ": not verified yet: " + what + " (grade it: ./tutorial grade " + info.number + ")");
      else
        s.errors.push_back(info.binary + ": version '" + r.name + "' FAILED " +
                           (r.error.empty() ? "verification: " : "with an error: ") + what);
    }
    if (row.fails_run) s.exit_code = 1;
    row.result = std::move(r);
    s.rows.push_back(std::move(row));
  }
  if (aborted) {
    s.errors.push_back(info.binary + ": stopped early: the GPU context is unusable after the error above");
    s.exit_code = 1;
  }
  // Nothing ran: every selected row was skipped here. Like a chapter this
  // GPU cannot run, that is "skipped" (77), not a success.
  if (s.exit_code == 0 && !s.rows.empty() &&
      std::all_of(s.rows.begin(), s.rows.end(), [](const RowSummary& r) { return !r.result.skipped.empty(); })) {
    s.errors.push_back(info.binary + ": skipped: every selected row was skipped here (reasons in the table)");
    s.exit_code = 77;
  }

  auto find = [&](const std::string& name) -> const RowSummary* {
    for (const auto& r : s.rows)
      if (r.result.name == name) return &r;
    return nullptr;
  };
  for (const auto& g : info.goals) {
    GoalResult gr;
    gr.goal = g;
    gr.numerator_row = g.numerator == "best" ? s.best : g.numerator;
    const RowSummary* num = gr.numerator_row.empty() ? nullptr : find(gr.numerator_row);
    const RowSummary* den = find(g.denominator);
    gr.ratio = num && den ? throughput(m, num->value) / throughput(m, den->value) : NAN;
    gr.measured = std::isfinite(gr.ratio);
    gr.applicable = static_cast<int>(devices.size()) >= g.min_gpus;
    if (!gr.applicable)
      gr.not_here = "needs " + std::to_string(g.min_gpus) + " GPUs; this run has " + std::to_string(devices.size());
    else if (g.at_shape && !g.at_shape(opts)) {
      gr.applicable = gr.at_shape = false;
      gr.not_here = "set at " + g.shape;
    } else if (!g.at_shape && !opts.off_default.empty()) {
      gr.applicable = false; // a goal of the default problem, in a run of another one
      gr.not_here = "set at the default problem; this run has " + opts.off_default;
    } else if (!g.at_shape && g.numerator == "best" && !opts.variants.empty()) {
      // "best" of the versions a --variant list picked is not the chapter's
      // best version: a run of v4 alone at the default problem says n/a, not
      // "NOT met" (the ratio is still printed in the table).
      gr.applicable = false;
      std::string picked;
      for (const auto& v : opts.variants) picked += (picked.empty() ? "" : ",") + v;
      gr.not_here = "set over every version; this run has --variant " + picked;
    }
    gr.met = gr.applicable && gr.measured && gr.ratio >= g.threshold; // n/a: neither met nor missed
    for (const RowSummary* r : {num, den})
      if (r && gr.skipped.empty()) gr.skipped = r->result.skipped;
    s.goals.push_back(gr);
  }
  return s;
}

void print_table(const Summary& s, std::ostream& out, std::ostream& err) {
  const ChapterInfo& info = s.info;
  const Metric m = info.metric;
  const int decimals = m == Metric::bandwidth ? 0 : m == Metric::flops ? 1 : 2;
  out << "Chapter " << info.number << ": " << info.title << "\n";
  for (const auto& dev : s.devices)
    out << "GPU " << dev.index << ": " << dev.name << " (sm_" << dev.cc_major << dev.cc_minor << ", " << dev.sm_count
        << " SMs at up to " << dev.sm_clock_khz / 1000 << " MHz, " << format_bytes(static_cast<double>(dev.l2_bytes))
        << " L2, " << format_bytes(static_cast<double>(dev.global_mem_bytes)) << ", memory "
        << fixed(dev.peak_bandwidth_gbs, 0) << " GB/s)"
        << (dev.run_sm_clock_mhz > 0 ? ", at the end of the run: SM " + std::to_string(dev.run_sm_clock_mhz) +
                                           " MHz, memory " + std::to_string(dev.run_mem_clock_mhz) + " MHz"
                                     : std::string())
        << "\n";
  for (std::size_t i = 0; i < s.problems.size(); ++i)
    out << (s.problems.size() > 1 ? "Problem " + std::to_string(i + 1) + ": " : std::string("Problem: "))
        << s.problems[i] << "\n";
  out << "Timing: median of " << s.iters << " runs after " << s.warmup << " warm-up runs"
      << (s.flush_l2 ? ", L2 flushed before each (a read of twice its size: cold and clean)" : "") << "\n\n";

  const bool peak = s.peak.value > 0;
  Table t;
  t.add_column("version", Table::Align::left);
  t.add_column("median ms");
  t.add_column("min-max ms");
  t.add_column(metric_unit(m));
  if (s.show_moved) t.add_column("moved GB/s");
  for (const auto& c : s.extra_columns) t.add_column(c);
  t.add_column("% " + (s.baseline.empty() ? (info.baseline.empty() ? std::string("baseline") : info.baseline) : s.baseline));
  if (peak) t.add_column("% " + s.peak.label);
  t.add_column("speedup");
  t.add_column("verified", Table::Align::left);
  for (const auto& row : s.rows) {
    const RowResult& r = row.result;
    std::string name = r.name;
    if (r.role == Role::baseline) name += " *";
    if (r.role == Role::reference) name += " (ref)";
    if (!r.same_as.empty()) name += " (= " + r.same_as + ")";
    std::vector<std::string> cells{name, r.timed ? fixed(r.ms.median, 4) : "-",
                                   r.timed ? fixed(r.ms.min, 3) + "-" + fixed(r.ms.max, 3) : "-",
                                   fixed(row.value, decimals)};
    if (s.show_moved)
      cells.push_back(r.work.hw_bytes > 0 && std::isfinite(row.value) ? fixed(gbps(r.work.hw_bytes, r.ms.median), 0) : "-");
    for (const auto& c : s.extra_columns) {
      std::string cell = "-";
      for (const auto& e : r.extras)
        if (e.name == c) cell = fixed(e.value, e.decimals);
      cells.push_back(cell);
    }
    cells.push_back(fixed(100.0 * row.ratio_to_baseline, 1));
    if (peak) cells.push_back(fixed(row.pct_of_peak, 1));
    cells.push_back(std::isfinite(row.speedup) ? fixed(row.speedup, 2) + "x" : "-");
    cells.push_back(r.skipped.empty() ? row.verdict : row.verdict + ": " + r.skipped);
    t.add_row(cells);
  }
  t.print(out);
  out << "\n";
  if (!info.work_note.empty()) out << info.work_note << "\n";
  if (!info.baseline.empty()) out << "* baseline: " << info.baseline << "; (ref): a reference measurement, shown, never ranked.\n";
  for (const auto& row : s.rows)
    if (!row.result.same_as.empty()) {
      out << "(= X): the row ran version X's kernel on this problem: verified and timed, ranked only without X.\n";
      break;
    }
  if (peak)
    out << "% " << s.peak.label << ": of the " << s.peak.label << " peak, " << s.peak.how << " = "
        << fixed(s.peak.value, decimals) << " " << metric_unit(m) << ".\n";
  if (s.show_moved) out << "moved GB/s: bytes the memory system really transfers (whole 32-byte sectors) per second.\n";
  out << "speedup: throughput relative to the first version.\n";
  for (const auto& row : s.rows)
    for (const auto& n : row.result.notes) out << row.result.name << ": " << n << "\n";
  for (const auto& n : s.notes) out << n << "\n";
  for (const auto& g : s.goals) {
    out << "Goal: " << (g.goal.numerator == "best" ? "best version " : g.goal.numerator + " ") << g.goal.text << ": ";
    if (!g.applicable)
      out << "n/a (" << g.not_here << ")\n";
    else if (g.measured)
      out << g.numerator_row << " reaches " << fixed(g.ratio, 3) << "x " << g.goal.denominator << " -> "
          << (g.met ? "met" : "NOT met") << "\n";
    else if (!g.skipped.empty())
      out << "not measured (skipped: " << g.skipped << ")\n";
    else
      out << "not measured in this run\n";
  }
  for (const auto& n : s.messages) out << n << "\n";
  for (const auto& e : s.errors) err << e << "\n";
}

Json to_json(const Summary& s, const std::string& date) {
  const ChapterInfo& info = s.info;
  Json j = Json::object();
  j.set("schema", kResultsSchema).set("chapter", info.number).set("binary", info.binary).set("title", info.title)
      .set("date", date);
  // The results file this run belongs to ("H200", "2xH200"): named here once.
  if (!s.devices.empty()) j.set("machine", machine_name(s.devices.front(), static_cast<int>(s.devices.size())));
  if (!s.label.empty()) j.set("label", s.label);
  auto gpu_json = [](const DeviceInfo& dev) {
    Json gpu = Json::object();
    gpu.set("index", dev.index).set("name", dev.name).set("cc", dev.cc()).set("sms", dev.sm_count)
        .set("async_engine_count", dev.async_engine_count)
        .set("sm_clock_khz", dev.sm_clock_khz)
        .set("l2_bytes", static_cast<std::uint64_t>(dev.l2_bytes))
        .set("memory_bytes", static_cast<std::uint64_t>(dev.global_mem_bytes))
        .set("mem_clock_khz", dev.mem_clock_khz).set("bus_bits", dev.mem_bus_bits)
        .set("peak_bandwidth_gbs", dev.peak_bandwidth_gbs);
    // What the architecture table says of it: rates per SM per clock and the
    // peaks they give at this GPU's SM count and clock (the roofline's roofs).
    if (const ArchFacts* a = find_arch_facts(dev.cc_major, dev.cc_minor)) {
      Json arch = Json::object();
      arch.set("sm", a->sm()).set("family", a->family).set("fp32_fma_per_clock", a->fp32_fma_per_clock)
          .set("fp32_tflops", fp32_peak_tflops(dev));
      Json tensor = Json::object();
      for (TensorType t : {TensorType::fp16, TensorType::bf16, TensorType::tf32, TensorType::fp8, TensorType::int8})
        if (a->tensor_flop_per_clock(t) > 0) {
          std::string name = tensor_type_name(t);
          for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          tensor.set(name, tensor_peak_tflops(dev, t));
        }
      arch.set("tensor_tflops", tensor).set("max_warps_per_sm", a->max_warps_per_sm())
          .set("smem_per_sm_kib", a->smem_per_sm_kib);
      Json feats = Json::array();
      for (Feature f : a->features) feats.push(feature_name(f));
      arch.set("features", feats);
      gpu.set("arch", arch);
    }
    // The clocks at the end of the run (0: unknown, no NVML).
    if (dev.run_sm_clock_mhz > 0 || dev.run_mem_clock_mhz > 0)
      gpu.set("run_sm_clock_mhz", dev.run_sm_clock_mhz).set("run_mem_clock_mhz", dev.run_mem_clock_mhz);
    return gpu;
  };
  Json gpus = Json::array();
  for (const auto& dev : s.devices) gpus.push(gpu_json(dev));
  // "gpu": the first (or only) GPU, where results tools look for the machine's name.
  if (!s.devices.empty()) j.set("gpu", gpu_json(s.devices.front()));
  j.set("gpus", gpus).set("gpu_count", static_cast<int>(s.devices.size()));
  Json problems = Json::array();
  for (const auto& p : s.problems) problems.push(p);
  j.set("problem", s.problems.empty() ? Json() : Json(s.problems.front())).set("problems", problems);
  j.set("size", s.size).set("iters", s.iters).set("warmup", s.warmup).set("flush_l2", s.flush_l2);
  Json options = Json::object(); // every chapter option as used: numbers, flags as true/false
  for (const auto& o : s.options) options.set(o.name, o.flag ? Json(o.value != 0) : Json(o.value));
  j.set("options", options);
  Json notes = Json::array();
  for (const auto& n : s.notes) notes.push(n);
  j.set("notes", notes);
  Json metric = Json::object();
  metric.set("name", metric_name(info.metric)).set("unit", metric_unit(info.metric))
      .set("higher_is_better", info.metric != Metric::time);
  j.set("metric", metric_unit(info.metric)).set("metric_info", metric);
  if (s.peak.value > 0) {
    Json peak = Json::object();
    peak.set("label", s.peak.label).set("value", s.peak.value).set("unit", metric_unit(info.metric)).set("how", s.peak.how);
    j.set("peak", peak);
  } else {
    j.set("peak", Json());
  }
  Json arr = Json::array();
  for (const auto& row : s.rows) {
    const RowResult& r = row.result;
    Json o = Json::object();
    o.set("name", r.name).set("what", r.what).set("role", role_name(r.role)).set("ranked", row.ranked)
        .set("problem", r.problem >= 0 ? Json(r.problem) : Json()) // null: skipped before its problem was built
        .set("bytes", r.work.bytes).set("flops", r.work.flops).set("hw_bytes", r.work.hw_bytes);
    if (!r.skipped.empty()) o.set("skipped", r.skipped);
    if (r.timed)
      o.set("median_ms", r.ms.median).set("min_ms", r.ms.min).set("max_ms", r.ms.max).set("value", row.value)
          .set("ratio_to_baseline", row.ratio_to_baseline).set("pct_of_peak", row.pct_of_peak)
          .set("speedup", row.speedup);
    o.set("verified", row.verdict);
    if (r.comparison)
      o.set("rel_l2_error", r.comparison->rel_l2_error).set("max_abs_error", r.comparison->max_abs_error);
    if (!r.error.empty()) o.set("error", r.error);
    if (!r.same_as.empty()) o.set("same_as", r.same_as);
    if (!r.extras.empty()) {
      Json ex = Json::object();
      for (const auto& e : r.extras) ex.set(e.name, e.value);
      o.set("extras", ex);
    }
    if (!r.notes.empty()) {
      Json rn = Json::array();
      for (const auto& n : r.notes) rn.push(n);
      o.set("notes", rn);
    }
    arr.push(o);
  }
  j.set("rows", arr);
  j.set("baseline", s.baseline.empty() ? Json() : Json(s.baseline));
  j.set("best", s.best.empty() ? Json() : Json(s.best));
  Json goals = Json::array();
  for (const auto& g : s.goals) {
    Json o = Json::object();
    o.set("numerator", g.goal.numerator).set("numerator_row", g.numerator_row.empty() ? Json() : Json(g.numerator_row))
        .set("denominator", g.goal.denominator).set("threshold", g.goal.threshold).set("text", g.goal.text)
        .set("ratio", g.ratio).set("met", g.met).set("min_gpus", g.goal.min_gpus).set("applicable", g.applicable);
    if (!g.skipped.empty()) o.set("skipped", g.skipped);
    if (!g.goal.shape.empty()) o.set("shape", g.goal.shape).set("at_shape", g.at_shape);
    if (!g.applicable) o.set("not_here", g.not_here);
    goals.push(o);
  }
  j.set("goals", goals);
  j.set("exit_code", s.exit_code);
  return j;
}

} // namespace steps
