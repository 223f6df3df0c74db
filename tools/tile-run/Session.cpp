//===- Session.cpp - What every tile-run subcommand shares ----------------===//

#include "Session.h"

#include "tile/Runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

using namespace tile;
using namespace tile::run;

std::vector<OptionSpec> tile::run::commonOptions() {
  return {
      {"backend", true, "auto (default), cuda or interp"},
      {"bundle", true,
       "kernel bundle folder (default: ../kernels next to "
       "tile-run)"},
      {"check", false, "compare with the float64 reference; exit 1 on FAIL"},
      {"bench", false, "time the kernels (median of --reps after --warmup)"},
      {"warmup", true,
       "untimed runs before timing (default 0 interp, 10 "
       "cuda)"},
      {"reps", true, "timed runs (default 1 interp, 100 cuda)"},
      {"seed", true, "seed of the random inputs (default 0)"},
      {"timeout", true,
       "stop a launch that runs longer than this many seconds, with an "
       "error (the interpreter; default: no limit)"},
  };
}

rt::Status Session::open(const Options &options, bool needBundle) {
  rt::BackendKind kind;
  std::string backendName = options.get("backend", "auto");
  if (!rt::parseBackendKind(backendName, &kind))
    return rt::Status::error("--backend must be auto, cuda or interp, not '" +
                             backendName + "'");
  if (needBundle || options.has("bundle")) {
    std::string directory = options.get("bundle", rt::defaultBundleDirectory());
    TILE_RETURN_IF_ERROR(rt::Bundle::open(directory, &kernels));
    for (const std::string &warning : kernels.warnings())
      std::fprintf(stderr, "tile-run: warning: skipping %s\n", warning.c_str());
  }
  std::string note;
  TILE_RETURN_IF_ERROR(rt::createBackend(kind, &device, &note));
  std::printf("%s\n", note.c_str());
  bool onGpu = device->name() == "cuda";
  TILE_RETURN_IF_ERROR(
      options.getInt("warmup", onGpu ? 10 : 0, 0, 100000, &warmup));
  TILE_RETURN_IF_ERROR(
      options.getInt("reps", onGpu ? 100 : 1, 1, 100000, &reps));
  if (options.has("timeout")) {
    double seconds;
    TILE_RETURN_IF_ERROR(options.getDouble("timeout", 0, &seconds));
    if (!(seconds > 0))
      return rt::Status::error("--timeout must be a positive number of "
                               "seconds");
    TILE_RETURN_IF_ERROR(
        device->setTimeLimit(seconds).withContext("--timeout"));
  }
  return rt::Status::success();
}

rt::Status Session::upload(const rt::HostArray &array, const std::string &label,
                           rt::ScopedBuffer *buffer) {
  rt::DeviceBuffer handle;
  // A buffer is never empty: a zero-element array still gets one element.
  size_t bytes = std::max(array.sizeInBytes(), rt::dtypeSize(array.dtype()));
  TILE_RETURN_IF_ERROR(device->allocate(bytes, array.dtype(), label, &handle));
  *buffer = rt::ScopedBuffer(device.get(), handle);
  return device->copyToDevice(handle, array.data(), array.sizeInBytes());
}

rt::Status Session::download(const rt::ScopedBuffer &buffer,
                             rt::HostArray *array) {
  return device->copyToHost(array->data(), buffer.get(), array->sizeInBytes());
}

rt::Status Session::prepare(
    const rt::KernelInfo &info,
    const std::vector<std::pair<std::string, rt::LaunchArg>> &named,
    PreparedLaunch *launch) {
  launch->info = &info;
  TILE_RETURN_IF_ERROR(rt::bindArguments(info, named, &launch->args));
  TILE_RETURN_IF_ERROR(
      rt::checkArguments(info, launch->args, rt::PointerKind::Handle));
  return rt::computeGrid(info, launch->args, device->multiprocessorCount(),
                         &launch->grid);
}

rt::Status Session::launch(const PreparedLaunch &launch) {
  auto found = loaded.find(launch.info->metadataPath);
  if (found == loaded.end()) {
    rt::KernelHandle handle;
    TILE_RETURN_IF_ERROR(device->loadKernel(*launch.info, &handle)
                             .withContext("loading " + launch.info->name));
    found = loaded.emplace(launch.info->metadataPath, handle).first;
  }
  std::string context =
      "running " + launch.info->name + " on grid " + launch.grid.toString();
  TILE_RETURN_IF_ERROR(device->launch(found->second, launch.grid, launch.args)
                           .withContext(context));
  return device->synchronize().withContext(context);
}

