//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The .npy format (versions 1.0 to 3.0, little endian, C order) for the
// buffers of the generic `tile-run run` mode. NumPy has no bf16 or fp8
// types: buffers of those types are written as float32 (exactly), and read
// from float files (rounded to nearest even) or from raw bits (uint16 for
// bf16, uint8 for fp8).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_NPY_H
#define TILE_RUNTIME_NPY_H

#include "tile/Runtime/HostArray.h"
#include "tile/Runtime/Status.h"

#include <string>
#include <vector>

namespace tile::rt {

/// The contents of a .npy file as stored.
struct NpyFile {
  std::string descr; ///< NumPy type string, e.g. "<f4", "|b1".
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;
};

/// Parses the bytes of a .npy file.
Status parseNpy(const std::string &bytes, NpyFile *result);
Status readNpy(const std::string &path, NpyFile *result);

/// Converts the file's elements to `target` (see the file comment for the
/// conversions allowed); anything else is an error naming both types.
Status npyToHostArray(const NpyFile &file, DType target, HostArray *result);

/// The .npy bytes of an array (bf16 and fp8 become float32).
std::string serializeNpy(const HostArray &array);
Status writeNpy(const std::string &path, const HostArray &array);

/// Reads a whole file; a clear error when it is missing.
Status readFile(const std::string &path, std::string *contents);

} // namespace tile::rt

#endif // TILE_RUNTIME_NPY_H
