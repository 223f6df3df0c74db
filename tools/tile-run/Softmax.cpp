//===- Softmax.cpp - tile-run softmax and tile-run flash-puzzle -----------===//

#include "Commands.h"
#include "Session.h"

#include "tile/Runtime/Reference.h"

#include <cmath>
#include <cstdio>
#include <optional>

using namespace tile;
using namespace tile::run;

namespace {

// fp32 kernels: a few f32 roundings (u = 2^-24) per element, plus the
// GPU's approximate exp2 (2^-22): rtol 1e-5 is about 170u, well above the
// errors measured (under 10u); see docs/interpreter.md.
constexpr rt::Tolerance kSoftmaxTolerance = {1e-6, 1e-5};
constexpr rt::Tolerance kPuzzleTolerance = {1e-6, 1e-5};

std::vector<OptionSpec> withCommon(std::vector<OptionSpec> specs) {
  for (const OptionSpec &spec : commonOptions())
    specs.push_back(spec);
  return specs;
}

/// softmax_v1 keeps a row in one block: the smallest BLOCK_N >= cols. The
/// other versions loop over blocks and take any width: the first variant.
rt::Status selectSoftmax(const rt::Bundle &bundle, int version, int64_t cols,
                         const rt::KernelInfo **chosen) {
  std::string family = "softmax_v" + std::to_string(version);
  std::vector<const rt::KernelInfo *> variants = bundle.family(family);
  if (variants.empty())
    return rt::Status::error("the bundle '" + bundle.directory() + "' has no " +
                             family + " variant");
  if (version != 1) {
    *chosen = variants.front();
    return rt::Status::success();
  }
  const rt::KernelInfo *best = nullptr;
  int64_t bestBlock = 0, largest = 0;
  for (const rt::KernelInfo *info : variants) {
    int64_t block = info->constexprInt("BLOCK_N").value_or(0);
    largest = std::max(largest, block);
    if (block >= cols && (!best || block < bestBlock)) {
      best = info;
      bestBlock = block;
    }
  }
  if (!best)
    return rt::Status::error(
        "softmax v1 holds a whole row in one block, and the widest shipped "
        "variant has BLOCK_N=" +
        std::to_string(largest) + " < --cols " + std::to_string(cols) +
        "; use --variant 2, 3 or 4");
  *chosen = best;
  return rt::Status::success();
}

} // namespace

