//===- Json.cpp - A small JSON reader -------------------------------------===//

#include "tile/Runtime/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace tile::rt;

JsonValue JsonValue::makeBool(bool value) {
  JsonValue result;
  result.valueKind = Kind::Bool;
  result.boolValue = value;
  return result;
}

JsonValue JsonValue::makeNumber(double value, bool isInteger, int64_t integer) {
  JsonValue result;
  result.valueKind = Kind::Number;
  result.number = value;
  result.integral = isInteger;
  result.integer = integer;
  return result;
}

JsonValue JsonValue::makeString(std::string value) {
  JsonValue result;
  result.valueKind = Kind::String;
  result.string = std::move(value);
  return result;
}

JsonValue JsonValue::makeArray(std::vector<JsonValue> elements) {
  JsonValue result;
  result.valueKind = Kind::Array;
  result.elements = std::move(elements);
  return result;
}

JsonValue
JsonValue::makeObject(std::vector<std::pair<std::string, JsonValue>> members) {
  JsonValue result;
  result.valueKind = Kind::Object;
  result.members = std::move(members);
  return result;
}

const JsonValue *JsonValue::get(const std::string &key) const {
  for (const auto &member : members)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

static void appendQuoted(std::string &out, const std::string &text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
        out += buffer;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

std::string JsonValue::toString() const {
  switch (valueKind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return boolValue ? "true" : "false";
  case Kind::Number: {
    if (integral)
      return std::to_string(integer);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", number);
    return buffer;
  }
  case Kind::String: {
    std::string out;
    appendQuoted(out, string);
    return out;
  }
  case Kind::Array: {
    std::string out = "[";
    for (size_t i = 0; i < elements.size(); ++i)
      out += (i ? "," : "") + elements[i].toString();
    return out + "]";
  }
  case Kind::Object: {
    std::string out = "{";
    for (size_t i = 0; i < members.size(); ++i) {
      if (i)
        out += ",";
      appendQuoted(out, members[i].first);
      out += ":" + members[i].second.toString();
    }
    return out + "}";
  }
  }
  return "";
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  Status parseDocument(JsonValue *result) {
    TILE_RETURN_IF_ERROR(parseValue(result, 0));
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value");
    return Status::success();
  }

private:
  static constexpr int kMaxDepth = 256;

  Status fail(const std::string &what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Status::error("JSON line " + std::to_string(line) + ", column " +
                         std::to_string(column) + ": " + what);
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consumeWord(const char *word) {
    size_t length = std::char_traits<char>::length(word);
    if (text.compare(pos, length, word) != 0)
      return false;
    pos += length;
    return true;
  }

  Status parseValue(JsonValue *result, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end of input");
    char c = text[pos];
    if (c == '{')
      return parseObject(result, depth);
    if (c == '[')
      return parseArray(result, depth);
    if (c == '"') {
      std::string value;
      TILE_RETURN_IF_ERROR(parseString(&value));
      *result = JsonValue::makeString(std::move(value));
      return Status::success();
    }
    if (consumeWord("true")) {
      *result = JsonValue::makeBool(true);
      return Status::success();
    }
    if (consumeWord("false")) {
      *result = JsonValue::makeBool(false);
      return Status::success();
    }
    if (consumeWord("null")) {
      *result = JsonValue();
      return Status::success();
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(result);
    return fail(std::string("unexpected character '") + c + "'");
  }

  Status parseNumber(JsonValue *result) {
    size_t start = pos;
    if (text[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t first = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - first;
    };
    if (digits() == 0)
      return fail("a number needs digits");
    bool integral = true;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      integral = false;
      if (digits() == 0)
        return fail("a number needs digits after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      integral = false;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return fail("a number needs digits in its exponent");
    }
    std::string spelling = text.substr(start, pos - start);
    double value = std::strtod(spelling.c_str(), nullptr);
    int64_t integer = 0;
    if (integral) {
      errno = 0;
      long long parsed = std::strtoll(spelling.c_str(), nullptr, 10);
      if (errno == ERANGE)
        integral = false;
      else
        integer = parsed;
    }
    *result = JsonValue::makeNumber(value, integral, integer);
    return Status::success();
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  Status parseHex4(uint32_t *code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      *code <<= 4;
      if (c >= '0' && c <= '9')
        *code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        *code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        *code |= c - 'A' + 10;
      else
        return fail("bad hex digit in \\u escape");
    }
    return Status::success();
  }

  Status parseString(std::string *out) {
    ++pos; // opening quote
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return Status::success();
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated escape");
      char escape = text[pos++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        *out += escape;
        break;
      case 'b':
        *out += '\b';
        break;
      case 'f':
        *out += '\f';
        break;
      case 'n':
        *out += '\n';
        break;
      case 'r':
        *out += '\r';
        break;
      case 't':
        *out += '\t';
        break;
      case 'u': {
        uint32_t code = 0;
        TILE_RETURN_IF_ERROR(parseHex4(&code));
        if (code >= 0xD800 && code < 0xDC00 &&
            text.compare(pos, 2, "\\u") == 0) {
          pos += 2;
          uint32_t low = 0;
          TILE_RETURN_IF_ERROR(parseHex4(&low));
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(*out, code);
        break;
      }
      default:
        return fail(std::string("unknown escape '\\") + escape + "'");
      }
    }
  }

  Status parseArray(JsonValue *result, int depth) {
    ++pos; // '['
    std::vector<JsonValue> elements;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      *result = JsonValue::makeArray({});
      return Status::success();
    }
    while (true) {
      JsonValue element;
      TILE_RETURN_IF_ERROR(parseValue(&element, depth + 1));
      elements.push_back(std::move(element));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        break;
      }
      return fail("expected ',' or ']' in array");
    }
    *result = JsonValue::makeArray(std::move(elements));
    return Status::success();
  }

  Status parseObject(JsonValue *result, int depth) {
    ++pos; // '{'
    std::vector<std::pair<std::string, JsonValue>> members;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      *result = JsonValue::makeObject({});
      return Status::success();
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key in object");
      std::string key;
      TILE_RETURN_IF_ERROR(parseString(&key));
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':' after object key");
      ++pos;
      JsonValue value;
      TILE_RETURN_IF_ERROR(parseValue(&value, depth + 1));
      members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        break;
      }
      return fail("expected ',' or '}' in object");
    }
    *result = JsonValue::makeObject(std::move(members));
    return Status::success();
  }

  const std::string &text;
  size_t pos = 0;
};
} // namespace

Status tile::rt::parseJson(const std::string &text, JsonValue *result) {
  return Parser(text).parseDocument(result);
}
