//===- Compiler.cpp - Compiling one kernel, source to bundle --------------===//

#include "tile/Pipeline/Compiler.h"

#include "tile/Pipeline/Pipeline.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/DType.h"
#include "tile/Target/NVPTX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

#include <chrono>

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Seconds since `start`.
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The metadata keys the compiler writes, in the order the file lists them;
/// tile.metadata may set only "kernel" and "source" among them.
constexpr llvm::StringLiteral kCompilerKeys[] = {
    "schema_version", "name",      "kernel",  "entry",  "source", "params",
    "constexprs",     "num_warps", "options", "launch", "gpu"};
constexpr llvm::StringLiteral kFrontendKeys[] = {"kernel", "source"};

/// An attribute as JSON: strings, numbers, booleans, arrays, dictionaries;
/// a unit attribute is null (Python's None).
FailureOr<llvm::json::Value> toJson(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return llvm::json::Value(b.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return llvm::json::Value(i.getValue().getSExtValue());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return llvm::json::Value(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(attr))
    return llvm::json::Value(s.getValue().str());
  if (isa<UnitAttr>(attr))
    return llvm::json::Value(nullptr);
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute element : array) {
      FailureOr<llvm::json::Value> value = toJson(element);
      if (failed(value))
        return failure();
      out.push_back(std::move(*value));
    }
    return llvm::json::Value(std::move(out));
  }
  if (auto dictionary = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object out;
    for (NamedAttribute entry : dictionary) {
      FailureOr<llvm::json::Value> value = toJson(entry.getValue());
      if (failed(value))
        return failure();
      out[entry.getName().getValue()] = std::move(*value);
    }
    return llvm::json::Value(std::move(out));
  }
  return failure();
}

/// "*fp16", "i32", "fp32": a kernel parameter's type as signatures and the
/// runtimes spell it (tile/Runtime/DType.h).
std::optional<std::string> signatureType(Type type) {
  std::string prefix;
  if (auto pointer = dyn_cast<PtrType>(type)) {
    prefix = "*";
    type = pointer.getPointeeType();
  }
  std::string spelled;
  llvm::raw_string_ostream os(spelled);
  type.print(os);
  std::optional<::tile::rt::DType> dtype = ::tile::rt::parseDType(spelled);
  if (!dtype)
    return std::nullopt;
  return prefix + ::tile::rt::dtypeName(*dtype);
}

/// The kernel's parameters: name (the argument's name location, as the
/// frontend writes it; else argN), type and divisibility.
FailureOr<llvm::json::Array> describeParams(func::FuncOp kernel) {
  llvm::json::Array params;
  for (BlockArgument arg : kernel.getArguments()) {
    unsigned index = arg.getArgNumber();
    std::optional<std::string> type = signatureType(arg.getType());
    if (!type)
      return kernel.emitError()
             << "kernel argument " << index << " has type " << arg.getType()
             << ", which no runtime can pass";
    llvm::json::Object param{{"name", getParamName(arg)}, {"type", *type}};
    if (auto divisibility = kernel.getArgAttrOfType<IntegerAttr>(
            index, TileDialect::getDivisibilityAttrName()))
      param["divisibility"] = divisibility.getInt();
    params.push_back(std::move(param));
  }
  return params;
}

/// The source file of the kernel's location, or "".
std::string sourceFile(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str();
  if (auto named = dyn_cast<NameLoc>(loc))
    return sourceFile(named.getChildLoc());
  return "";
}

