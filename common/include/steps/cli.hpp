/// @file cli.hpp
/// @brief The command line every chapter program shares.
///
/// Standard options: --help, --list, --variant NAME, --size N, --iters N,
/// --warmup N, --device N, --json FILE, --no-verify, --flush-l2, --seed N.
/// Chapters add their own integer options and flags. Sizes accept binary
/// suffixes: 64K = 65536, 1M = 2^20, 1G = 2^30, 1T = 2^40. Any bad value
/// raises UsageError, which a chapter turns into one line and exit code 2.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace steps {

/// A command-line mistake: unknown option, missing or bad value.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An integer option a chapter adds (e.g. --m for a matrix height).
struct IntOption {
  std::string name;        ///< with the dashes: "--m"
  std::string value_name;  ///< shown in --help: "M"
  std::string help;        ///< one line
  std::int64_t default_value = 0; ///< used when the option is absent
  std::int64_t min = 1;    ///< smallest allowed value
  std::int64_t max = std::int64_t{1} << 50; ///< largest allowed value
  /// True for an option that only adds rows or output (the problem stays the
  /// default one): another value keeps the goals of the default problem
  /// judged. False (most options): another value is another problem, where
  /// those goals say n/a.
  bool keeps_goals = false;
};

/// A boolean flag a chapter adds (e.g. --mistakes).
struct FlagOption {
  std::string name; ///< with the dashes: "--mistakes"
  std::string help; ///< one line
  bool keeps_goals = false; ///< as IntOption::keeps_goals: giving the flag keeps the default problem
};

/// The parsed command line.
struct Options {
  bool help = false;                 ///< --help / -h
  bool list = false;                 ///< --list
  std::vector<std::string> variants; ///< --variant (repeatable, or comma-separated); empty = all
  std::int64_t size = 0;             ///< --size
  int iters = 20;                    ///< --iters: timed runs
  int warmup = 3;                    ///< --warmup: untimed runs first
  int device = 0;                    ///< --device: CUDA ordinal
  std::vector<std::string> except;   ///< --except: rows left out of the default selection
  std::string json;                  ///< --json FILE: also write results there
  std::string label;                 ///< --label TEXT: names this run's problem shape in the JSON
  bool verify = true;                ///< cleared by --no-verify
  bool flush_l2 = false;             ///< --flush-l2
  std::uint64_t seed = 2024;         ///< --seed: random input data
  std::map<std::string, std::int64_t> ints; ///< chapter integer options, by name
  std::set<std::string> flags;       ///< chapter flags that were given
  /// How the run leaves the chapter's default problem: "--size 1024 --k 256"
  /// (--size and every option without keeps_goals that differs from its
  /// default), "" at the default problem. Goals without a shape are judged
  /// only there (summarize()).
  std::string off_default;

  /// Value of a chapter integer option (throws std::out_of_range if unknown).
  std::int64_t get(const std::string& name) const { return ints.at(name); }
  /// True when chapter flag `name` was given.
  bool has(const std::string& name) const { return flags.count(name) != 0; }
};

/// A matrix dimension from the command line: chapter option `name` (e.g.
/// "--m") when it is non-zero, else --size.
std::int64_t dimension(const Options& opts, const std::string& name);

/// Elements of a rows x cols matrix of `element_bytes`-byte values; throws
/// OutOfMemory (error.hpp) when the byte count overflows 64 bits.
std::size_t checked_elements(std::int64_t rows, std::int64_t cols, std::size_t element_bytes = 4);

/// Parses a count: decimal digits with an optional K, M, G or T suffix
/// (binary: 1K = 1024). Throws UsageError naming `option` otherwise.
std::int64_t parse_count(const std::string& option, const std::string& text);

/// The parser. Construct with the program's name and defaults, add chapter
/// options, then parse().
class Cli {
public:
  /// @param program       binary name, used in messages ("ch01_vector_add")
  /// @param summary       one paragraph for --help
  /// @param default_size  --size default; @param size_help its --help line
  /// @param default_iters --iters default; @param default_warmup --warmup default
  Cli(std::string program, std::string summary, std::int64_t default_size, std::string size_help,
      int default_iters = 20, int default_warmup = 3);

  /// Adds a chapter integer option.
  void add(IntOption option);
  /// Adds a chapter flag.
  void add(FlagOption flag);
  /// Parses argv (argv[0] is skipped). Throws UsageError.
  Options parse(int argc, const char* const* argv) const;
  /// The --help text.
  std::string help() const;
  /// The program name given to the constructor.
  const std::string& program() const { return program_; }

private:
  std::string program_, summary_, size_help_;
  std::int64_t default_size_;
  int default_iters_, default_warmup_;
  std::vector<IntOption> ints_;
  std::vector<FlagOption> flags_;
};

} // namespace steps
