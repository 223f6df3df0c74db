//===- DType.h - Element types of kernel buffers ----------------*- C++ -*-===//
//
// The element types a kernel parameter or a buffer can have, spelled as in
// Triton signatures (`fp16`, `bf16`, `fp32`, `i32`, ...), with their sizes in
// memory, and conversions between a stored element and a double.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_DTYPE_H
#define TILE_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tile::rt {

enum class DType : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  F16,
  BF16,
  F32,
  F64,
  F8E5M2,
  F8E4M3FN,
};

/// Bytes one element occupies in memory (i1 takes a byte, as in Triton).
size_t dtypeSize(DType type);

/// The Triton spelling: i1 i8 i16 i32 i64 fp16 bf16 fp32 fp64 fp8e5 fp8e4nv.
const char *dtypeName(DType type);

/// Parses a Triton spelling; also accepts MLIR's (f16, f32, i32, f8E5M2...).
std::optional<DType> parseDType(const std::string &name);

bool isFloat(DType type);

/// Number of bits of an integer type (i1 has 1).
unsigned integerWidth(DType type);

/// Reads element `index` of a buffer of `type` as a double (integers are
/// sign-extended; i64 beyond 2^53 loses precision).
double loadAsDouble(const void *data, DType type, size_t index);

/// Writes `value` into element `index`, rounding floats to nearest even and
/// wrapping integers to their width (fractions truncate toward zero).
void storeFromDouble(void *data, DType type, size_t index, double value);

} // namespace tile::rt

#endif // TILE_RUNTIME_DTYPE_H
