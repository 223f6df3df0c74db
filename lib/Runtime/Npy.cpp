//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//

#include "tile/Runtime/Npy.h"

#include "tile/Runtime/FloatFormats.h"
#include <cstdint>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

using namespace tile::rt;

Status tile::rt::readFile(const std::string &path, std::string *contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot open '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *contents = buffer.str();
  return Status::success();
}

namespace {
const char kMagic[] = "\x93NUMPY";

/// The DType a NumPy type string names, if Tile has it.
std::optional<DType> dtypeOfDescr(const std::string &descr) {
  std::string kind = descr.substr(1);
  if (kind == "b1")
    return DType::I1;
  if (kind == "i1")
    return DType::I8;
  if (kind == "i2")
    return DType::I16;
  if (kind == "i4")
    return DType::I32;
  if (kind == "i8")
    return DType::I64;
  if (kind == "f2")
    return DType::F16;
  if (kind == "f4")
    return DType::F32;
  if (kind == "f8")
    return DType::F64;
  return std::nullopt;
}

const char *descrOf(DType type) {
  switch (type) {
  case DType::I1:
    return "|b1";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::F16:
    return "<f2";
  case DType::F64:
    return "<f8";
  default: // F32, and bf16/fp8, which NumPy lacks, are written as float32.
    return "<f4";
  }
}

/// Reads the Python dict literal of a .npy header.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  Status parse(NpyFile *file) {
    bool sawDescr = false, sawShape = false, fortran = false;
    skip();
    if (!eat('{'))
      return Status::error("header is not a dict");
    while (true) {
      skip();
      if (eat('}'))
        break;
      std::string key;
      TILE_RETURN_IF_ERROR(parseQuoted(&key));
      skip();
      if (!eat(':'))
        return Status::error("expected ':' in header");
      skip();
      if (key == "descr") {
        TILE_RETURN_IF_ERROR(parseQuoted(&file->descr));
        sawDescr = true;
      } else if (key == "fortran_order") {
        if (text.compare(pos, 4, "True") == 0) {
          fortran = true;
          pos += 4;
        } else if (text.compare(pos, 5, "False") == 0) {
          pos += 5;
        } else {
          return Status::error("fortran_order is neither True nor False");
        }
      } else if (key == "shape") {
        TILE_RETURN_IF_ERROR(parseShape(&file->shape));
        sawShape = true;
      } else {
        return Status::error("unknown header key '" + key + "'");
      }
      skip();
      if (eat(','))
        continue;
      if (eat('}'))
        break;
      return Status::error("expected ',' or '}' in header");
    }
    if (!sawDescr || !sawShape)
      return Status::error("header lacks 'descr' or 'shape'");
    if (fortran)
      return Status::error("Fortran-order arrays are not supported (save "
                           "with numpy.ascontiguousarray)");
    return Status::success();
  }

private:
  void skip() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n'))
      ++pos;
  }
  bool eat(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  Status parseQuoted(std::string *out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return Status::error("expected a quoted string in header");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return Status::error("unterminated string in header");
    *out = text.substr(pos, end - pos);
    pos = end + 1;
    return Status::success();
  }
  Status parseShape(std::vector<int64_t> *shape) {
    if (!eat('('))
      return Status::error("shape is not a tuple");
    while (true) {
      skip();
      if (eat(')'))
        return Status::success();
      size_t start = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      if (start == pos || pos - start > 15)
        return Status::error("bad dimension in shape");
      shape->push_back(std::stoll(text.substr(start, pos - start)));
      skip();
      if (pos < text.size() && text[pos] == 'L') // Python 2 longs
        ++pos;
      skip();
      if (eat(','))
        continue;
      if (eat(')'))
        return Status::success();
      return Status::error("expected ',' or ')' in shape");
    }
  }

  const std::string &text;
  size_t pos = 0;
};

size_t itemSizeOf(const std::string &descr) {
  size_t digits = descr.find_first_of("0123456789");
  if (digits == std::string::npos)
    return 0;
  return static_cast<size_t>(std::atoi(descr.c_str() + digits));
}
} // namespace

