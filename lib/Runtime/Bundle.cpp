//===- Bundle.cpp - Compiled kernels and their metadata -------------------===//

#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/Npy.h"

#include <algorithm>
#include <cstdio>
#include <dirent.h>
#include <limits>
#include <unistd.h>

using namespace tile::rt;

std::string ParamInfo::typeString() const {
  return std::string(isPointer ? "*" : "") + dtypeName(dtype);
}

std::optional<ParamInfo> tile::rt::parseParamType(const std::string &type) {
  ParamInfo param;
  std::string element = type;
  if (!element.empty() && element[0] == '*') {
    param.isPointer = true;
    element = element.substr(1);
  }
  std::optional<DType> dtype = parseDType(element);
  if (!dtype)
    return std::nullopt;
  param.dtype = *dtype;
  return param;
}

std::string KernelInfo::companionPath(const std::string &extension) const {
  std::string path = metadataPath;
  size_t dot = path.rfind('.');
  size_t slash = path.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    path.resize(dot);
  return path + extension;
}

const JsonValue *KernelInfo::constexprValue(const std::string &name) const {
  for (const auto &entry : constexprs)
    if (entry.first == name)
      return &entry.second;
  return nullptr;
}

std::optional<int64_t> KernelInfo::constexprInt(const std::string &name) const {
  const JsonValue *value = constexprValue(name);
  if (!value)
    return std::nullopt;
  if (value->isBool())
    return value->getBool() ? 1 : 0;
  if (value->isInteger())
    return value->getInteger();
  return std::nullopt;
}

int KernelInfo::paramIndex(const std::string &paramName) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == paramName)
      return static_cast<int>(i);
  return -1;
}

bool KernelInfo::isIntegerParam(const std::string &paramName) const {
  int index = paramIndex(paramName);
  return index >= 0 && !params[index].isPointer &&
         !isFloat(params[index].dtype);
}

std::string KernelInfo::constexprSummary() const {
  std::string text;
  for (const auto &entry : constexprs)
    text +=
        (text.empty() ? "" : " ") + entry.first + "=" + entry.second.toString();
  return text;
}

std::string tile::rt::constexprsSymbol(const KernelInfo &info) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &entry : info.constexprs)
    entries.emplace_back(entry.first, entry.second.toString());
  std::sort(entries.begin(), entries.end());
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a's offset basis and prime
  auto mix = [&hash](const std::string &text, char end) {
    for (char c : text + end) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ull;
    }
  };
  for (const auto &entry : entries) {
    mix(entry.first, '\0');
    mix(entry.second, '\n');
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash));
  return std::string(kConstexprsMarker) + "_" + hex;
}

std::string KernelInfo::signatureSummary() const {
  std::string text = "(";
  for (size_t i = 0; i < params.size(); ++i)
    text += (i ? ", " : "") + params[i].name + ": " + params[i].typeString();
  return text + ")";
}

static Status requireString(const JsonValue &root, const char *key,
                            std::string *out) {
  const JsonValue *value = root.get(key);
  if (!value || !value->isString())
    return Status::error(std::string("metadata lacks the string '") + key +
                         "'");
  *out = value->getString();
  return Status::success();
}

