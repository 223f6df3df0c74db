//===- DType.cpp - Element types of kernel buffers ------------------------===//

#include "tile/Runtime/DType.h"
#include "tile/Runtime/FloatFormats.h"

#include <cmath>
#include <cstring>

using namespace tile::rt;

size_t tile::rt::dtypeSize(DType type) {
  switch (type) {
  case DType::I1:
  case DType::I8:
  case DType::F8E5M2:
  case DType::F8E4M3FN:
    return 1;
  case DType::I16:
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I32:
  case DType::F32:
    return 4;
  case DType::I64:
  case DType::F64:
    return 8;
  }
  return 0;
}

const char *tile::rt::dtypeName(DType type) {
  switch (type) {
  case DType::I1:
    return "i1";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F16:
    return "fp16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "fp32";
  case DType::F64:
    return "fp64";
  case DType::F8E5M2:
    return "fp8e5";
  case DType::F8E4M3FN:
    return "fp8e4nv";
  }
  return "?";
}

std::optional<DType> tile::rt::parseDType(const std::string &name) {
  static const struct {
    const char *spelling;
    DType type;
  } table[] = {
      {"i1", DType::I1},
      {"int1", DType::I1},
      {"i8", DType::I8},
      {"int8", DType::I8},
      {"i16", DType::I16},
      {"int16", DType::I16},
      {"i32", DType::I32},
      {"int32", DType::I32},
      {"i64", DType::I64},
      {"int64", DType::I64},
      // Unsigned integers: the same storage, read by the kernel's own ops.
      {"u8", DType::I8},
      {"uint8", DType::I8},
      {"u16", DType::I16},
      {"uint16", DType::I16},
      {"u32", DType::I32},
      {"uint32", DType::I32},
      {"u64", DType::I64},
      {"uint64", DType::I64},
      {"fp16", DType::F16},
      {"f16", DType::F16},
      {"float16", DType::F16},
      {"bf16", DType::BF16},
      {"bfloat16", DType::BF16},
      {"fp32", DType::F32},
      {"f32", DType::F32},
      {"float32", DType::F32},
      {"fp64", DType::F64},
      {"f64", DType::F64},
      {"float64", DType::F64},
      {"fp8e5", DType::F8E5M2},
      {"f8E5M2", DType::F8E5M2},
      {"float8e5", DType::F8E5M2},
      {"fp8e4nv", DType::F8E4M3FN},
      {"f8E4M3FN", DType::F8E4M3FN},
      {"float8e4nv", DType::F8E4M3FN},
  };
  for (const auto &entry : table)
    if (name == entry.spelling)
      return entry.type;
  return std::nullopt;
}

bool tile::rt::isFloat(DType type) {
  switch (type) {
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64:
  case DType::F8E5M2:
  case DType::F8E4M3FN:
    return true;
  default:
    return false;
  }
}

unsigned tile::rt::integerWidth(DType type) {
  return type == DType::I1 ? 1 : 8 * dtypeSize(type);
}

double tile::rt::loadAsDouble(const void *data, DType type, size_t index) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  const unsigned char *at = bytes + index * dtypeSize(type);
  switch (type) {
  case DType::I1:
    return *at ? 1.0 : 0.0;
  case DType::I8:
    return static_cast<int8_t>(*at);
  case DType::I16: {
    int16_t v;
    std::memcpy(&v, at, 2);
    return v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, at, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, at, 8);
    return static_cast<double>(v);
  }
  case DType::F32: {
    float v;
    std::memcpy(&v, at, 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, at, 8);
    return v;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    return decodeFloat(type, bits);
  }
  case DType::F8E5M2:
  case DType::F8E4M3FN:
    return decodeFloat(type, *at);
  }
  return 0;
}

void tile::rt::storeFromDouble(void *data, DType type, size_t index,
                               double value) {
  auto *at = static_cast<unsigned char *>(data) + index * dtypeSize(type);
  if (isFloat(type)) {
    uint64_t bits = encodeFloat(type, value);
    std::memcpy(at, &bits, dtypeSize(type)); // little endian: low bytes first
    return;
  }
  if (type == DType::I1) {
    *at = value != 0 ? 1 : 0;
    return;
  }
  // Truncate toward zero, saturate to i64, then wrap to the width.
  int64_t wide;
  if (std::isnan(value))
    wide = 0;
  else if (value >= 9.2233720368547758e18)
    wide = INT64_MAX;
  else if (value <= -9.2233720368547758e18)
    wide = INT64_MIN;
  else
    wide = static_cast<int64_t>(value);
  std::memcpy(at, &wide, dtypeSize(type));
}
