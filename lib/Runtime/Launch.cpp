//===- Launch.cpp - How a kernel is launched ------------------------------===//

#include "tile/Runtime/Launch.h"

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/TensorMap.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

using namespace tile::rt;

namespace {

/// Recursive descent over a grid expression, emitting postfix steps.
class GridParser {
public:
  explicit GridParser(const std::string &text) : text(text) {}

  Status parse(std::vector<std::string> *names) {
    TILE_RETURN_IF_ERROR(expression());
    skipSpaces();
    if (position != text.size())
      return fail("unexpected '" + text.substr(position, 1) + "'");
    *names = std::move(referenced);
    return Status::success();
  }

  std::vector<GridExpr::Step> steps;

private:
  using Kind = GridExpr::Step::Kind;

  Status fail(const std::string &why) const {
    return Status::error("grid expression '" + text + "': " + why);
  }
  void skipSpaces() {
    while (position < text.size() &&
           std::isspace(static_cast<unsigned char>(text[position])))
      ++position;
  }
  bool accept(char c) {
    skipSpaces();
    if (position < text.size() && text[position] == c) {
      ++position;
      return true;
    }
    return false;
  }
  Status expect(char c) {
    return accept(c) ? Status::success()
                     : fail(std::string("expected '") + c + "'");
  }
  Status expression() {
    TILE_RETURN_IF_ERROR(term());
    while (true) {
      if (accept('+')) {
        TILE_RETURN_IF_ERROR(term());
        steps.push_back({Kind::Add});
      } else if (accept('-')) {
        TILE_RETURN_IF_ERROR(term());
        steps.push_back({Kind::Sub});
      } else {
        return Status::success();
      }
    }
  }
  Status term() {
    TILE_RETURN_IF_ERROR(factor());
    while (accept('*')) {
      TILE_RETURN_IF_ERROR(factor());
      steps.push_back({Kind::Mul});
    }
    return Status::success();
  }
  Status factor() {
    skipSpaces();
    if (accept('(')) {
      TILE_RETURN_IF_ERROR(expression());
      return expect(')');
    }
    if (position >= text.size())
      return fail("ends where a value is expected");
    char c = text[position];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (position < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[position]))) {
        int digit = text[position++] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("a constant overflows int64");
        value = value * 10 + digit;
      }
      steps.push_back({Kind::Constant, value});
      return Status::success();
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_')
      return fail("unexpected '" + std::string(1, c) + "'");
    size_t start = position;
    while (position < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[position])) ||
            text[position] == '_'))
      ++position;
    std::string name = text.substr(start, position - start);
    if ((name == "cdiv" || name == "min" || name == "max") && accept('(')) {
      TILE_RETURN_IF_ERROR(expression());
      TILE_RETURN_IF_ERROR(expect(','));
      TILE_RETURN_IF_ERROR(expression());
      TILE_RETURN_IF_ERROR(expect(')'));
      steps.push_back({name == "cdiv"  ? Kind::CeilDiv
                       : name == "min" ? Kind::Min
                                       : Kind::Max});
      return Status::success();
    }
    if (std::find(referenced.begin(), referenced.end(), name) ==
        referenced.end())
      referenced.push_back(name);
    steps.push_back({Kind::Name, 0, name});
    return Status::success();
  }

  const std::string &text;
  size_t position = 0;
  std::vector<std::string> referenced;
};

/// The range of an integer parameter type.
std::pair<int64_t, int64_t> integerRange(DType type) {
  unsigned bits = integerWidth(type);
  if (bits == 1)
    return {0, 1};
  if (bits >= 64)
    return {std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::max()};
  return {-(int64_t(1) << (bits - 1)), (int64_t(1) << (bits - 1)) - 1};
}

std::string kindName(const LaunchArg &arg) {
  switch (arg.kind) {
  case LaunchArg::Kind::Buffer:
    return std::string("a pointer to ") + dtypeName(arg.dtype);
  case LaunchArg::Kind::Int:
    return "the integer " + std::to_string(arg.intValue);
  case LaunchArg::Kind::Float:
    return "the float " + std::to_string(arg.floatValue);
  }
  return "?";
}