/// Parses one "gpu.tensormaps" entry of `info`, whose params and constexprs
/// are read. Everything a launch's argument values cannot change is checked
/// here, so that a launch fails only on those.
static Status parseTensorMapSpec(const JsonValue &json, const KernelInfo &info,
                                 TensorMapSpec *spec) {
  if (!json.isObject())
    return Status::error("is not an object");
  const JsonValue *base = json.get("base");
  if (!base || !base->isString())
    return Status::error("lacks the string 'base'");
  spec->base = info.paramIndex(base->getString());
  if (spec->base < 0 || !info.params[spec->base].isPointer)
    return Status::error("base '" + base->getString() +
                         "' is no pointer parameter of " + info.name + " " +
                         info.signatureSummary());
  auto expressions = [&](const char *key, std::vector<GridExpr> *parsed) {
    const JsonValue *list = json.get(key);
    if (!list || !list->isArray())
      return Status::error(std::string("lacks the array '") + key +
                           "' of expressions");
    for (const JsonValue &text : list->getArray()) {
      std::string where =
          std::string(key) + "[" + std::to_string(parsed->size()) + "]";
      if (!text.isString())
        return Status::error(where + " is " + text.toString() +
                             ", not an expression string");
      GridExpr expr;
      TILE_RETURN_IF_ERROR(
          GridExpr::parse(text.getString(), &expr).withContext(where));
      for (const std::string &name : expr.names())
        if (!info.isIntegerParam(name) && !info.constexprInt(name))
          return Status::error(where + " '" + expr.text() + "': '" + name +
                               "' is no integer parameter or constexpr of " +
                               info.name);
      parsed->push_back(std::move(expr));
    }
    return Status::success();
  };
  TILE_RETURN_IF_ERROR(expressions("dims", &spec->dims));
  size_t rank = spec->dims.size();
  if (rank < 1 || rank > kTensorMapMaxRank)
    return Status::error("has " + std::to_string(rank) +
                         " dims; a tensor map has 1 to " +
                         std::to_string(kTensorMapMaxRank));
  TILE_RETURN_IF_ERROR(expressions("strides", &spec->strides));
  if (spec->strides.size() != rank - 1)
    return Status::error("has " + std::to_string(spec->strides.size()) +
                         " strides; " + std::to_string(rank) + " dims take " +
                         std::to_string(rank - 1) + " (of dims 1.." +
                         std::to_string(rank - 1) + ")");
  const JsonValue *box = json.get("box");
  if (!box || !box->isArray())
    return Status::error("lacks the array 'box'");
  if (box->getArray().size() != rank)
    return Status::error("has " + std::to_string(box->getArray().size()) +
                         " box dims; " + std::to_string(rank) + " dims take " +
                         std::to_string(rank));
  for (const JsonValue &size : box->getArray()) {
    if (!size.isInteger() || size.getInteger() < 1 ||
        size.getInteger() > kTensorMapMaxBoxDim)
      return Status::error("box[" + std::to_string(spec->box.size()) + "] is " +
                           size.toString() +
                           "; box dims are integers from 1 to " +
                           std::to_string(kTensorMapMaxBoxDim));
    spec->box.push_back(static_cast<uint32_t>(size.getInteger()));
  }
  const JsonValue *swizzle = json.get("swizzle");
  if (!swizzle || !swizzle->isInteger())
    return Status::error("lacks the integer 'swizzle'");
  int64_t span = swizzle->getInteger();
  if (span != 0 && span != 32 && span != 64 && span != 128)
    return Status::error("swizzle " + std::to_string(span) +
                         " is no swizzle span; the spans are 0 (none), 32, 64 "
                         "and 128 bytes");
  spec->swizzle = TensorMapSwizzle(span);
  // The rules that do not depend on the arguments (the element type, the
  // box against the swizzle span), checked now: placeholder extents and
  // strides that break none of the others.
  TensorMapDesc placeholder;
  placeholder.elementType = info.params[spec->base].dtype;
  placeholder.globalDims.assign(rank, 1);
  placeholder.globalStrides.assign(rank - 1, 16);
  placeholder.boxDims = spec->box;
  placeholder.swizzle = spec->swizzle;
  return validateTensorMap(placeholder);
}

