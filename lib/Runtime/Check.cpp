//===- Check.cpp - Comparing kernel outputs with a reference --------------===//

#include "tile/Runtime/Check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace tile::rt;

Comparison tile::rt::compareWithReference(const std::vector<double> &out,
                                          const std::vector<double> &ref,
                                          Tolerance tolerance) {
  Comparison result;
  for (size_t i = 0; i < ref.size(); ++i) {
    double expected = ref[i];
    double got =
        i < out.size() ? out[i] : std::numeric_limits<double>::quiet_NaN();
    bool mismatch;
    if (std::isfinite(expected)) {
      result.maxReference = std::max(result.maxReference, std::fabs(expected));
      mismatch = !std::isfinite(got);
    } else {
      // Only the same infinity matches (inf - inf would be NaN); it stays
      // out of max|ref|, which would otherwise make the bound infinite.
      mismatch = got != expected;
    }
    double error = std::fabs(got - expected);
    if (mismatch) {
      ++result.nonFinite;
      error = std::numeric_limits<double>::infinity();
    } else if (!std::isfinite(expected)) {
      error = 0;
    }
    if (error > result.maxAbsError || (i == 0 && error == 0)) {
      result.maxAbsError = error;
      result.worstIndex = i;
    }
  }
  result.maxRelError = result.maxReference > 0
                           ? result.maxAbsError / result.maxReference
                           : result.maxAbsError;
  double bound = tolerance.atol + tolerance.rtol * result.maxReference;
  result.pass = out.size() == ref.size() && result.nonFinite == 0 &&
                result.maxAbsError <= bound;
  return result;
}

std::string tile::rt::formatComparison(const std::string &name,
                                       const Comparison &c,
                                       Tolerance tolerance) {
  char line[256];
  double bound = tolerance.atol + tolerance.rtol * c.maxReference;
  std::snprintf(line, sizeof line,
                "  %-5s max_abs %.3e  max_rel %.3e  (bound %.1e + %.1e*%.3g = "
                "%.3e)  %s",
                name.c_str(), c.maxAbsError, c.maxRelError, tolerance.atol,
                tolerance.rtol, c.maxReference, bound,
                c.pass ? "PASS" : "FAIL");
  std::string text = line;
  if (c.nonFinite)
    text += "  (" + std::to_string(c.nonFinite) + " NaN/Inf elements)";
  if (!c.pass)
    text += "  worst at flat index " + std::to_string(c.worstIndex);
  return text;
}
