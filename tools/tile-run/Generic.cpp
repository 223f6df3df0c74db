//===- Generic.cpp - tile-run run and tile-run list -----------------------===//
//
// `tile-run run` launches any compiled kernel: scalars from the command line,
// buffers from .npy files (or generated), results written back to .npy files
// or printed, so that a user can run a kernel of their own without C++.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Session.h"

#include "tile/Runtime/Npy.h"
#include "tile/Runtime/Reference.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

using namespace tile;
using namespace tile::run;

namespace {

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

rt::Status parseShape(const std::string &text, std::vector<int64_t> *shape) {
  shape->clear();
  size_t start = 0;
  while (true) {
    size_t end = text.find('x', start);
    std::string piece = text.substr(start, end - start);
    int64_t dim;
    if (!parseInteger(piece, &dim) || dim < 1 || dim > (int64_t(1) << 31))
      return rt::Status::error("bad shape '" + text +
                               "' (write dimensions like 4x100)");
    shape->push_back(dim);
    if (end == std::string::npos)
      return rt::Status::success();
    start = end + 1;
  }
}

/// A buffer argument: FILE.npy, zeros:SHAPE, iota:SHAPE, rand:SHAPE or
/// full:VALUE:SHAPE, as an array of the parameter's element type.
rt::Status makeBufferArgument(const rt::ParamInfo &param,
                              const std::string &spec, uint64_t seed,
                              rt::HostArray *array) {
  std::string context = "argument " + param.name + "=" + spec;
  size_t colon = spec.find(':');
  std::string kind = colon == std::string::npos ? "" : spec.substr(0, colon);
  if (kind == "zeros" || kind == "iota" || kind == "rand" || kind == "full") {
    std::string rest = spec.substr(colon + 1);
    double value = 0;
    if (kind == "full") {
      size_t second = rest.find(':');
      if (second == std::string::npos ||
          !parseFloat(rest.substr(0, second), &value))
        return rt::Status::error(context + ": write full:VALUE:SHAPE");
      rest = rest.substr(second + 1);
    }
    std::vector<int64_t> shape;
    TILE_RETURN_IF_ERROR(parseShape(rest, &shape).withContext(context));
    *array = rt::HostArray(param.dtype, shape);
    rt::Random random(seed);
    for (size_t i = 0; i < array->size(); ++i) {
      if (kind == "iota")
        array->set(i, static_cast<double>(i));
      else if (kind == "rand")
        array->set(i, 2 * random.uniform() - 1);
      else if (kind == "full")
        array->set(i, value);
    }
    return rt::Status::success();
  }
  if (!endsWith(spec, ".npy"))
    return rt::Status::error(context + ": a pointer parameter takes a .npy "
                                       "file, zeros:SHAPE, iota:SHAPE, "
                                       "rand:SHAPE or full:VALUE:SHAPE");
  rt::NpyFile file;
  TILE_RETURN_IF_ERROR(rt::readNpy(spec, &file).withContext(context));
  return rt::npyToHostArray(file, param.dtype, array)
      .withContext(context + " (parameter " + param.name + " is " +
                   param.typeString() + ")");
}

rt::Status makeScalarArgument(const rt::ParamInfo &param,
                              const std::string &text, rt::LaunchArg *arg) {
  std::string context =
      "argument " + param.name + "=" + text + " (" + param.typeString() + ")";
  if (rt::isFloat(param.dtype)) {
    double value;
    if (!parseFloat(text, &value))
      return rt::Status::error(context + ": not a number");
    *arg = rt::LaunchArg::floating(value, param.dtype);
    return rt::Status::success();
  }
  int64_t value;
  if (text == "true" || text == "false")
    value = text == "true";
  else if (!parseInteger(text, &value))
    return rt::Status::error(context + ": not an integer");
  // Integers are signed, as in Triton: a value must fit without wrapping.
  unsigned width = rt::integerWidth(param.dtype);
  if (width < 64) {
    int64_t low = -(int64_t(1) << (width - 1)),
            high = (int64_t(1) << (width - 1)) - 1;
    if (width == 1) {
      low = 0;
      high = 1;
    }
    if (value < low || value > high)
      return rt::Status::error(context + ": out of range for " +
                               rt::dtypeName(param.dtype));
  }
  *arg = rt::LaunchArg::integer(value, param.dtype);
  return rt::Status::success();
}

void printArray(const std::string &name, const rt::HostArray &array) {
  std::printf("%s (%s, %s):\n", name.c_str(), rt::dtypeName(array.dtype()),
              array.shapeString().c_str());
  size_t row = array.shape().empty() ? 1 : array.shape().back();
  for (size_t i = 0; i < array.size(); ++i) {
    std::printf("%s%.8g", i % row == 0 ? "  " : " ", array.get(i));
    if ((i + 1) % row == 0 || i + 1 == array.size())
      std::printf("\n");
  }
}

rt::Status resolveKernel(const std::string &name, Session &session,
                         rt::KernelInfo *info) {
  if (endsWith(name, ".json"))
    return rt::loadKernelInfo(name, info);
  if (endsWith(name, ".mlir"))
    return rt::loadKernelInfo(name.substr(0, name.size() - 5) + ".json", info)
        .withContext("the metadata beside '" + name + "'");
  if (const rt::KernelInfo *found = session.bundle().findVariant(name)) {
    *info = *found;
    return rt::Status::success();
  }
  return rt::Status::error("unknown kernel '" + name +
                           "': no such variant in "
                           "the bundle '" +
                           session.bundle().directory() +
                           "' (`tile-run list` shows them), and not a .json "
                           "path");
}

} // namespace