Status tile::rt::parseKernelInfo(const std::string &text,
                                 const std::string &path, KernelInfo *info) {
  JsonValue root;
  TILE_RETURN_IF_ERROR(parseJson(text, &root));
  if (!root.isObject())
    return Status::error("metadata is not a JSON object");
  *info = KernelInfo();
  info->metadataPath = path;
  const JsonValue *schema = root.get("schema_version");
  if (!schema || !schema->isInteger() ||
      schema->getInteger() != kMetadataSchemaVersion)
    return Status::error(
        "metadata of schema_version " +
        (schema ? schema->toString() : std::string("(none)")) +
        ", but this runtime reads version " +
        std::to_string(kMetadataSchemaVersion) +
        ": compile the kernel again with this Tile's tile-compile");
  TILE_RETURN_IF_ERROR(requireString(root, "name", &info->name));
  TILE_RETURN_IF_ERROR(requireString(root, "kernel", &info->kernel));
  if (const JsonValue *entry = root.get("entry"); entry && entry->isString())
    info->entry = entry->getString();
  else
    info->entry = info->kernel;
  if (const JsonValue *source = root.get("source");
      source && source->isString())
    info->source = source->getString();
  if (const JsonValue *warps = root.get("num_warps")) {
    // What tile-compile accepts: a power of two from 1 to 32.
    if (!warps->isInteger() || warps->getInteger() < 1 ||
        warps->getInteger() > 32 ||
        (warps->getInteger() & (warps->getInteger() - 1)))
      return Status::error("'num_warps' is not a power of two from 1 to 32");
    info->numWarps = static_cast<int>(warps->getInteger());
  }
  if (const JsonValue *gpu = root.get("gpu"); gpu && gpu->isObject()) {
    if (const JsonValue *target = gpu->get("target")) {
      if (!target->isString() || !GpuTarget::parse(target->getString()))
        return Status::error("'gpu.target' is not a GPU architecture such as "
                             "\"sm_90a\" or \"sm_80\"");
      info->target = target->getString();
    }
    if (const JsonValue *threads = gpu->get("threads")) {
      if (!threads->isInteger() ||
          threads->getInteger() < 32 * info->numWarps ||
          threads->getInteger() > 1024 || threads->getInteger() % 32)
        return Status::error("'gpu.threads' is not a whole number of warps "
                             "from 32 * num_warps to 1024");
      info->threads = static_cast<int>(threads->getInteger());
    }
  }
  if (const JsonValue *maxNCtx = root.get("max_n_ctx")) {
    if (!maxNCtx->isInteger() || maxNCtx->getInteger() <= 0)
      return Status::error("'max_n_ctx' is not a positive integer");
    info->maxNCtx = maxNCtx->getInteger();
  }
  if (const JsonValue *tuning = root.get("tuning")) {
    const JsonValue *variant = tuning->get("variant");
    if (!tuning->isObject() || !variant || !variant->isString() ||
        variant->getString().empty())
      return Status::error("'tuning' needs the string 'variant' it tunes");
    info->candidateOf = variant->getString();
  }
  const JsonValue *params = root.get("params");
  if (!params || !params->isArray())
    return Status::error("metadata lacks the array 'params'");
  for (const JsonValue &param : params->getArray()) {
    const JsonValue *name = param.get("name");
    const JsonValue *type = param.get("type");
    if (!param.isObject() || !name || !name->isString() || !type ||
        !type->isString())
      return Status::error("each of 'params' needs a string 'name' and 'type'");
    std::optional<ParamInfo> parsed = parseParamType(type->getString());
    if (!parsed)
      return Status::error("parameter '" + name->getString() +
                           "' has the unknown type '" + type->getString() +
                           "'");
    parsed->name = name->getString();
    if (info->paramIndex(parsed->name) >= 0)
      return Status::error("two parameters are named '" + parsed->name +
                           "': arguments are bound by name");
    if (const JsonValue *divisibility = param.get("divisibility")) {
      int64_t d = divisibility->isInteger() ? divisibility->getInteger() : 0;
      if (d <= 0 || (d & (d - 1)))
        return Status::error("parameter '" + parsed->name +
                             "' has a divisibility that is not a power of two");
      parsed->divisibility = d;
    }
    info->params.push_back(*parsed);
  }
  if (const JsonValue *constexprs = root.get("constexprs")) {
    if (!constexprs->isObject())
      return Status::error("'constexprs' is not an object");
    info->constexprs = constexprs->getObject();
  }
  if (const JsonValue *launch = root.get("launch")) {
    LaunchSpec spec;
    TILE_RETURN_IF_ERROR(parseLaunchSpec(*launch, &spec));
    info->launch = std::move(spec);
    TILE_RETURN_IF_ERROR(verifyLaunchSpec(*info));
  }
  const JsonValue *gpu = root.get("gpu");
  if (const JsonValue *maps = gpu ? gpu->get("tensormaps") : nullptr) {
    if (!maps->isArray())
      return Status::error(info->name + ": 'gpu.tensormaps' is not an array");
    for (const JsonValue &map : maps->getArray()) {
      std::string where = info->name + ": tensor map " +
                          std::to_string(info->tensorMaps.size());
      if (const JsonValue *base = map.get("base"); base && base->isString())
        where += " (base " + base->getString() + ")";
      TensorMapSpec spec;
      TILE_RETURN_IF_ERROR(
          parseTensorMapSpec(map, *info, &spec).withContext(where));
      info->tensorMaps.push_back(std::move(spec));
    }
  }
  info->metadata = std::move(root);
  return Status::success();
}

Status tile::rt::loadKernelInfo(const std::string &path, KernelInfo *info) {
  std::string text;
  TILE_RETURN_IF_ERROR(readFile(path, &text));
  return parseKernelInfo(text, path, info).withContext(path);
}

Status Bundle::open(const std::string &directory, Bundle *bundle) {
  *bundle = Bundle();
  bundle->dir = directory;
  DIR *handle = opendir(directory.c_str());
  if (!handle)
    return Status::error("cannot open the kernel bundle '" + directory +
                         "' (build the kernels, or pass --bundle DIR)");
  std::vector<std::string> names;
  while (dirent *entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
      names.push_back(name);
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    KernelInfo info;
    Status status = loadKernelInfo(directory + "/" + name, &info);
    if (status.ok())
      bundle->all.push_back(std::move(info));
    else
      bundle->skipped.push_back(status.message());
  }
  return Status::success();
}

const KernelInfo *Bundle::findVariant(const std::string &name) const {
  for (const KernelInfo &info : all)
    if (info.name == name)
      return &info;
  return nullptr;
}

std::vector<const KernelInfo *>
Bundle::family(const std::string &kernel) const {
  std::vector<const KernelInfo *> result;
  for (const KernelInfo &info : all)
    if (info.kernel == kernel && info.candidateOf.empty())
      result.push_back(&info);
  return result;
}