/// The value of a name in a launch's expressions: the integer argument of
/// that parameter, else the integer constexpr.
GridExpr::Lookup argumentLookup(const KernelInfo &info,
                                const std::vector<LaunchArg> &args) {
  return [&info, &args](const std::string &name) -> std::optional<int64_t> {
    int index = info.paramIndex(name);
    if (index >= 0 && size_t(index) < args.size() &&
        args[index].kind == LaunchArg::Kind::Int)
      return args[index].intValue;
    return info.constexprInt(name);
  };
}

} // namespace

Status GridExpr::parse(const std::string &text, GridExpr *expr) {
  GridParser parser(text);
  std::vector<std::string> names;
  TILE_RETURN_IF_ERROR(parser.parse(&names));
  GridExpr parsed;
  parsed.source = text;
  parsed.referenced = std::move(names);
  parsed.program = std::move(parser.steps);
  *expr = std::move(parsed);
  return Status::success();
}

Status GridExpr::evaluate(const Lookup &lookup, int64_t *value) const {
  std::vector<int64_t> stack;
  auto fail = [&](const std::string &why) {
    return Status::error("grid expression '" + source + "': " + why);
  };
  for (const Step &step : program) {
    if (step.kind == Step::Kind::Constant) {
      stack.push_back(step.constant);
      continue;
    }
    if (step.kind == Step::Kind::Name) {
      std::optional<int64_t> named = lookup(step.name);
      if (!named)
        return fail("'" + step.name +
                    "' is no integer parameter or constexpr of the kernel");
      stack.push_back(*named);
      continue;
    }
    int64_t b = stack.back();
    stack.pop_back();
    int64_t a = stack.back(), result = 0;
    bool overflow = false;
    switch (step.kind) {
    case Step::Kind::Add:
      overflow = __builtin_add_overflow(a, b, &result);
      break;
    case Step::Kind::Sub:
      overflow = __builtin_sub_overflow(a, b, &result);
      break;
    case Step::Kind::Mul:
      overflow = __builtin_mul_overflow(a, b, &result);
      break;
    case Step::Kind::CeilDiv:
      if (b <= 0)
        return fail("cdiv by " + std::to_string(b));
      result = a / b + (a % b > 0);
      break;
    case Step::Kind::Min:
      result = std::min(a, b);
      break;
    case Step::Kind::Max:
      result = std::max(a, b);
      break;
    default:
      break;
    }
    if (overflow)
      return fail("overflows int64");
    stack.back() = result;
  }
  *value = stack.back();
  return Status::success();
}

Status tile::rt::parseLaunchSpec(const JsonValue &json, LaunchSpec *spec) {
  *spec = LaunchSpec();
  const JsonValue *grid = json.get("grid");
  if (!json.isObject() || !grid || !grid->isArray() ||
      grid->getArray().empty() || grid->getArray().size() > 3)
    return Status::error("'launch' needs a 'grid' of one to three expressions");
  for (const JsonValue &dimension : grid->getArray()) {
    if (!dimension.isString())
      return Status::error("'launch.grid' holds strings");
    GridExpr expr;
    TILE_RETURN_IF_ERROR(GridExpr::parse(dimension.getString(), &expr));
    spec->grid.push_back(std::move(expr));
  }
  if (const JsonValue *keys = json.get("keys")) {
    if (!keys->isArray())
      return Status::error("'launch.keys' is an array of constexpr names");
    for (const JsonValue &key : keys->getArray()) {
      if (!key.isString())
        return Status::error("'launch.keys' is an array of constexpr names");
      spec->keys.push_back(key.getString());
    }
  }
  if (const JsonValue *length = json.get("length")) {
    if (!length->isString())
      return Status::error("'launch.length' names an integer parameter");
    spec->length = length->getString();
  }
  return Status::success();
}

Status tile::rt::verifyLaunchSpec(const KernelInfo &info) {
  if (!info.launch)
    return Status::success();
  for (const GridExpr &dimension : info.launch->grid)
    for (const std::string &name : dimension.names())
      if (!info.isIntegerParam(name) && !info.constexprInt(name) &&
          name != kNumSMsName)
        return Status::error(
            "launch grid '" + dimension.text() + "': '" + name +
            "' is no integer parameter or constexpr of " + info.name);
  for (const std::string &key : info.launch->keys)
    if (!info.constexprValue(key))
      return Status::error("launch key '" + key + "' is no constexpr of " +
                           info.name);
  if (!info.launch->length.empty() && !info.isIntegerParam(info.launch->length))
    return Status::error("launch length '" + info.launch->length +
                         "' is no integer parameter of " + info.name);
  return Status::success();
}