rt::Status tile::run::runGeneric(const std::vector<std::string> &args,
                                 bool *passed) {
  std::vector<OptionSpec> specs = {
      {"grid", true,
       "launch grid X[,Y[,Z]] (default: from the kernel's launch spec)"},
      {"out", true,
       "NAME=FILE.npy: write buffer NAME after the run "
       "(repeatable)"},
      {"print", true, "NAME: print buffer NAME after the run (repeatable)"},
      {"help", false, "show this help"},
  };
  for (const OptionSpec &spec : commonOptions())
    if (std::string(spec.name) != "check")
      specs.push_back(spec);
  Options options;
  TILE_RETURN_IF_ERROR(options.parse(args, specs));
  if (options.has("help") || options.positional().empty()) {
    std::printf(
        "usage: tile-run run KERNEL [--grid X[,Y[,Z]]] [NAME=VALUE ...] "
        "[--out NAME=FILE.npy] [--print NAME]\n"
        "KERNEL is a variant of the bundle or a .json metadata file. Each "
        "parameter\nNAME gets a VALUE: a number for scalars; for pointers a "
        ".npy file, zeros:SHAPE,\niota:SHAPE, rand:SHAPE (uniform in [-1, 1)) "
        "or full:VALUE:SHAPE (SHAPE like 4x100).\n%s",
        describeOptions(specs).c_str());
    if (options.has("help"))
      return rt::Status::success();
    return rt::Status::error("tile-run run needs a KERNEL");
  }
  const std::string &kernelName = options.positional().front();
  bool needBundle =
      !endsWith(kernelName, ".json") && !endsWith(kernelName, ".mlir");
  // --grid, else the kernel's launch spec gives the grid (below).
  std::optional<rt::Grid> givenGrid;
  if (options.has("grid")) {
    int64_t dims[3] = {1, 1, 1};
    std::string text = options.get("grid");
    size_t start = 0;
    for (int axis = 0; axis < 3; ++axis) {
      size_t comma = text.find(',', start);
      if (!parseInteger(text.substr(start, comma - start), &dims[axis]))
        return rt::Status::error("bad --grid '" + text +
                                 "' (write X, X,Y or X,Y,Z)");
      if (comma == std::string::npos)
        break;
      if (axis == 2)
        return rt::Status::error("--grid has at most three dimensions");
      start = comma + 1;
    }
    givenGrid.emplace();
    TILE_RETURN_IF_ERROR(rt::makeGrid(dims[0], dims[1], dims[2], &*givenGrid));
  }
  int64_t seed;
  TILE_RETURN_IF_ERROR(options.getInt("seed", 0, 0, INT64_MAX, &seed));

  Session session;
  TILE_RETURN_IF_ERROR(session.open(options, needBundle));
  rt::KernelInfo info;
  TILE_RETURN_IF_ERROR(resolveKernel(kernelName, session, &info));

  // NAME=VALUE for every parameter.
  std::map<std::string, std::string> given;
  for (size_t i = 1; i < options.positional().size(); ++i) {
    const std::string &assignment = options.positional()[i];
    size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0)
      return rt::Status::error("expected NAME=VALUE, got '" + assignment + "'");
    std::string name = assignment.substr(0, equals);
    if (info.paramIndex(name) < 0)
      return rt::Status::error(info.name + " has no parameter '" + name +
                               "'; it takes " + info.signatureSummary());
    if (!given.emplace(name, assignment.substr(equals + 1)).second)
      return rt::Status::error("parameter '" + name + "' is given twice");
  }
  std::vector<rt::HostArray> arrays(info.params.size());
  std::vector<rt::ScopedBuffer> buffers(info.params.size());
  std::vector<rt::LaunchArg> launchArgs(info.params.size());
  for (size_t i = 0; i < info.params.size(); ++i) {
    const rt::ParamInfo &param = info.params[i];
    auto found = given.find(param.name);
    if (found == given.end())
      return rt::Status::error("no value for parameter '" + param.name + "' (" +
                               param.typeString() + "); " + info.name +
                               " takes " + info.signatureSummary());
    if (param.isPointer) {
      TILE_RETURN_IF_ERROR(
          makeBufferArgument(param, found->second,
                             static_cast<uint64_t>(seed) * 64 + i, &arrays[i]));
      TILE_RETURN_IF_ERROR(session.upload(arrays[i], param.name, &buffers[i]));
      launchArgs[i] = rt::LaunchArg::pointer(buffers[i].get(), param.dtype);
    } else {
      TILE_RETURN_IF_ERROR(
          makeScalarArgument(param, found->second, &launchArgs[i]));
    }
  }
  auto pointerParam = [&](const std::string &name, int *index) -> rt::Status {
    *index = info.paramIndex(name);
    if (*index < 0 || !info.params[*index].isPointer)
      return rt::Status::error("'" + name + "' is not a pointer parameter of " +
                               info.name);
    return rt::Status::success();
  };
  std::vector<std::pair<int, std::string>> outputs;
  for (const std::string &out : options.getAll("out")) {
    size_t equals = out.find('=');
    if (equals == std::string::npos)
      return rt::Status::error("--out needs NAME=FILE.npy, got '" + out + "'");
    int index;
    TILE_RETURN_IF_ERROR(pointerParam(out.substr(0, equals), &index));
    outputs.emplace_back(index, out.substr(equals + 1));
  }
  std::vector<int> printed;
  for (const std::string &name : options.getAll("print")) {
    int index;
    TILE_RETURN_IF_ERROR(pointerParam(name, &index));
    printed.push_back(index);
  }

  rt::Grid grid;
  if (givenGrid)
    grid = *givenGrid;
  else if (info.launch)
    TILE_RETURN_IF_ERROR(rt::computeGrid(
        info, launchArgs, session.backend().multiprocessorCount(), &grid));
  else
    return rt::Status::error("tile-run run needs --grid X[,Y[,Z]]: " +
                             info.name + " has no launch spec to compute it");
  std::printf("kernel %s grid %s\n", info.name.c_str(),
              grid.toString().c_str());
  // Buffers are the backend's handles (the interpreter's are no addresses);
  // they come from its allocator, aligned far beyond what kernels assume.
  TILE_RETURN_IF_ERROR(
      rt::checkArguments(info, launchArgs, rt::PointerKind::Handle));
  PreparedLaunch run{&info, launchArgs, grid};
  TILE_RETURN_IF_ERROR(session.launch(run));
  for (size_t i = 0; i < info.params.size(); ++i)
    if (info.params[i].isPointer)
      TILE_RETURN_IF_ERROR(session.download(buffers[i], &arrays[i]));
  for (const auto &[index, path] : outputs) {
    TILE_RETURN_IF_ERROR(rt::writeNpy(path, arrays[index]));
    std::printf("wrote %s (%s, %s)\n", path.c_str(),
                rt::dtypeName(arrays[index].dtype()),
                arrays[index].shapeString().c_str());
  }
  for (int index : printed)
    printArray(info.params[index].name, arrays[index]);
  if (options.has("bench")) {
    double milliseconds;
    TILE_RETURN_IF_ERROR(
        session.benchmark([&] { return session.launch(run); }, &milliseconds));
    std::printf("bench: %.3f ms\n", milliseconds);
  }
  *passed = true;
  return rt::Status::success();
}