/// "HEAD_DIM=128 CAUSAL=1 fp16": what selection sees of a variant.
static std::string
describeForSelection(const KernelInfo &info,
                     const std::vector<std::pair<std::string, int64_t>> &keys) {
  std::string text;
  for (const auto &key : keys) {
    std::optional<int64_t> value = info.constexprInt(key.first);
    text += key.first + "=" + (value ? std::to_string(*value) : "?") + " ";
  }
  for (const ParamInfo &param : info.params)
    if (param.isPointer)
      return text + dtypeName(param.dtype);
  return text + "(no pointer)";
}

Status Bundle::select(const std::string &family, const std::string &elementType,
                      const std::vector<std::pair<std::string, int64_t>> &keys,
                      std::optional<int64_t> length, const TargetChoice &target,
                      const KernelInfo **chosen) const {
  std::vector<const KernelInfo *> matching;
  std::vector<std::string> available, targets;
  for (const KernelInfo *info : this->family(family)) {
    bool matches = true;
    for (const auto &[name, value] : keys)
      matches = matches && info->constexprInt(name) == value;
    const ParamInfo *pointer = nullptr;
    for (const ParamInfo &param : info->params)
      if (param.isPointer && !pointer)
        pointer = &param;
    if (!elementType.empty())
      matches = matches && pointer && dtypeName(pointer->dtype) == elementType;
    if (matches && std::find(targets.begin(), targets.end(), info->target) ==
                       targets.end())
      targets.push_back(info->target);
    if (matches && target.admits(info->target))
      matching.push_back(info);
    std::string described = describeForSelection(*info, keys);
    if (std::find(available.begin(), available.end(), described) ==
        available.end())
      available.push_back(described);
  }
  // Only the preferred target's variants.
  int best = std::numeric_limits<int>::min();
  for (const KernelInfo *info : matching)
    best = std::max(best, target.rank(info->target));
  matching.erase(std::remove_if(matching.begin(), matching.end(),
                                [&](const KernelInfo *info) {
                                  return target.rank(info->target) != best;
                                }),
                 matching.end());
  // Without a length, the general variant (as for the longest sequence).
  if ((*chosen = pickForSequenceLength(
           matching, length.value_or(std::numeric_limits<int64_t>::max()))))
    return Status::success();
  std::string wanted;
  for (const auto &[name, value] : keys)
    wanted += name + "=" + std::to_string(value) + " ";
  wanted += elementType.empty() ? "(any type)" : elementType;
  if (!targets.empty()) {
    std::sort(targets.begin(), targets.end());
    std::string compiled;
    for (const std::string &each : targets)
      compiled += (compiled.empty() ? "" : ", ") +
                  (each.empty() ? std::string("the interpreter") : each);
    std::string device = target.device
                             ? "compute capability " +
                                   std::to_string(target.device->major) + "." +
                                   std::to_string(target.device->minor)
                             : "this device";
    return Status::error(
        "the bundle '" + dir + "' has " + family + " for " + wanted +
        " compiled for " + compiled + " only, which " +
        (target.required.empty()
             ? device + " cannot run"
             : "TILE_TARGET=" + target.required + " leaves out") +
        (!target.required.empty() ? ""
         : target.device && target.device->major < 8
             ? ": Tile's kernels need compute capability 8.0 or newer"
             : ": add kernels compiled for it (tile-compile --options "
               "target=sm_80)"));
  }
  std::string listed;
  for (const std::string &entry : available)
    listed += (listed.empty() ? "" : ", ") + entry;
  return Status::error("the bundle '" + dir + "' has no " + family +
                       " variant for " + wanted +
                       " (it has: " + (listed.empty() ? "none" : listed) + ")");
}

const KernelInfo *
tile::rt::pickForSequenceLength(const std::vector<const KernelInfo *> &variants,
                                int64_t seqLen) {
  const KernelInfo *covering = nullptr, *general = nullptr, *longest = nullptr;
  for (const KernelInfo *info : variants) {
    if (!info->maxNCtx) {
      general = general ? general : info;
      continue;
    }
    if (*info->maxNCtx >= seqLen &&
        (!covering || *info->maxNCtx < *covering->maxNCtx))
      covering = info;
    if (!longest || *info->maxNCtx > *longest->maxNCtx)
      longest = info;
  }
  return covering ? covering : general ? general : longest;
}

std::string tile::rt::executableDirectory() {
  char buffer[4096];
  ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (length <= 0)
    return ".";
  std::string path(buffer, static_cast<size_t>(length));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string tile::rt::defaultBundleDirectory() {
  return executableDirectory() + "/../kernels";
}