rt::Status tile::run::runSoftmax(const std::vector<std::string> &args,
                                 bool *passed) {
  std::vector<OptionSpec> specs = withCommon({
      {"variant", true, "1, 2, 3 or 4 (default 1)"},
      {"rows", true, "number of rows (default 4)"},
      {"cols", true, "number of columns (default 100)"},
      {"row-pad", true,
       "extra elements between rows: row stride = cols + "
       "pad (default 0)"},
      {"help", false, "show this help"},
  });
  Options options;
  TILE_RETURN_IF_ERROR(options.parse(args, specs));
  if (options.has("help")) {
    std::printf("usage: tile-run softmax --variant 1|2|3|4 --rows R --cols C "
                "[--check] [--bench] ...\n%s",
                describeOptions(specs).c_str());
    return rt::Status::success();
  }
  if (!options.positional().empty())
    return rt::Status::error("unexpected argument '" +
                             options.positional().front() + "'");
  int64_t version, rows, cols, pad, seed;
  TILE_RETURN_IF_ERROR(options.getInt("variant", 1, 1, 4, &version));
  TILE_RETURN_IF_ERROR(options.getInt("rows", 4, 1, 1 << 30, &rows));
  TILE_RETURN_IF_ERROR(options.getInt("cols", 100, 1, 1 << 30, &cols));
  TILE_RETURN_IF_ERROR(options.getInt("row-pad", 0, 0, 1 << 20, &pad));
  TILE_RETURN_IF_ERROR(options.getInt("seed", 0, 0, INT64_MAX, &seed));
  int64_t stride = cols + pad;
  if (rows * stride >= (int64_t(1) << 31))
    return rt::Status::error("rows * row stride must stay below 2^31: the "
                             "kernels index with i32");

  Session session;
  TILE_RETURN_IF_ERROR(session.open(options));
  const rt::KernelInfo *kernel;
  TILE_RETURN_IF_ERROR(selectSoftmax(session.bundle(),
                                     static_cast<int>(version), cols, &kernel));
  std::printf("softmax v%lld: rows=%lld cols=%lld row stride=%lld seed=%lld\n",
              (long long)version, (long long)rows, (long long)cols,
              (long long)stride, (long long)seed);

  // Inputs ~ N(0, 2^2): exponents that span several orders of magnitude.
  rt::HostArray x = randomArray(rt::DType::F32, {rows, stride},
                                static_cast<uint64_t>(seed) * 8 + 5, 2.0);
  rt::HostArray y(rt::DType::F32, {rows, stride});
  y.fill(NAN);
  rt::ScopedBuffer xBuffer, yBuffer;
  TILE_RETURN_IF_ERROR(session.upload(x, "X", &xBuffer));
  TILE_RETURN_IF_ERROR(session.upload(y, "Y", &yBuffer));
  PreparedLaunch run;
  TILE_RETURN_IF_ERROR(session.prepare(
      *kernel,
      {{"X", rt::LaunchArg::pointer(xBuffer.get(), rt::DType::F32)},
       {"Y", rt::LaunchArg::pointer(yBuffer.get(), rt::DType::F32)},
       {"x_row_stride", rt::LaunchArg::integer(stride)},
       {"y_row_stride", rt::LaunchArg::integer(stride)},
       {"n_rows", rt::LaunchArg::integer(rows)},
       {"n_cols", rt::LaunchArg::integer(cols)}},
      &run));
  printLaunchPlan(run);
  TILE_RETURN_IF_ERROR(session.launch(run));
  TILE_RETURN_IF_ERROR(session.download(yBuffer, &y));

  *passed = true;
  if (options.has("check")) {
    std::vector<double> in(rows * cols), out(rows * cols);
    size_t written = 0; // padding between rows must stay untouched
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        in[r * cols + c] = x.get(r * stride + c);
        out[r * cols + c] = y.get(r * stride + c);
      }
      for (int64_t c = cols; c < stride; ++c)
        written += !std::isnan(y.get(r * stride + c));
    }
    rt::Comparison comparison = rt::compareWithReference(
        out, rt::referenceSoftmax(in, rows, cols), kSoftmaxTolerance);
    if (written) {
      std::printf("  %zu elements of the padding between rows were written\n",
                  written);
      comparison.pass = false;
    }
    *passed = reportChecks({{"Y", comparison}}, {kSoftmaxTolerance});
  }
  if (options.has("bench")) {
    double milliseconds;
    TILE_RETURN_IF_ERROR(
        session.benchmark([&] { return session.launch(run); }, &milliseconds));
    double bytes = 2.0 * rows * cols * 4;
    std::printf("bench: %.3f ms  %.3f GB/s\n", milliseconds,
                bytes / (milliseconds * 1e6));
  }
  return rt::Status::success();
}

