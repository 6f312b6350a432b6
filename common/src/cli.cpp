#include "steps/cli.hpp"

#include "steps/error.hpp"

#include <cctype>
#include <limits>
#include <sstream>

namespace steps {

std::int64_t parse_count(const std::string& option, const std::string& text) {
  const std::string bad = option + ": '" + text + "' is not a count (digits with optional K, M, G or T suffix)";
  if (text.empty()) throw UsageError(option + ": missing value");
  if (text[0] == '-') throw UsageError(option + ": '" + text + "' is negative; a count is 0 or more");
  std::size_t i = 0;
  std::uint64_t value = 0;
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (value > kLimit) throw UsageError(option + ": '" + text + "' is too large");
  }
  if (i == 0) throw UsageError(bad);
  int shift = 0;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: throw UsageError(bad);
    }
    if (++i != text.size()) throw UsageError(bad);
  }
  if (shift && value > (kLimit >> shift)) throw UsageError(option + ": '" + text + "' is too large");
  return static_cast<std::int64_t>(value << shift);
}

Cli::Cli(std::string program, std::string summary, std::int64_t default_size, std::string size_help,
         int default_iters, int default_warmup)
    : program_(std::move(program)), summary_(std::move(summary)), size_help_(std::move(size_help)),
      default_size_(default_size), default_iters_(default_iters), default_warmup_(default_warmup) {}

void Cli::add(IntOption option) { ints_.push_back(std::move(option)); }
void Cli::add(FlagOption flag) { flags_.push_back(std::move(flag)); }

namespace {
std::int64_t in_range(const std::string& name, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo) throw UsageError(name + ": " + std::to_string(v) + " is too small (at least " + std::to_string(lo) + ")");
  if (v > hi) throw UsageError(name + ": " + std::to_string(v) + " is too large (at most " + std::to_string(hi) + ")");
  return v;
}
} // namespace

Options Cli::parse(int argc, const char* const* argv) const {
  Options o;
  o.size = default_size_;
  o.iters = default_iters_;
  o.warmup = default_warmup_;
  for (const auto& opt : ints_) o.ints[opt.name] = opt.default_value;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline = true;
    }
    auto next = [&]() -> std::string {
      if (has_inline) return value;
      if (i + 1 >= argc) throw UsageError(arg + ": missing value");
      return argv[++i];
    };
    auto no_value = [&] {
      if (has_inline) throw UsageError(arg + ": takes no value");
    };
    if (arg == "--help" || arg == "-h") { no_value(); o.help = true; }
    else if (arg == "--list") { no_value(); o.list = true; }
    else if (arg == "--no-verify") { no_value(); o.verify = false; }
    else if (arg == "--flush-l2") { no_value(); o.flush_l2 = true; }
    else if (arg == "--variant") {
      std::stringstream ss(next());
      std::string name;
      bool any = false;
      while (std::getline(ss, name, ',')) {
        if (name.empty()) throw UsageError("--variant: empty version name");
        o.variants.push_back(name);
        any = true;
      }
      if (!any) throw UsageError("--variant: missing version name");
    }
    else if (arg == "--except") {
      std::stringstream ss(next());
      std::string name;
      while (std::getline(ss, name, ','))
        if (!name.empty()) o.except.push_back(name);
      if (o.except.empty()) throw UsageError("--except: missing version name");
    }
    else if (arg == "--label") {
      o.label = next();
      if (o.label.empty()) throw UsageError("--label: missing text");
    }
    else if (arg == "--size") o.size = in_range("--size", parse_count("--size", next()), 1, std::int64_t{1} << 50);
    else if (arg == "--iters") o.iters = static_cast<int>(in_range("--iters", parse_count("--iters", next()), 1, 100000));
    else if (arg == "--warmup") o.warmup = static_cast<int>(in_range("--warmup", parse_count("--warmup", next()), 0, 10000));
    else if (arg == "--device") o.device = static_cast<int>(in_range("--device", parse_count("--device", next()), 0, 1024));
    else if (arg == "--seed") o.seed = static_cast<std::uint64_t>(parse_count("--seed", next()));
    else if (arg == "--json") {
      o.json = next();
      if (o.json.empty()) throw UsageError("--json: missing file name");
    } else {
      bool known = false;
      for (const auto& opt : ints_) {
        if (arg == opt.name) {
          o.ints[opt.name] = in_range(opt.name, parse_count(opt.name, next()), opt.min, opt.max);
          known = true;
        }
      }
      for (const auto& flag : flags_) {
        if (arg == flag.name) {
          no_value();
          o.flags.insert(flag.name);
          known = true;
        }
      }
      if (!known) throw UsageError("unknown option '" + arg + "'");
    }
  }
  auto off = [&o](const std::string& text) { o.off_default += (o.off_default.empty() ? "" : " ") + text; };
  if (o.size != default_size_) off("--size " + std::to_string(o.size));
  for (const auto& opt : ints_)
    if (const std::int64_t v = o.ints[opt.name]; !opt.keeps_goals && v != opt.default_value)
      off(opt.name + " " + std::to_string(v));
  for (const auto& flag : flags_)
    if (!flag.keeps_goals && o.has(flag.name)) off(flag.name);
  return o;
}

std::string Cli::help() const {
  std::ostringstream h;
  auto line = [&](const std::string& left, const std::string& text) {
    h << "  " << left;
    for (std::size_t pad = left.size(); pad < 22; ++pad) h << ' ';
    h << ' ' << text << '\n';
  };
  h << "Usage: " << program_ << " [options]\n\n" << summary_ << "\n\nOptions:\n";
  line("--help", "show this help and exit");
  line("--list", "list the versions (name and what it does) and exit");
  line("--variant NAME[,..]", "run only these versions (repeatable)");
  line("--except NAME[,..]", "run the default versions but these");
  line("--size N", size_help_ + " (default " + std::to_string(default_size_) + "; K/M/G/T suffixes)");
  for (const auto& opt : ints_)
    line(opt.name + " " + opt.value_name, opt.help + " (default " + std::to_string(opt.default_value) + ")");
  for (const auto& flag : flags_) line(flag.name, flag.help);
  line("--iters N", "timed runs per version (default " + std::to_string(default_iters_) + ")");
  line("--warmup N", "untimed runs first (default " + std::to_string(default_warmup_) + ")");
  line("--flush-l2", "flush the L2 cache before every timed run");
  line("--device N", "CUDA device to use (default 0)");
  line("--seed N", "seed of the random input data");
  line("--json FILE", "also write the results as JSON");
  line("--label TEXT", "name this run's problem shape in the JSON (./tutorial bench)");
  line("--no-verify", "skip verification against the CPU reference");
  h << "\nExit codes: 0 all verified, 1 a version failed or a CUDA error, 2 usage error,\n"
       "77 skipped (no usable GPU, or the GPU lacks what the chapter needs).\n";
  return h.str();
}

std::int64_t dimension(const Options& opts, const std::string& name) {
  const std::int64_t v = opts.get(name);
  return v != 0 ? v : opts.size;
}

std::size_t checked_elements(std::int64_t rows, std::int64_t cols, std::size_t element_bytes) {
  const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / element_bytes);
  const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols);
  if (rows < 0 || cols < 0 || (r != 0 && c > limit / r))
    throw OutOfMemory("a " + std::to_string(rows) + " x " + std::to_string(cols) +
                      " matrix does not fit in memory (its byte count overflows; use a smaller --size)");
  return static_cast<std::size_t>(r * c);
}

} // namespace steps
