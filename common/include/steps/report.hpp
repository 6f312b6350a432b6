/// @file report.hpp
/// @brief Output: an aligned text table for people and JSON for tools.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace steps {

/// A text table with aligned columns: headers, a rule, rows.
class Table {
public:
  /// Text alignment of a column.
  enum class Align { left, right };
  /// Adds a column (before any row).
  void add_column(std::string header, Align align = Align::right);
  /// Adds a row; it must have one cell per column (throws std::invalid_argument).
  void add_row(std::vector<std::string> cells);
  /// Prints the table; every line has the same width.
  void print(std::ostream& os) const;
  /// Number of rows added.
  std::size_t rows() const { return rows_.size(); }

private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

/// `v` with `decimals` digits after the point ("12.35").
std::string fixed(double v, int decimals);

/// A JSON value: null, bool, number, string, array or object (keys keep
/// their insertion order). Enough for results files; not a general parser.
class Json {
public:
  Json() = default;                              ///< null
  Json(bool b);                                  ///< true / false
  Json(double v);                                ///< a number (NaN and Inf become null)
  Json(int v) : Json(static_cast<double>(v)) {}  ///< a number
  Json(std::int64_t v) : Json(static_cast<double>(v)) {} ///< a number
  Json(std::uint64_t v) : Json(static_cast<double>(v)) {} ///< a number
  Json(const char* s);                           ///< a string
  Json(std::string s);                           ///< a string

  static Json array();  ///< an empty array
  static Json object(); ///< an empty object

  /// Appends to an array (throws std::logic_error on other kinds).
  Json& push(Json v);
  /// Sets a key of an object, replacing an existing one.
  Json& set(const std::string& key, Json v);
  /// Serialises with two-space indentation.
  std::string dump() const;

private:
  enum class Kind { null, boolean, number, string, array, object };
  void dump_to(std::string& out, int indent) const;
  Kind kind_ = Kind::null;
  bool b_ = false;
  double num_ = 0;
  std::string str_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

/// `s` quoted and escaped as a JSON string.
std::string json_quote(const std::string& s);

} // namespace steps
