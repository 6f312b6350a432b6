#include "steps/catch.hpp"
#include "steps/report.hpp"

#include <cmath>
#include <sstream>

TEST_CASE("table columns line up", "[report]") {
  steps::Table t;
  t.add_column("version", steps::Table::Align::left);
  t.add_column("GB/s");
  t.add_row({"naive", "12"});
  t.add_row({"float4_grid_stride", "4075"});
  std::ostringstream os;
  t.print(os);
  CHECK(os.str() ==
        "version             GB/s\n"
        "------------------------\n"
        "naive                 12\n"
        "float4_grid_stride  4075\n");
  CHECK_THROWS_AS(t.add_row({"only one cell"}), std::invalid_argument);
  CHECK_THROWS_AS(t.add_column("late"), std::logic_error);
}

TEST_CASE("table width counts UTF-8 characters, not bytes", "[report]") {
  steps::Table t;
  t.add_column("a");
  t.add_row({"\xc3\xa9"}); // one character, two bytes
  t.add_row({"xy"});
  std::ostringstream os;
  t.print(os);
  CHECK(os.str() == " a\n--\n \xc3\xa9\nxy\n");
}

TEST_CASE("fixed formats numbers and dashes the rest", "[report]") {
  CHECK(steps::fixed(3.14159, 2) == "3.14");
  CHECK(steps::fixed(2.5, 0) == "2");
  CHECK(steps::fixed(NAN, 2) == "-");
  CHECK(steps::fixed(INFINITY, 2) == "-");
}

TEST_CASE("JSON output is valid and escaped", "[report]") {
  steps::Json j = steps::Json::object();
  steps::Json rows = steps::Json::array();
  rows.push(steps::Json(1.5)).push(steps::Json(NAN)).push(steps::Json(true)).push(steps::Json());
  j.set("name", "a \"quoted\"\\path\n").set("n", 134217731).set("rows", rows).set("empty", steps::Json::array());
  j.set("n", 7); // replaces, keeps position
  CHECK(j.dump() ==
        "{\n"
        "  \"name\": \"a \\\"quoted\\\"\\\\path\\n\",\n"
        "  \"n\": 7,\n"
        "  \"rows\": [\n"
        "    1.5,\n"
        "    null,\n"
        "    true,\n"
        "    null\n"
        "  ],\n"
        "  \"empty\": []\n"
        "}\n");
  CHECK(steps::json_quote(std::string("\x01", 1)) == "\"\\u0001\"");
  CHECK_THROWS_AS(steps::Json(1.0).push(steps::Json()), std::logic_error);
}