rt::Status tile::run::runList(const std::vector<std::string> &args,
                              bool *passed) {
  std::vector<OptionSpec> specs = {
      {"bundle", true,
       "kernel bundle folder (default: ../kernels next to "
       "tile-run)"}};
  Options options;
  TILE_RETURN_IF_ERROR(options.parse(args, specs));
  rt::Bundle bundle;
  TILE_RETURN_IF_ERROR(rt::Bundle::open(
      options.get("bundle", rt::defaultBundleDirectory()), &bundle));
  for (const std::string &warning : bundle.warnings())
    std::fprintf(stderr, "tile-run: warning: skipping %s\n", warning.c_str());
  std::printf("%zu kernel variants in %s\n", bundle.kernels().size(),
              bundle.directory().c_str());
  for (const rt::KernelInfo &info : bundle.kernels()) {
    // When the runtimes choose the variant: up to its bound, or only by name.
    std::string choice =
        info.maxNCtx ? "  N<=" + std::to_string(*info.maxNCtx) : "";
    if (!info.candidateOf.empty())
      choice += "  (tuning candidate of " + info.candidateOf + ")";
    // Its family, and the target of its GPU code (none: the interpreter's).
    std::string family =
        info.kernel + (info.target.empty() ? "" : ", " + info.target);
    std::printf("%s  [%s]  %s  %s%s\n", info.name.c_str(), family.c_str(),
                info.signatureSummary().c_str(),
                info.constexprSummary().c_str(), choice.c_str());
  }
  *passed = true;
  return rt::Status::success();
}