/// The metadata a kernel has before any lowering.
FailureOr<llvm::json::Object> describeKernel(ModuleOp module,
                                             func::FuncOp kernel,
                                             const CompileRequest &request,
                                             const CompileOptions &options) {
  FailureOr<llvm::json::Array> params = describeParams(kernel);
  if (failed(params))
    return failure();
  llvm::json::Object constexprs;
  std::optional<llvm::json::Value> launchSpec;
  if (auto values = kernel->getAttrOfType<DictionaryAttr>(
          TileDialect::getConstexprsAttrName())) {
    FailureOr<llvm::json::Value> json = toJson(values);
    if (failed(json))
      return kernel.emitError()
             << TileDialect::getConstexprsAttrName()
             << " holds an attribute that has no JSON form: " << values;
    constexprs = std::move(*json->getAsObject());
  }
  if (auto launch = kernel->getAttrOfType<DictionaryAttr>(
          TileDialect::getLaunchAttrName())) {
    // The dialect verified its shape; the runtime's reader checks its
    // names against the parameters below.
    FailureOr<llvm::json::Value> json = toJson(launch);
    if (failed(json))
      return kernel.emitError() << TileDialect::getLaunchAttrName()
                                << " has no JSON form: " << launch;
    launchSpec = std::move(*json);
  }
  llvm::json::Object metadata{
      {"schema_version", ::tile::rt::kMetadataSchemaVersion},
      {"name", request.name},
      {"entry", kernel.getSymName().str()},
      {"kernel", kernel.getSymName().str()},
      {"source", sourceFile(kernel.getLoc())},
      {"params", std::move(*params)},
      {"constexprs", std::move(constexprs)},
      {"num_warps", int64_t(options.numWarps)},
      {"options", options.str()},
  };
  if (launchSpec)
    metadata["launch"] = std::move(*launchSpec);
  auto recorded =
      module->getAttrOfType<DictionaryAttr>(TileDialect::getMetadataAttrName());
  if (!recorded)
    return metadata;
  for (NamedAttribute entry : recorded) {
    StringRef key = entry.getName().getValue();
    if (llvm::is_contained(kCompilerKeys, key) &&
        !llvm::is_contained(kFrontendKeys, key))
      return module.emitError()
             << TileDialect::getMetadataAttrName() << " sets '" << key
             << "', which the compiler writes itself";
    FailureOr<llvm::json::Value> value = toJson(entry.getValue());
    if (failed(value))
      return module.emitError()
             << TileDialect::getMetadataAttrName() << "." << key
             << " has no JSON form: " << entry.getValue();
    metadata[key] = std::move(*value);
  }
  return metadata;
}

/// Records in the code the constexprs it is compiled for: two one-byte
/// globals whose names the runtime looks up (::tile::rt::kConstexprsMarker).
void recordConstexprs(llvm::Module &module,
                      const ::tile::rt::KernelInfo &metadata) {
  constexpr unsigned kGlobalAddressSpace = 1;
  auto *byte = llvm::Type::getInt8Ty(module.getContext());
  for (const std::string &name : {std::string(::tile::rt::kConstexprsMarker),
                                  ::tile::rt::constexprsSymbol(metadata)})
    new llvm::GlobalVariable(
        module, byte, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantInt::get(byte, 0), name, /*InsertBefore=*/nullptr,
        llvm::GlobalValue::NotThreadLocal, kGlobalAddressSpace);
}

/// The options of `module`: the defaults, then its tile.options, then the
/// request's overrides.
LogicalResult readOptions(ModuleOp module, const CompileRequest &request,
                          CompileOptions &options) {
  std::string error;
  if (auto recorded =
          module->getAttrOfType<StringAttr>(TileDialect::getOptionsAttrName()))
    if (failed(parseCompileOptions(recorded.getValue(), options, error)))
      return module.emitError()
             << TileDialect::getOptionsAttrName() << ": " << error;
  if (failed(parseCompileOptions(request.optionOverrides, options, error)))
    return module.emitError() << "option overrides: " << error;
  return success();
}

} // namespace

std::string mlir::tile::formatMetadata(const llvm::json::Object &metadata) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    for (StringRef key : kCompilerKeys)
      if (const llvm::json::Value *value = metadata.get(key))
        json.attribute(key, *value);
    SmallVector<StringRef> others;
    for (const auto &entry : metadata)
      if (!llvm::is_contained(kCompilerKeys, StringRef(entry.first)))
        others.push_back(entry.first);
    llvm::sort(others);
    for (StringRef key : others)
      json.attribute(key, *metadata.get(key));
  });
  os << "\n";
  return text;
}