rt::Status Session::benchmark(const std::function<rt::Status()> &work,
                              double *medianMilliseconds) {
  for (int64_t i = 0; i < warmup; ++i)
    TILE_RETURN_IF_ERROR(work());
  std::vector<double> times;
  for (int64_t i = 0; i < reps; ++i) {
    TILE_RETURN_IF_ERROR(device->startTimer());
    TILE_RETURN_IF_ERROR(work());
    double milliseconds;
    TILE_RETURN_IF_ERROR(device->stopTimer(&milliseconds));
    times.push_back(milliseconds);
  }
  std::sort(times.begin(), times.end());
  *medianMilliseconds = times[times.size() / 2];
  return rt::Status::success();
}

rt::Status tile::run::requireConstexpr(const rt::KernelInfo &info,
                                       const std::string &name,
                                       int64_t *value) {
  std::optional<int64_t> found = info.constexprInt(name);
  if (!found || *found <= 0)
    return rt::Status::error("variant '" + info.name +
                             "' lacks the positive integer constexpr " + name +
                             " that its launch grid needs");
  *value = *found;
  return rt::Status::success();
}

rt::HostArray tile::run::randomArray(rt::DType dtype,
                                     std::vector<int64_t> shape, uint64_t seed,
                                     double scale) {
  rt::HostArray array(dtype, std::move(shape));
  // Benchmark inputs run to hundreds of millions of elements: fill them in
  // chunks on every core. Each chunk starts its own stream where the single
  // stream would be (an even element, so on a Box-Muller pair), so the
  // values do not depend on the number of threads.
  constexpr size_t chunk = size_t(1) << 20;
  size_t chunks = (array.size() + chunk - 1) / chunk;
  auto fill = [&](size_t first, size_t step) {
    for (size_t c = first; c < chunks; c += step) {
      rt::Random random(seed);
      random.skip(c * chunk);
      for (size_t i = c * chunk, e = std::min(i + chunk, array.size()); i < e;
           ++i)
        array.set(i, scale * random.normal());
    }
  };
  size_t threads = std::min<size_t>(
      chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t)
    workers.emplace_back(fill, t, threads);
  fill(0, std::max<size_t>(threads, 1));
  for (std::thread &worker : workers)
    worker.join();
  return array;
}

bool tile::run::reportChecks(
    const std::vector<std::pair<std::string, rt::Comparison>> &results,
    const std::vector<rt::Tolerance> &tolerances) {
  bool allPass = true;
  std::printf("check against the float64 reference:\n");
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("%s\n", rt::formatComparison(results[i].first,
                                             results[i].second, tolerances[i])
                            .c_str());
    allPass = allPass && results[i].second.pass;
  }
  std::printf("%s\n", allPass ? "PASS" : "FAIL");
  return allPass;
}

rt::JsonValue tile::run::jsonNumber(double value) {
  return std::isfinite(value) ? rt::JsonValue::makeNumber(value, false, 0)
                              : rt::JsonValue();
}

rt::JsonValue tile::run::jsonInteger(int64_t value) {
  return rt::JsonValue::makeNumber(static_cast<double>(value), true, value);
}

rt::JsonValue tile::run::checksToJson(
    const std::vector<std::pair<std::string, rt::Comparison>> &results,
    const std::vector<rt::Tolerance> &tolerances) {
  std::vector<rt::JsonValue> checks;
  for (size_t i = 0; i < results.size(); ++i) {
    const rt::Comparison &c = results[i].second;
    const rt::Tolerance &tolerance = tolerances[i];
    checks.push_back(rt::JsonValue::makeObject({
        {"name", rt::JsonValue::makeString(results[i].first)},
        {"max_abs", jsonNumber(c.maxAbsError)},
        {"max_rel", jsonNumber(c.maxRelError)},
        {"max_ref", jsonNumber(c.maxReference)},
        {"atol", jsonNumber(tolerance.atol)},
        {"rtol", jsonNumber(tolerance.rtol)},
        {"bound", jsonNumber(tolerance.atol + tolerance.rtol * c.maxReference)},
        {"non_finite", jsonInteger(static_cast<int64_t>(c.nonFinite))},
        {"pass", rt::JsonValue::makeBool(c.pass)},
    }));
  }
  return rt::JsonValue::makeArray(std::move(checks));
}

rt::Status tile::run::writeReport(const std::string &path,
                                  const rt::JsonValue &report) {
  std::string text = "{\n";
  const auto &members = report.getObject();
  for (size_t i = 0; i < members.size(); ++i)
    text += "  " + rt::JsonValue::makeString(members[i].first).toString() +
            ": " + members[i].second.toString() +
            (i + 1 < members.size() ? ",\n" : "\n");
  text += "}\n";
  std::ofstream out(path);
  if (!out)
    return rt::Status::error("cannot write the report '" + path + "'");
  out << text;
  if (!out)
    return rt::Status::error("error writing the report '" + path + "'");
  return rt::Status::success();
}

void tile::run::printLaunchPlan(const rt::KernelInfo &info,
                                const rt::Grid &grid) {
  std::printf("kernel %s grid %s [%s]\n", info.name.c_str(),
              grid.toString().c_str(), info.constexprSummary().c_str());
}