Status tile::rt::makeGrid(int64_t x, int64_t y, int64_t z, Grid *grid) {
  const int64_t limits[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  const int64_t sizes[3] = {x, y, z};
  for (int axis = 0; axis < 3; ++axis)
    if (sizes[axis] < 1 || sizes[axis] > limits[axis])
      return Status::error(std::string("grid dimension ") + "xyz"[axis] +
                           " = " + std::to_string(sizes[axis]) +
                           " lies outside [1, " + std::to_string(limits[axis]) +
                           "]");
  grid->x = static_cast<uint32_t>(x);
  grid->y = static_cast<uint32_t>(y);
  grid->z = static_cast<uint32_t>(z);
  return Status::success();
}

Status tile::rt::bindArguments(
    const KernelInfo &info,
    const std::vector<std::pair<std::string, LaunchArg>> &named,
    std::vector<LaunchArg> *ordered) {
  std::vector<LaunchArg> bound(info.params.size());
  std::vector<bool> given(info.params.size(), false);
  for (const auto &[name, arg] : named) {
    int index = info.paramIndex(name);
    if (index < 0)
      return Status::error(info.name + " has no parameter '" + name +
                           "'; it takes " + info.signatureSummary());
    if (given[index])
      return Status::error("parameter '" + name + "' of " + info.name +
                           " is given twice");
    given[index] = true;
    bound[index] = arg;
  }
  for (size_t i = 0; i < given.size(); ++i)
    if (!given[i])
      return Status::error("no value for parameter '" + info.params[i].name +
                           "' (" + info.params[i].typeString() + "); " +
                           info.name + " takes " + info.signatureSummary());
  *ordered = std::move(bound);
  return Status::success();
}

Status tile::rt::checkArguments(const KernelInfo &info,
                                const std::vector<LaunchArg> &args,
                                PointerKind pointers) {
  if (args.size() != info.params.size())
    return Status::error(info.name + " takes " +
                         std::to_string(info.params.size()) + " arguments " +
                         info.signatureSummary() + ", not " +
                         std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &param = info.params[i];
    const LaunchArg &arg = args[i];
    // Built only for an error: this runs on every launch.
    auto where = [&] {
      return info.name + ": parameter " + param.name + " (" +
             param.typeString() + ")";
    };
    if (param.isPointer) {
      if (arg.kind != LaunchArg::Kind::Buffer || arg.dtype != param.dtype)
        return Status::error(where() + " is given " + kindName(arg));
      if (pointers == PointerKind::Address &&
          arg.buffer % uint64_t(param.divisibility) != 0)
        return Status::error(where() + " was compiled for " +
                             std::to_string(param.divisibility) +
                             "-byte aligned addresses, but it is given " +
                             std::to_string(arg.buffer));
      continue;
    }
    if (isFloat(param.dtype)) {
      if (arg.kind == LaunchArg::Kind::Buffer)
        return Status::error(where() + " is given " + kindName(arg));
      double value = arg.kind == LaunchArg::Kind::Int ? double(arg.intValue)
                                                      : arg.floatValue;
      if (param.dtype == DType::F32 && std::isfinite(value) &&
          std::fabs(value) > std::numeric_limits<float>::max())
        return Status::error(where() + " = " + std::to_string(value) +
                             " does not fit in fp32");
      continue;
    }
    if (arg.kind != LaunchArg::Kind::Int)
      return Status::error(where() + " is given " + kindName(arg));
    auto [low, high] = integerRange(param.dtype);
    if (arg.intValue < low || arg.intValue > high)
      return Status::error(where() + " = " + std::to_string(arg.intValue) +
                           " does not fit in " + param.typeString());
    if (arg.intValue % param.divisibility != 0)
      return Status::error(where() + " was compiled for multiples of " +
                           std::to_string(param.divisibility) + ", but it is " +
                           std::to_string(arg.intValue));
  }
  // The descriptors' rules hold of device addresses; a handle has no
  // alignment to check.
  if (pointers == PointerKind::Address)
    for (size_t i = 0; i < info.tensorMaps.size(); ++i) {
      TensorMapDesc desc;
      TILE_RETURN_IF_ERROR(computeTensorMapDesc(info, i, args, &desc));
    }
  return Status::success();
}

Status tile::rt::computeGrid(const KernelInfo &info,
                             const std::vector<LaunchArg> &args,
                             std::optional<int64_t> numSMs, Grid *grid) {
  if (!info.launch)
    return Status::error(info.name +
                         " has no launch spec: its metadata says no grid");
  GridExpr::Lookup arguments = argumentLookup(info, args);
  GridExpr::Lookup lookup =
      [&](const std::string &name) -> std::optional<int64_t> {
    if (std::optional<int64_t> value = arguments(name))
      return value;
    return name == kNumSMsName ? numSMs : std::nullopt;
  };
  int64_t sizes[3] = {1, 1, 1};
  for (size_t axis = 0; axis < info.launch->grid.size(); ++axis) {
    const GridExpr &dimension = info.launch->grid[axis];
    const std::vector<std::string> &names = dimension.names();
    if (!numSMs && !arguments(kNumSMsName) &&
        std::find(names.begin(), names.end(), kNumSMsName) != names.end())
      return Status::error("launching " + info.name + ": its grid '" +
                           dimension.text() + "' reads " + kNumSMsName +
                           ", the device's multiprocessor count, and this "
                           "launch names no device");
    TILE_RETURN_IF_ERROR(dimension.evaluate(lookup, &sizes[axis]));
  }
  Status made = makeGrid(sizes[0], sizes[1], sizes[2], grid);
  return made.ok() ? made : made.withContext("launching " + info.name);
}

Status tile::rt::computeTensorMapDesc(const KernelInfo &info, size_t index,
                                      const std::vector<LaunchArg> &args,
                                      TensorMapDesc *desc) {
  if (index >= info.tensorMaps.size())
    return Status::error(
        info.name + " has " + std::to_string(info.tensorMaps.size()) +
        " tensor maps, no tensor map " + std::to_string(index));
  const TensorMapSpec &spec = info.tensorMaps[index];
  std::string where = info.name + ": tensor map " + std::to_string(index);
  if (spec.base < 0 || size_t(spec.base) >= info.params.size())
    return Status::error(where + ": its base is no parameter");
  const ParamInfo &base = info.params[spec.base];
  where += " (base " + base.name + ")";
  auto fail = [&](const std::string &why) {
    return Status::error(where + ": " + why);
  };
  if (args.size() != info.params.size())
    return fail("the launch gives " + std::to_string(args.size()) +
                " arguments; " + info.name + " takes " +
                std::to_string(info.params.size()));
  if (args[spec.base].kind != LaunchArg::Kind::Buffer)
    return fail("the launch gives no pointer for " + base.name);
  GridExpr::Lookup lookup = argumentLookup(info, args);
  TensorMapDesc result;
  result.elementType = base.dtype;
  result.globalAddress = args[spec.base].buffer;
  int64_t elementBytes = int64_t(dtypeSize(base.dtype));
  for (size_t i = 0; i < spec.strides.size(); ++i) {
    std::string which = "the stride of dim " + std::to_string(i + 1);
    int64_t stride = 0, bytes = 0;
    TILE_RETURN_IF_ERROR(spec.strides[i]
                             .evaluate(lookup, &stride)
                             .withContext(where + ": " + which));
    if (stride < 0)
      return fail(which + " '" + spec.strides[i].text() + "' is " +
                  std::to_string(stride) + " elements, negative");
    if (__builtin_mul_overflow(stride, elementBytes, &bytes))
      return fail(which + " '" + spec.strides[i].text() + "' is " +
                  std::to_string(stride) + " elements: in bytes it " +
                  "overflows int64");
    result.globalStrides.push_back(uint64_t(bytes));
  }
  // Extents after strides: an extent may divide by a stride, whose own
  // error names the problem better.
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    int64_t extent = 0;
    TILE_RETURN_IF_ERROR(
        spec.dims[i]
            .evaluate(lookup, &extent)
            .withContext(where + ": dim " + std::to_string(i)));
    if (extent < 1)
      return fail("dim " + std::to_string(i) + " '" + spec.dims[i].text() +
                  "' is " + std::to_string(extent) +
                  "; a tensor has at least one element along each dim");
    result.globalDims.push_back(uint64_t(extent));
  }
  result.boxDims = spec.box;
  result.elementStrides.assign(spec.dims.size(), 1);
  result.swizzle = spec.swizzle;
  result.l2Promotion = TensorMapL2Promotion::Bytes128;
  result.oobFill = TensorMapOobFill::Zero;
  TILE_RETURN_IF_ERROR(validateTensorMap(result).withContext(where));
  *desc = std::move(result);
  return Status::success();
}