Status tile::rt::parseNpy(const std::string &bytes, NpyFile *result) {
  *result = NpyFile();
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    return Status::error("not a .npy file (bad magic)");
  auto major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   static_cast<unsigned char>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return Status::error("truncated .npy header");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength =
          headerLength << 8 | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return Status::error("unsupported .npy version " + std::to_string(major));
  }
  if (headerStart + headerLength > bytes.size())
    return Status::error("truncated .npy header");
  std::string header = bytes.substr(headerStart, headerLength);
  TILE_RETURN_IF_ERROR(
      HeaderParser(header).parse(result).withContext("malformed .npy header"));
  const std::string &descr = result->descr;
  if (descr.size() < 3)
    return Status::error("malformed .npy type '" + descr + "'");
  size_t itemSize = itemSizeOf(descr);
  if (descr[0] == '>' && itemSize > 1)
    return Status::error("big-endian .npy data ('" + descr +
                         "') is not supported");
  bool known = dtypeOfDescr(descr).has_value() || descr.substr(1) == "u1" ||
               descr.substr(1) == "u2";
  if (!known)
    return Status::error(".npy element type '" + descr +
                         "' is not supported (use bool, int8/16/32/64, "
                         "float16/32/64, or uint8/uint16 raw bits)");
  // The shape's product, checked before it can wrap: a header promising
  // more elements than any file holds is refused, not wrapped to a size
  // that matches the data.
  size_t count = 1;
  for (int64_t dim : result->shape)
    if (dim != 0 && count > SIZE_MAX / itemSize / static_cast<size_t>(dim))
      return Status::error(
          ".npy shape promises more elements than memory holds");
    else
      count *= static_cast<size_t>(dim);
  size_t dataStart = headerStart + headerLength;
  size_t expected = count * itemSize;
  if (bytes.size() - dataStart != expected)
    return Status::error(
        ".npy data holds " + std::to_string(bytes.size() - dataStart) +
        " bytes, its header promises " + std::to_string(expected));
  result->data.assign(bytes.begin() + dataStart, bytes.end());
  return Status::success();
}

Status tile::rt::readNpy(const std::string &path, NpyFile *result) {
  std::string bytes;
  TILE_RETURN_IF_ERROR(readFile(path, &bytes));
  return parseNpy(bytes, result).withContext("reading '" + path + "'");
}

Status tile::rt::npyToHostArray(const NpyFile &file, DType target,
                                HostArray *result) {
  std::string kind = file.descr.substr(1);
  *result = HostArray(target, file.shape);
  std::optional<DType> source = dtypeOfDescr(file.descr);
  if (source && *source == target) {
    std::memcpy(result->data(), file.data.data(), file.data.size());
    return Status::success();
  }
  bool narrowFloat = target == DType::BF16 || target == DType::F8E5M2 ||
                     target == DType::F8E4M3FN;
  bool rawBits =
      (target == DType::BF16 && kind == "u2") ||
      ((target == DType::F8E5M2 || target == DType::F8E4M3FN) && kind == "u1");
  if (rawBits) {
    std::memcpy(result->data(), file.data.data(), file.data.size());
    return Status::success();
  }
  if (narrowFloat && source && isFloat(*source)) {
    for (size_t i = 0; i < result->size(); ++i)
      result->set(i, loadAsDouble(file.data.data(), *source, i));
    return Status::success();
  }
  std::string held = source ? dtypeName(*source) : file.descr;
  return Status::error("the file holds " + held + " ('" + file.descr +
                       "') elements but the parameter needs " +
                       dtypeName(target));
}

std::string tile::rt::serializeNpy(const HostArray &array) {
  std::string shape = "(";
  for (int64_t dim : array.shape())
    shape += std::to_string(dim) + ", ";
  if (array.shape().size() > 1)
    shape.resize(shape.size() - 2);
  else if (array.shape().size() == 1)
    shape.resize(shape.size() - 1); // "(5,)"
  shape += ")";
  std::string header = std::string("{'descr': '") + descrOf(array.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  DType type = array.dtype();
  if (type == DType::BF16 || type == DType::F8E5M2 || type == DType::F8E4M3FN) {
    for (size_t i = 0; i < array.size(); ++i) {
      float value = static_cast<float>(array.get(i));
      out.append(reinterpret_cast<const char *>(&value), sizeof value);
    }
  } else {
    out.append(static_cast<const char *>(array.data()), array.sizeInBytes());
  }
  return out;
}

Status tile::rt::writeNpy(const std::string &path, const HostArray &array) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return Status::error("cannot write '" + path + "'");
  std::string bytes = serializeNpy(array);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    return Status::error("error writing '" + path + "'");
  return Status::success();
}
