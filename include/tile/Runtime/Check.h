//===- Check.h - Comparing kernel outputs with a reference ------*- C++ -*-===//

#ifndef TILE_RUNTIME_CHECK_H
#define TILE_RUNTIME_CHECK_H

#include "tile/Runtime/DType.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tile::rt {

/// An output passes when max|out - ref| <= atol + rtol * max|ref|: a
/// normwise test, because elementwise relative errors of values near zero say
/// nothing about a kernel's accuracy. An infinite reference value (the LSE
/// -inf of a row that sees no key) must be matched exactly and does not
/// count in max|ref|; NaN in the output never passes.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

struct Comparison {
  double maxAbsError = 0;  ///< max_i |out_i - ref_i|; infinite if NaN or Inf.
  double maxReference = 0; ///< max_i |ref_i|
  double maxRelError = 0;  ///< maxAbsError / max|ref|
  size_t worstIndex = 0;
  /// Elements that are NaN or Inf where ref is finite, or that differ from
  /// a non-finite ref.
  size_t nonFinite = 0;
  bool pass = false;
};

Comparison compareWithReference(const std::vector<double> &out,
                                const std::vector<double> &ref,
                                Tolerance tolerance);

/// "O     max_abs 1.2e-04  max_rel 3.1e-05  (tol 2e-03)  PASS"
std::string formatComparison(const std::string &name,
                             const Comparison &comparison, Tolerance tolerance);

} // namespace tile::rt

#endif // TILE_RUNTIME_CHECK_H
