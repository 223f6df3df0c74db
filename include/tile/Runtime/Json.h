//===- Json.h - A small JSON reader -----------------------------*- C++ -*-===//
//
// Enough JSON for kernel metadata files: objects (keys kept in file order),
// arrays, strings with escapes, numbers, booleans and null. Hand-written so
// that the runner needs no library beyond the C++ standard library.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_JSON_H
#define TILE_RUNTIME_JSON_H

#include "tile/Runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tile::rt {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  JsonValue() = default;
  static JsonValue makeBool(bool value);
  static JsonValue makeNumber(double value, bool isInteger, int64_t integer);
  static JsonValue makeString(std::string value);
  static JsonValue makeArray(std::vector<JsonValue> elements);
  static JsonValue
  makeObject(std::vector<std::pair<std::string, JsonValue>> members);

  Kind kind() const { return valueKind; }
  bool isNull() const { return valueKind == Kind::Null; }
  bool isBool() const { return valueKind == Kind::Bool; }
  bool isNumber() const { return valueKind == Kind::Number; }
  /// A number written without fraction or exponent that fits in int64.
  bool isInteger() const { return valueKind == Kind::Number && integral; }
  bool isString() const { return valueKind == Kind::String; }
  bool isArray() const { return valueKind == Kind::Array; }
  bool isObject() const { return valueKind == Kind::Object; }

  bool getBool() const { return boolValue; }
  double getNumber() const { return number; }
  int64_t getInteger() const { return integer; }
  const std::string &getString() const { return string; }
  const std::vector<JsonValue> &getArray() const { return elements; }
  const std::vector<std::pair<std::string, JsonValue>> &getObject() const {
    return members;
  }

  /// The member named `key` of an object, or nullptr.
  const JsonValue *get(const std::string &key) const;

  /// Compact JSON text of this value.
  std::string toString() const;

private:
  Kind valueKind = Kind::Null;
  bool boolValue = false;
  bool integral = false;
  double number = 0;
  int64_t integer = 0;
  std::string string;
  std::vector<JsonValue> elements;
  std::vector<std::pair<std::string, JsonValue>> members;
};

/// Parses a whole JSON document; errors name the line and column.
Status parseJson(const std::string &text, JsonValue *result);

} // namespace tile::rt

#endif // TILE_RUNTIME_JSON_H
