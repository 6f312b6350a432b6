/// @file catch.hpp
/// @brief One include for Catch2 v3 or v2, whichever the build found.
///
/// Test code includes this header only and uses the macros common to both
/// versions (TEST_CASE, SECTION, REQUIRE, CHECK, INFO, FAIL, ...).
#pragma once

#if STEPS_CATCH2_MAJOR >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
using Catch::Approx; // v2 spells it without the namespace
#else
#include <catch2/catch.hpp>
#endif