rt::Status tile::run::runFlashPuzzle(const std::vector<std::string> &args,
                                     bool *passed) {
  std::vector<OptionSpec> specs = withCommon({
      {"seq", true, "sequence length n (default 100)"},
      {"head-dim", true, "head dimension D (default: the shipped variant's)"},
      {"sm-scale", true, "softmax scale (default 1/sqrt(D))"},
      {"help", false, "show this help"},
  });
  Options options;
  TILE_RETURN_IF_ERROR(options.parse(args, specs));
  if (options.has("help")) {
    std::printf("usage: tile-run flash-puzzle --seq N [--head-dim D] "
                "[--check] [--bench] ...\n%s",
                describeOptions(specs).c_str());
    return rt::Status::success();
  }
  if (!options.positional().empty())
    return rt::Status::error("unexpected argument '" +
                             options.positional().front() + "'");
  int64_t n, wantedDim, seed;
  TILE_RETURN_IF_ERROR(options.getInt("seq", 100, 1, 1 << 24, &n));
  TILE_RETURN_IF_ERROR(options.getInt("head-dim", 0, 0, 1024, &wantedDim));
  TILE_RETURN_IF_ERROR(options.getInt("seed", 0, 0, INT64_MAX, &seed));

  Session session;
  TILE_RETURN_IF_ERROR(session.open(options));
  const rt::KernelInfo *kernel = nullptr;
  std::string available;
  for (const rt::KernelInfo *info :
       session.bundle().family("flash_attn_puzzle")) {
    int64_t dim = info->constexprInt("D").value_or(0);
    available += (available.empty() ? "" : ", ") + std::to_string(dim);
    if (!kernel && (wantedDim == 0 || dim == wantedDim))
      kernel = info;
  }
  if (!kernel)
    return rt::Status::error(
        "the bundle '" + session.bundle().directory() +
        "' has no flash_attn_puzzle variant" +
        (wantedDim ? " for D=" + std::to_string(wantedDim) : std::string()) +
        " (head dims it has: " + (available.empty() ? "none" : available) +
        ")");
  int64_t d;
  TILE_RETURN_IF_ERROR(requireConstexpr(*kernel, "D", &d));
  rt::AttentionProblem problem;
  problem.seq = n;
  problem.headDim = d;
  TILE_RETURN_IF_ERROR(options.getDouble(
      "sm-scale", 1.0 / std::sqrt(static_cast<double>(d)), &problem.smScale));
  std::printf("flash-puzzle: n=%lld D=%lld sm_scale=%g seed=%lld\n",
              (long long)n, (long long)d, problem.smScale, (long long)seed);

  uint64_t base = static_cast<uint64_t>(seed) * 8;
  rt::HostArray q = randomArray(rt::DType::F32, {n, d}, base + 1, 0.5);
  rt::HostArray k = randomArray(rt::DType::F32, {n, d}, base + 2, 0.5);
  rt::HostArray v = randomArray(rt::DType::F32, {n, d}, base + 3, 0.5);
  rt::HostArray o(rt::DType::F32, {n, d});
  o.fill(NAN);
  rt::ScopedBuffer qBuffer, kBuffer, vBuffer, oBuffer;
  TILE_RETURN_IF_ERROR(session.upload(q, "Q", &qBuffer));
  TILE_RETURN_IF_ERROR(session.upload(k, "K", &kBuffer));
  TILE_RETURN_IF_ERROR(session.upload(v, "V", &vBuffer));
  TILE_RETURN_IF_ERROR(session.upload(o, "O", &oBuffer));
  PreparedLaunch run;
  TILE_RETURN_IF_ERROR(session.prepare(
      *kernel,
      {{"Q", rt::LaunchArg::pointer(qBuffer.get(), rt::DType::F32)},
       {"K", rt::LaunchArg::pointer(kBuffer.get(), rt::DType::F32)},
       {"V", rt::LaunchArg::pointer(vBuffer.get(), rt::DType::F32)},
       {"O", rt::LaunchArg::pointer(oBuffer.get(), rt::DType::F32)},
       {"n", rt::LaunchArg::integer(n)},
       {"sm_scale", rt::LaunchArg::floating(problem.smScale)}},
      &run));
  printLaunchPlan(run);
  TILE_RETURN_IF_ERROR(session.launch(run));
  TILE_RETURN_IF_ERROR(session.download(oBuffer, &o));

  *passed = true;
  if (options.has("check")) {
    std::vector<double> oRef, lseRef;
    rt::referenceAttentionForward(problem, q.toDoubles(), k.toDoubles(),
                                  v.toDoubles(), &oRef, &lseRef);
    *passed = reportChecks({{"O", rt::compareWithReference(o.toDoubles(), oRef,
                                                           kPuzzleTolerance)}},
                           {kPuzzleTolerance});
  }
  if (options.has("bench")) {
    double milliseconds;
    TILE_RETURN_IF_ERROR(
        session.benchmark([&] { return session.launch(run); }, &milliseconds));
    double flops = 4.0 * double(n) * n * d;
    std::printf("bench: %.3f ms  %.3f TFLOP/s\n", milliseconds,
                flops / (milliseconds * 1e9));
  }
  return rt::Status::success();
}