LogicalResult mlir::tile::compileKernel(ModuleOp module,
                                        const CompileRequest &request,
                                        CompiledKernel &result) {
  SmallVector<func::FuncOp> kernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (isKernel(func))
      kernels.push_back(func);
  if (kernels.size() != 1)
    return module.emitError()
           << "a kernel module holds one func.func marked "
           << TileDialect::getKernelAttrName() << ", not " << kernels.size();

  CompileOptions options;
  if (failed(readOptions(module, request, options)))
    return failure();
  FailureOr<llvm::json::Object> metadata =
      describeKernel(module, kernels.front(), request, options);
  if (failed(metadata))
    return failure();
  // What the runtimes will read must read: the same parser checks it now.
  ::tile::rt::KernelInfo readBack;
  ::tile::rt::Status readable = ::tile::rt::parseKernelInfo(
      formatMetadata(*metadata), request.name + ".json", &readBack);
  if (!readable.ok())
    return kernels.front().emitError()
           << "the kernel's metadata would not load: " << readable.message();
  result.metadata = std::move(*metadata);
  if (request.stage == CompileStage::Metadata)
    return success();

  // Lowering. An error that says the GPU lowering does not take the kernel
  // yet becomes the result's reason; other errors go on to the caller.
  std::string unsupported;
  LogicalResult lowered = success();
  {
    ScopedDiagnosticHandler handler(
        module.getContext(), [&](Diagnostic &diagnostic) {
          std::string message = diagnostic.str();
          if (diagnostic.getSeverity() != DiagnosticSeverity::Error ||
              !StringRef(message).contains(tilegpu::kUnsupportedOnGPU))
            return failure(); // not ours: the next handler reports it
          if (unsupported.empty())
            unsupported = message;
          return success();
        });
    PassManager pm(module.getContext());
    buildTileToLLVMPipeline(pm, options);
    auto start = std::chrono::steady_clock::now();
    lowered = pm.run(module);
    result.seconds.lowering = since(start);
  }
  tilegpu::TargetAttr target = getTarget(module, options);
  llvm::json::Object gpu{{"target", target.getChip().str()}};
  if (failed(lowered)) {
    if (unsupported.empty())
      return failure();
    result.unsupportedOnGPU = unsupported;
    gpu["unsupported"] = unsupported;
    result.metadata["gpu"] = std::move(gpu);
    return success();
  }

  auto machine = createTargetMachine(target, options);
  if (!machine)
    return module.emitError() << llvm::toString(machine.takeError());
  BackendSubject subject("kernel '" + request.name + "'");
  llvm::LLVMContext llvmContext;
  auto start = std::chrono::steady_clock::now();
  auto llvmModule = translateToLLVMIR(module, llvmContext, **machine, options);
  if (!llvmModule)
    return module.emitError() << llvm::toString(llvmModule.takeError());
  recordConstexprs(**llvmModule, readBack);
  result.seconds.llvm = since(start);
  start = std::chrono::steady_clock::now();
  result.ptx = emitPTX(**llvmModule, **machine);
  result.seconds.ptx = since(start);
  int64_t sharedBytes = 0;
  if (auto bytes = module->getAttrOfType<IntegerAttr>(
          tilegpu::TileGPUDialect::getSharedBytesAttrName()))
    sharedBytes = bytes.getInt();
  // What the runtime encodes for the descriptor parameters the lowering
  // added after the declared ones.
  if (auto maps = module->getAttrOfType<ArrayAttr>(
          tilegpu::TileGPUDialect::getTensorMapsAttrName())) {
    FailureOr<llvm::json::Value> json = toJson(maps);
    if (failed(json))
      return module.emitError() << "tilegpu.tensormaps has no JSON form";
    gpu["tensormaps"] = std::move(*json);
  }
  gpu["ptx"] = request.name + ".ptx";
  gpu["shared_bytes"] = sharedBytes;
  // The block the kernel runs as: its warps, and a warp-specialized
  // kernel's producer warps besides.
  for (auto kernel : module.getOps<LLVM::LLVMFuncOp>())
    if (auto threads = kernel->getAttrOfType<DenseI32ArrayAttr>("nvvm.maxntid"))
      gpu["threads"] = int64_t(threads[0]);
  if (request.stage == CompileStage::Cubin) {
    start = std::chrono::steady_clock::now();
    auto cubin = assembleCubin(result.ptx, target, request.ptxas);
    result.seconds.ptxas = since(start);
    if (!cubin)
      return module.emitError()
             << request.name << ": " << llvm::toString(cubin.takeError());
    result.cubin = std::move(*cubin);
    gpu["cubin"] = request.name + ".cubin";
  }
  result.metadata["gpu"] = std::move(gpu);
  return success();
}
