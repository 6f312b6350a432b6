#include "steps/report.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace steps {

void Table::add_column(std::string header, Align align) {
  if (!rows_.empty()) throw std::logic_error("Table: add columns before rows");
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != headers_.size())
    throw std::invalid_argument("Table: row has " + std::to_string(cells.size()) + " cells, table has " +
                                std::to_string(headers_.size()) + " columns");
  rows_.push_back(std::move(cells));
}

namespace {
// Display width of UTF-8 text: count code points, not bytes.
std::size_t width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}
} // namespace

void Table::print(std::ostream& os) const {
  std::vector<std::size_t> w(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    w[c] = width(headers_[c]);
    for (const auto& r : rows_) w[c] = std::max(w[c], width(r[c]));
  }
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(w[c] - width(cells[c]), ' ');
      if (c) line += "  ";
      line += aligns_[c] == Align::left ? cells[c] + pad : pad + cells[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << '\n';
  };
  emit(headers_);
  std::size_t total = 0;
  for (std::size_t c = 0; c < w.size(); ++c) total += w[c] + (c ? 2 : 0);
  os << std::string(total, '-') << '\n';
  for (const auto& r : rows_) emit(r);
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

Json::Json(bool b) : kind_(Kind::boolean), b_(b) {}
Json::Json(double v) : kind_(std::isfinite(v) ? Kind::number : Kind::null), num_(v) {}
Json::Json(const char* s) : kind_(Kind::string), str_(s) {}
Json::Json(std::string s) : kind_(Kind::string), str_(std::move(s)) {}

Json Json::array() {
  Json j;
  j.kind_ = Kind::array;
  return j;
}

Json Json::object() {
  Json j;
  j.kind_ = Kind::object;
  return j;
}

Json& Json::push(Json v) {
  if (kind_ != Kind::array) throw std::logic_error("Json::push on a non-array");
  items_.push_back(std::move(v));
  return *this;
}

Json& Json::set(const std::string& key, Json v) {
  if (kind_ != Kind::object) throw std::logic_error("Json::set on a non-object");
  for (auto& m : members_)
    if (m.first == key) {
      m.second = std::move(v);
      return *this;
    }
  members_.emplace_back(key, std::move(v));
  return *this;
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void Json::dump_to(std::string& out, int indent) const {
  const std::string pad(indent + 2, ' '), close_pad(indent, ' ');
  switch (kind_) {
    case Kind::null: out += "null"; break;
    case Kind::boolean: out += b_ ? "true" : "false"; break;
    case Kind::number: {
      char buf[40];
      if (num_ == std::floor(num_) && std::fabs(num_) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", num_);
      else
        std::snprintf(buf, sizeof buf, "%.6g", num_);
      out += buf;
      break;
    }
    case Kind::string: out += json_quote(str_); break;
    case Kind::array:
      if (items_.empty()) { out += "[]"; break; }
      out += "[\n";
      for (std::size_t i = 0; i < items_.size(); ++i) {
        out += pad;
        items_[i].dump_to(out, indent + 2);
        out += i + 1 < items_.size() ? ",\n" : "\n";
      }
      out += close_pad + "]";
      break;
    case Kind::object:
      if (members_.empty()) { out += "{}"; break; }
      out += "{\n";
      for (std::size_t i = 0; i < members_.size(); ++i) {
        out += pad + json_quote(members_[i].first) + ": ";
        members_[i].second.dump_to(out, indent + 2);
        out += i + 1 < members_.size() ? ",\n" : "\n";
      }
      out += close_pad + "}";
      break;
  }
}

std::string Json::dump() const {
  std::string out;
  dump_to(out, 0);
  return out + "\n";
}

} // namespace steps
