//===- Attention.cpp - tile-run attention ---------------------------------===//
//
// Runs the FlashAttention forward (attn_fwd) and, with --mode bwd, the
// backward (attn_bwd_preprocess, attn_bwd, attn_bwd_postprocess) on random
// inputs of shape [batch, heads, seq, head_dim], and checks O, LSE, Delta, dQ,
// dK and dV against the float64 reference. --causal-offset K moves the causal
// diagonal: query i sees key j iff j <= i + K. --report writes the checks and
// the times as JSON, for the tools that run tile-run (tile.tools.autotune).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Session.h"

#include "tile/Runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

using namespace tile;
using namespace tile::run;

namespace {

std::vector<OptionSpec> attentionOptions() {
  std::vector<OptionSpec> specs = {
      {"mode", true,
       "fwd (default) or bwd (runs the forward, then the "
       "backward)"},
      {"batch", true, "batch size B (default 1)"},
      {"heads", true, "number of heads H (default 1)"},
      {"seq", true, "sequence length N (default 128)"},
      {"head-dim", true, "head dimension D (default 64)"},
      {"causal", false, "key j is visible to query i iff j <= i + K"},
      {"causal-offset", true,
       "K of --causal (default 0; any i32; an error without --causal). "
       "Rows with i + K < 0 see no key: out 0, LSE -inf, zero gradients"},
      {"dtype", true, "f16 (default) or bf16"},
      {"kernel", true,
       "run this variant (`tile-run list`) for its family instead of the "
       "one chosen by head dim, causality, dtype and sequence length "
       "(repeatable: one a family)"},
      {"sm-scale", true, "softmax scale (default 1/sqrt(D))"},
      {"layout", true,
       "memory order of Q, K, V, O and their gradients: bhnd "
       "(default, [B, H, N, D]) or bnhd ([B, N, H, D])"},
      {"bench-sets", true,
       "input sets --bench rotates, copies at their own addresses, so that "
       "L2 does not keep one call's inputs for the next (default 2, as "
       "benchmarks/attention_bench.py; 1 times one set over and over)"},
      {"report", true,
       "write the problem, the kernels, the checks and the times to this "
       "JSON file (docs/interpreter.md)"},
      {"help", false, "show this help"},
  };
  for (const OptionSpec &spec : commonOptions())
    specs.push_back(spec);
  return specs;
}

/// Describes a variant as selection sees it: "D=128 non-causal fp16".
std::string describeVariant(const rt::KernelInfo &info, bool hasCausality) {
  std::optional<int64_t> dim = info.constexprInt("HEAD_DIM");
  std::optional<int64_t> isCausal = info.constexprInt("CAUSAL");
  std::string type = info.params.empty() ? "?" : info.params[0].typeString();
  return "D=" + (dim ? std::to_string(*dim) : std::string("?")) +
         (!hasCausality                              ? ""
          : info.constexprInt("SOFTCAP").value_or(0) ? " softcap"
          : info.constexprInt("ALIBI").value_or(0)   ? " ALiBi"
          : info.constexprInt("DROPOUT").value_or(0) ? " dropout"
          : info.constexprInt("DQ").value_or(1) == 0 ? " deterministic"
          : info.constexprInt("WINDOW").value_or(0)  ? " local (windowed)"
          : isCausal && *isCausal                    ? " causal"
                                                     : " non-causal") +
         " " + (type.size() > 1 ? type.substr(1) : type);
}

/// --kernel's variants, by family.
using PinnedVariants = std::map<std::string, const rt::KernelInfo *>;
using NamedArgs = std::vector<std::pair<std::string, rt::LaunchArg>>;

/// The variant of `family` for this head dim, causality (when the family
/// has one), element type and sequence length (rt::Bundle::select), or the
/// family's variant in `pinned`, which must match.
rt::Status selectVariant(const rt::Bundle &bundle, const std::string &family,
                         int64_t headDim, std::optional<bool> causal,
                         rt::DType dtype, int64_t seqLen,
                         const PinnedVariants &pinned,
                         const rt::TargetChoice &target,
                         const rt::KernelInfo **chosen) {
  if (auto it = pinned.find(family); it != pinned.end()) {
    const rt::KernelInfo &info = *it->second;
    std::optional<int64_t> isCausal = info.constexprInt("CAUSAL");
    bool matches = info.constexprInt("HEAD_DIM") == headDim &&
                   !info.params.empty() &&
                   info.params[0].typeString() ==
                       std::string("*") + rt::dtypeName(dtype) &&
                   (!causal || (isCausal && (*isCausal != 0) == *causal &&
                                info.constexprInt("WINDOW").value_or(0) == 0 &&
                                info.constexprInt("SOFTCAP").value_or(0) == 0 &&
                                info.constexprInt("ALIBI").value_or(0) == 0 &&
                                info.constexprInt("DROPOUT").value_or(0) == 0 &&
                                info.constexprInt("DQ").value_or(1) != 0));
    if (!matches)
      return rt::Status::error(
          "--kernel " + info.name + " is " +
          describeVariant(info, causal.has_value()) +
          ", but the problem is D=" + std::to_string(headDim) +
          (causal ? (*causal ? " causal" : " non-causal") : "") + " " +
          rt::dtypeName(dtype));
    *chosen = &info;
    return rt::Status::success();
  }
  std::vector<std::pair<std::string, int64_t>> keys = {{"HEAD_DIM", headDim}};
  if (causal) {
    keys.push_back({"CAUSAL", *causal});
    // tile-run's attention has no window, no score cap, no ALiBi and no
    // dropout; its backward adds dQ with atomics (not the deterministic
    // variants).
    keys.push_back({"WINDOW", 0});
    keys.push_back({"SOFTCAP", 0});
    keys.push_back({"ALIBI", 0});
    keys.push_back({"DROPOUT", 0});
    if (family == "attn_bwd")
      keys.push_back({"DQ", 1});
  }
  return bundle.select(family, rt::dtypeName(dtype), keys, seqLen, target,
                       chosen);
}

/// Tolerances of the normwise check |out - ref| <= atol + rtol * max|ref|,
/// in units of the element type's unit roundoff u (2^-11 for fp16, 2^-8 for
/// bf16). The forward rounds twice in T (P before P.V, and O), a bound of
/// about 2u: rtol = 4u. The backward also rounds dS and its outputs: 8u.
/// LSE and the f32 statistics are computed in f32. docs/interpreter.md has
/// the measurements behind these.
rt::Tolerance attentionTolerance(rt::DType dtype, bool isGradient) {
  double unitRoundoff = dtype == rt::DType::F16 ? 0x1p-11 : 0x1p-8;
  return {1e-5, (isGradient ? 8 : 4) * unitRoundoff};
}

rt::Tolerance statisticTolerance() { return {1e-5, 1e-5}; }

/// Swaps dimensions 1 and 2 of a 4-D array: [B, H, N, D] <-> [B, N, H, D].
rt::HostArray swapMiddleDimensions(const rt::HostArray &in) {
  const std::vector<int64_t> &s = in.shape();
  rt::HostArray out(in.dtype(), {s[0], s[2], s[1], s[3]});
  size_t element = rt::dtypeSize(in.dtype()), row = s[3] * element;
  const auto *from = static_cast<const unsigned char *>(in.data());
  auto *to = static_cast<unsigned char *>(out.data());
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < s[2]; ++k)
        std::copy(from + ((i * s[1] + j) * s[2] + k) * row,
                  from + ((i * s[1] + j) * s[2] + k + 1) * row,
                  to + ((i * s[2] + k) * s[1] + j) * row);
  return out;
}

} // namespace

rt::Status tile::run::runAttention(const std::vector<std::string> &args,
                                   bool *passed) {
  std::vector<OptionSpec> specs = attentionOptions();
  Options options;
  TILE_RETURN_IF_ERROR(options.parse(args, specs));
  if (options.has("help")) {
    std::printf("usage: tile-run attention --mode fwd|bwd --batch B --heads H "
                "--seq N --head-dim D [--causal] [--dtype f16|bf16] "
                "[--check] [--bench] ...\n%s",
                describeOptions(specs).c_str());
    return rt::Status::success();
  }
  if (!options.positional().empty())
    return rt::Status::error("unexpected argument '" +
                             options.positional().front() + "'");
  // A run that stops on an error writes no report: an old one must not be
  // read as its result.
  std::string reportPath = options.get("report");
  if (options.has("report") && reportPath.empty())
    return rt::Status::error("--report needs a file name");
  if (!reportPath.empty())
    std::remove(reportPath.c_str());
  std::string mode = options.get("mode", "fwd");
  if (mode != "fwd" && mode != "bwd")
    return rt::Status::error("--mode must be fwd or bwd, not '" + mode + "'");
  bool backward = mode == "bwd";
  rt::AttentionProblem problem;
  int64_t seed;
  TILE_RETURN_IF_ERROR(options.getInt("batch", 1, 1, 65535, &problem.batch));
  TILE_RETURN_IF_ERROR(options.getInt("heads", 1, 1, 65535, &problem.heads));
  TILE_RETURN_IF_ERROR(options.getInt("seq", 128, 1, 1 << 24, &problem.seq));
  TILE_RETURN_IF_ERROR(
      options.getInt("head-dim", 64, 1, 1024, &problem.headDim));
  TILE_RETURN_IF_ERROR(options.getInt("seed", 0, 0, INT64_MAX, &seed));
  TILE_RETURN_IF_ERROR(options.getDouble(
      "sm-scale", 1.0 / std::sqrt(static_cast<double>(problem.headDim)),
      &problem.smScale));
  // The kernels take the row max before scaling: only a positive scale
  // keeps the order of the scores.
  if (!(problem.smScale > 0) || !std::isfinite(problem.smScale))
    return rt::Status::error("--sm-scale must be positive and finite");
  problem.causal = options.has("causal");
  // Non-causal attention has no diagonal to move: refuse rather than
  // silently ignore the offset.
  if (options.has("causal-offset") && !problem.causal)
    return rt::Status::error("--causal-offset needs --causal (it moves the "
                             "causal diagonal; non-causal attention has none)");
  TILE_RETURN_IF_ERROR(options.getInt("causal-offset", 0, INT32_MIN, INT32_MAX,
                                      &problem.causalOffset));
  std::string layout = options.get("layout", "bhnd");
  if (layout != "bhnd" && layout != "bnhd")
    return rt::Status::error("--layout must be bhnd or bnhd, not '" + layout +
                             "'");
  bool sequenceMajor = layout == "bnhd";
  int64_t benchSets;
  TILE_RETURN_IF_ERROR(options.getInt("bench-sets", 2, 1, 8, &benchSets));
  std::string dtypeName = options.get("dtype", "f16");
  std::optional<rt::DType> dtype = rt::parseDType(dtypeName);
  if (!dtype || (*dtype != rt::DType::F16 && *dtype != rt::DType::BF16))
    return rt::Status::error("--dtype must be f16 or bf16, not '" + dtypeName +
                             "'");
  if (problem.batch * problem.heads > 65535)
    return rt::Status::error("batch * heads must be at most 65535 (the grid's "
                             "y dimension)");
  if (problem.tensorSize() >= (size_t(1) << 31))
    return rt::Status::error(
        "B*H*N*D must stay below 2^31: the kernels index with i32 strides");

  Session session;
  TILE_RETURN_IF_ERROR(session.open(options));
  const rt::KernelInfo *forward, *preprocess = nullptr, *gradient = nullptr,
                                 *postprocess = nullptr;
  // --kernel names must each be a variant of an attention family.
  PinnedVariants pinned;
  for (const std::string &name : options.getAll("kernel")) {
    const rt::KernelInfo *info = session.bundle().findVariant(name);
    if (!info ||
        (info->kernel != "attn_fwd" && info->kernel != "attn_bwd_preprocess" &&
         info->kernel != "attn_bwd" && info->kernel != "attn_bwd_postprocess"))
      return rt::Status::error("--kernel " + name +
                               ": the bundle has no attention variant of "
                               "that name (`tile-run list` shows them)");
    if (!backward && info->kernel != "attn_fwd")
      return rt::Status::error("--kernel " + name + " is an " + info->kernel +
                               " kernel, which only --mode bwd runs");
    if (!pinned.emplace(info->kernel, info).second)
      return rt::Status::error("--kernel names two " + info->kernel +
                               " variants; give one a family");
  }
  rt::TargetChoice target =
      rt::TargetChoice::forDevice(session.backend().computeCapability());
  TILE_RETURN_IF_ERROR(selectVariant(session.bundle(), "attn_fwd",
                                     problem.headDim, problem.causal, *dtype,
                                     problem.seq, pinned, target, &forward));
  if (backward) {
    TILE_RETURN_IF_ERROR(selectVariant(
        session.bundle(), "attn_bwd_preprocess", problem.headDim, std::nullopt,
        *dtype, problem.seq, pinned, target, &preprocess));
    TILE_RETURN_IF_ERROR(selectVariant(session.bundle(), "attn_bwd",
                                       problem.headDim, problem.causal, *dtype,
                                       problem.seq, pinned, target, &gradient));
    TILE_RETURN_IF_ERROR(selectVariant(
        session.bundle(), "attn_bwd_postprocess", problem.headDim, std::nullopt,
        *dtype, problem.seq, pinned, target, &postprocess));
  }

  int64_t b = problem.batch, h = problem.heads, n = problem.seq,
          d = problem.headDim;
  std::string causality =
      problem.causal
          ? "causal causal_offset=" + std::to_string(problem.causalOffset)
          : "non-causal";
  std::printf("attention %s: B=%lld H=%lld N=%lld D=%lld %s %s sm_scale=%g "
              "layout=%s seed=%lld\n",
              mode.c_str(), (long long)b, (long long)h, (long long)n,
              (long long)d, causality.c_str(), rt::dtypeName(*dtype),
              problem.smScale, layout.c_str(), (long long)seed);

  // Host arrays are [B, H, N, D], the reference's order; with --layout bnhd
  // the device holds [B, N, H, D] and the kernels see the matching strides.
  auto uploadTensor = [&](const rt::HostArray &array, const char *label,
                          rt::ScopedBuffer *buffer) {
    return session.upload(sequenceMajor ? swapMiddleDimensions(array) : array,
                          label, buffer);
  };
  auto downloadTensor = [&](const rt::ScopedBuffer &buffer,
                            rt::HostArray *array) -> rt::Status {
    if (!sequenceMajor)
      return session.download(buffer, array);
    rt::HostArray device = swapMiddleDimensions(*array);
    TILE_RETURN_IF_ERROR(session.download(buffer, &device));
    *array = swapMiddleDimensions(device);
    return rt::Status::success();
  };

  // Inputs as in Triton's tutorial: q, k, v ~ N(0, 0.5^2), dO ~ N(0, 1).
  std::vector<int64_t> shape = {b, h, n, d};
  uint64_t base = static_cast<uint64_t>(seed) * 8;
  rt::HostArray q = randomArray(*dtype, shape, base + 1, 0.5);
  rt::HostArray k = randomArray(*dtype, shape, base + 2, 0.5);
  rt::HostArray v = randomArray(*dtype, shape, base + 3, 0.5);
  // Outputs start as NaN, so that an element no program writes shows up.
  rt::HostArray o(*dtype, shape), lse(rt::DType::F32, {b * h, n});
  o.fill(NAN);
  lse.fill(NAN);
  rt::ScopedBuffer qBuffer, kBuffer, vBuffer, oBuffer, lseBuffer;
  TILE_RETURN_IF_ERROR(uploadTensor(q, "Q", &qBuffer));
  TILE_RETURN_IF_ERROR(uploadTensor(k, "K", &kBuffer));
  TILE_RETURN_IF_ERROR(uploadTensor(v, "V", &vBuffer));
  TILE_RETURN_IF_ERROR(uploadTensor(o, "O", &oBuffer));
  TILE_RETURN_IF_ERROR(session.upload(lse, "LSE", &lseBuffer));

  // One batch of equal lengths: the kernels read their cu_seqlens pointers
  // only for packed sequences (VARLEN), their ALiBi slopes and dropout
  // seeds only in the variants with ALiBi or dropout (not run here), but a
  // pointer names a buffer.
  rt::ScopedBuffer notPackedBuffer, noSlopesBuffer, noSeedsBuffer;
  auto unread = [&](rt::DType type, const char *name,
                    rt::ScopedBuffer *buffer) -> rt::Status {
    rt::HostArray zero(type, {1});
    zero.fill(0);
    return session.upload(zero, name, buffer);
  };
  TILE_RETURN_IF_ERROR(unread(rt::DType::I32, "CU_SEQLENS", &notPackedBuffer));
  TILE_RETURN_IF_ERROR(unread(rt::DType::F32, "ALIBI_SLOPES", &noSlopesBuffer));
  TILE_RETURN_IF_ERROR(unread(rt::DType::I64, "DROPOUT_SEEDS", &noSeedsBuffer));
  rt::LaunchArg cuSeqlens =
      rt::LaunchArg::pointer(notPackedBuffer.get(), rt::DType::I32);
  rt::LaunchArg alibiSlopes =
      rt::LaunchArg::pointer(noSlopesBuffer.get(), rt::DType::F32);
  rt::LaunchArg dropoutSeeds =
      rt::LaunchArg::pointer(noSeedsBuffer.get(), rt::DType::I64);

  auto i32 = [](int64_t value) { return rt::LaunchArg::integer(value); };
  rt::DType T = *dtype;
  int64_t strideZ = h * n * d, strideH = sequenceMajor ? d : n * d,
          strideN = sequenceMajor ? h * d : d;
  // Arguments by parameter name: the kernels' metadata gives their order,
  // and their launch specs the grids.
  auto withShape = [&](NamedArgs args) {
    for (auto [name, value] :
         {std::pair("stride_z", strideZ), std::pair("stride_h", strideH),
          std::pair("stride_n", strideN), std::pair("Z", b), std::pair("H", h),
          std::pair("N_CTX", n), std::pair("MAX_N_CTX", n),
          std::pair("VARLEN", int64_t(0))})
      args.push_back({name, i32(value)});
    args.push_back({"CU_SEQLENS_Q", cuSeqlens});
    return args;
  };
  // attn_fwd and attn_bwd also take K and V's shape (and attn_bwd dK and
  // dV's) and the softcap: here K, V, dK and dV are shaped and laid out as
  // Q, one K/V head a query head, with no window, no cap, not packed.
  auto withKeys = [&](NamedArgs args, bool gradients) {
    args = withShape(std::move(args));
    for (auto [name, value] :
         {std::pair("stride_kz", strideZ), std::pair("stride_kh", strideH),
          std::pair("stride_kn", strideN), std::pair("H_KV", h),
          std::pair("N_KV", n), std::pair("window_offset", int64_t(0))})
      args.push_back({name, i32(value)});
    args.push_back({"softcap", rt::LaunchArg::floating(0.0)});
    args.push_back({"CU_SEQLENS_K", cuSeqlens});
    args.push_back({"ALIBI_SLOPES", alibiSlopes});
    args.push_back({"dropout_p", rt::LaunchArg::floating(0.0)});
    args.push_back({"DROPOUT_SEEDS", dropoutSeeds});
    if (gradients)
      for (auto [name, value] :
           {std::pair("stride_dkz", strideZ), std::pair("stride_dkh", strideH),
            std::pair("stride_dkn", strideN), std::pair("MAX_N_KV", n)})
        args.push_back({name, i32(value)});
    return args;
  };
  // What one forward and backward read; --bench rotates copies of them.
  struct InputSet {
    rt::DeviceBuffer q = 0, k = 0, v = 0, o = 0, lse = 0, dO = 0;
  };
  auto forwardLaunch = [&](const InputSet &in, PreparedLaunch *launch) {
    return session.prepare(
        *forward,
        withKeys({{"Q", rt::LaunchArg::pointer(in.q, T)},
                  {"K", rt::LaunchArg::pointer(in.k, T)},
                  {"V", rt::LaunchArg::pointer(in.v, T)},
                  {"O", rt::LaunchArg::pointer(in.o, T)},
                  {"LSE", rt::LaunchArg::pointer(in.lse, rt::DType::F32)},
                  {"sm_scale", rt::LaunchArg::floating(problem.smScale)},
                  {"causal_offset", i32(problem.causalOffset)}},
                 false),
        launch);
  };
  InputSet inputs;
  inputs.q = qBuffer.get();
  inputs.k = kBuffer.get();
  inputs.v = vBuffer.get();
  inputs.o = oBuffer.get();
  inputs.lse = lseBuffer.get(); // dO: the backward's, set below
  PreparedLaunch forwardRun;
  TILE_RETURN_IF_ERROR(forwardLaunch(inputs, &forwardRun));
  printLaunchPlan(forwardRun);
  TILE_RETURN_IF_ERROR(session.launch(forwardRun));
  TILE_RETURN_IF_ERROR(downloadTensor(oBuffer, &o));
  TILE_RETURN_IF_ERROR(session.download(lseBuffer, &lse));

  rt::HostArray dO, lseLog2, delta, dqAccumulator, dq, dk, dv;
  rt::ScopedBuffer dOBuffer, lseLog2Buffer, deltaBuffer, dqAccumulatorBuffer,
      dqBuffer, dkBuffer, dvBuffer;
  // The backward's LSE_LOG2 and DELTA rows start every statsStride elements:
  // stats_stride(MAX_N_CTX) of python/tile/kernels/attention.py, n rounded
  // up to 16 (the TMA copies blocks of them on Hopper).
  int64_t statsStride = (n + 15) / 16 * 16;
  PreparedLaunch preprocessRun, gradientRun, postprocessRun;
  auto preprocessLaunch = [&](const InputSet &in, PreparedLaunch *launch) {
    return session.prepare(
        *preprocess,
        withShape({{"O", rt::LaunchArg::pointer(in.o, T)},
                   {"DO", rt::LaunchArg::pointer(in.dO, T)},
                   {"LSE", rt::LaunchArg::pointer(in.lse, rt::DType::F32)},
                   {"LSE_LOG2", rt::LaunchArg::pointer(lseLog2Buffer.get(),
                                                       rt::DType::F32)},
                   {"DELTA",
                    rt::LaunchArg::pointer(deltaBuffer.get(), rt::DType::F32)},
                   {"DQ_ACC", rt::LaunchArg::pointer(dqAccumulatorBuffer.get(),
                                                     rt::DType::F32)}}),
        launch);
  };
  auto gradientLaunch = [&](const InputSet &in, PreparedLaunch *launch) {
    return session.prepare(
        *gradient,
        withKeys({{"Q", rt::LaunchArg::pointer(in.q, T)},
                  {"K", rt::LaunchArg::pointer(in.k, T)},
                  {"V", rt::LaunchArg::pointer(in.v, T)},
                  {"sm_scale", rt::LaunchArg::floating(problem.smScale)},
                  {"DO", rt::LaunchArg::pointer(in.dO, T)},
                  {"DQ_ACC", rt::LaunchArg::pointer(dqAccumulatorBuffer.get(),
                                                    rt::DType::F32)},
                  {"DK", rt::LaunchArg::pointer(dkBuffer.get(), T)},
                  {"DV", rt::LaunchArg::pointer(dvBuffer.get(), T)},
                  {"LSE_LOG2",
                   rt::LaunchArg::pointer(lseLog2Buffer.get(), rt::DType::F32)},
                  {"DELTA",
                   rt::LaunchArg::pointer(deltaBuffer.get(), rt::DType::F32)},
                  {"causal_offset", i32(problem.causalOffset)}},
                 true),
        launch);
  };
  if (backward) {
    dO = randomArray(T, shape, base + 4, 1.0);
    lseLog2 = rt::HostArray(rt::DType::F32, {b * h, statsStride});
    delta = rt::HostArray(rt::DType::F32, {b * h, statsStride});
    // dQ / sm_scale accumulates here in fp32; the preprocess kernel zeros it
    // (NaN shows if it does not). Its rows are the blocks' width: the head
    // dim, or the wider one a ragged head dim runs on (BLOCK_D).
    int64_t width = preprocess->constexprInt("BLOCK_D").value_or(0);
    dqAccumulator =
        rt::HostArray(rt::DType::F32, {b * h, n, width > 0 ? width : d});
    dq = rt::HostArray(T, shape);
    dk = rt::HostArray(T, shape);
    dv = rt::HostArray(T, shape);
    for (rt::HostArray *output :
         {&lseLog2, &delta, &dqAccumulator, &dq, &dk, &dv})
      output->fill(NAN);
    TILE_RETURN_IF_ERROR(uploadTensor(dO, "DO", &dOBuffer));
    TILE_RETURN_IF_ERROR(session.upload(lseLog2, "LSE_LOG2", &lseLog2Buffer));
    TILE_RETURN_IF_ERROR(session.upload(delta, "DELTA", &deltaBuffer));
    TILE_RETURN_IF_ERROR(
        session.upload(dqAccumulator, "DQ_ACC", &dqAccumulatorBuffer));
    TILE_RETURN_IF_ERROR(uploadTensor(dq, "DQ", &dqBuffer));
    TILE_RETURN_IF_ERROR(uploadTensor(dk, "DK", &dkBuffer));
    TILE_RETURN_IF_ERROR(uploadTensor(dv, "DV", &dvBuffer));

    inputs.dO = dOBuffer.get();
    TILE_RETURN_IF_ERROR(preprocessLaunch(inputs, &preprocessRun));
    TILE_RETURN_IF_ERROR(gradientLaunch(inputs, &gradientRun));
    TILE_RETURN_IF_ERROR(session.prepare(
        *postprocess,
        withShape({{"DQ", rt::LaunchArg::pointer(dqBuffer.get(), T)},
                   {"DQ_ACC", rt::LaunchArg::pointer(dqAccumulatorBuffer.get(),
                                                     rt::DType::F32)},
                   {"sm_scale", rt::LaunchArg::floating(problem.smScale)}}),
        &postprocessRun));
    printLaunchPlan(preprocessRun);
    printLaunchPlan(gradientRun);
    printLaunchPlan(postprocessRun);
    TILE_RETURN_IF_ERROR(session.launch(preprocessRun));
    TILE_RETURN_IF_ERROR(session.launch(gradientRun));
    TILE_RETURN_IF_ERROR(session.launch(postprocessRun));
    TILE_RETURN_IF_ERROR(session.download(deltaBuffer, &delta));
    TILE_RETURN_IF_ERROR(downloadTensor(dqBuffer, &dq));
    TILE_RETURN_IF_ERROR(downloadTensor(dkBuffer, &dk));
    TILE_RETURN_IF_ERROR(downloadTensor(dvBuffer, &dv));
  }

  *passed = true;
  rt::JsonValue checkReport; // null without --check
  if (options.has("check")) {
    std::vector<double> qd = q.toDoubles(), kd = k.toDoubles(),
                        vd = v.toDoubles();
    std::vector<double> oRef, lseRef;
    rt::referenceAttentionForward(problem, qd, kd, vd, &oRef, &lseRef);
    std::vector<std::pair<std::string, rt::Comparison>> results;
    std::vector<rt::Tolerance> tolerances;
    auto compareValues = [&](const char *name, const std::vector<double> &out,
                             const std::vector<double> &ref,
                             rt::Tolerance tol) {
      results.emplace_back(name, rt::compareWithReference(out, ref, tol));
      tolerances.push_back(tol);
    };
    auto compare = [&](const char *name, const rt::HostArray &out,
                       const std::vector<double> &ref, rt::Tolerance tol) {
      compareValues(name, out.toDoubles(), ref, tol);
    };
    compare("O", o, oRef, attentionTolerance(T, false));
    compare("LSE", lse, lseRef, statisticTolerance());
    if (backward) {
      std::vector<double> dOd = dO.toDoubles(), deltaRef(problem.rowCount());
      for (size_t row = 0; row < problem.rowCount(); ++row) {
        double sum = 0;
        for (int64_t c = 0; c < d; ++c)
          sum += oRef[row * d + c] * dOd[row * d + c];
        deltaRef[row] = sum;
      }
      std::vector<double> dqRef, dkRef, dvRef;
      rt::referenceAttentionBackward(problem, qd, kd, vd, dOd, &dqRef, &dkRef,
                                     &dvRef);
      // Delta's rows without their padding.
      std::vector<double> padded = delta.toDoubles(), deltaRows;
      for (int64_t row = 0; row < b * h; ++row)
        deltaRows.insert(deltaRows.end(), padded.begin() + row * statsStride,
                         padded.begin() + row * statsStride + n);
      compareValues("Delta", deltaRows, deltaRef, attentionTolerance(T, false));
      compare("dQ", dq, dqRef, attentionTolerance(T, true));
      compare("dK", dk, dkRef, attentionTolerance(T, true));
      compare("dV", dv, dvRef, attentionTolerance(T, true));
    }
    *passed = reportChecks(results, tolerances);
    checkReport = checksToJson(results, tolerances);
  }

  rt::JsonValue benchReport; // null without --bench
  if (options.has("bench")) {
    // Causal counts half the pairs, the usual convention; with an offset,
    // the pairs actually visible.
    double pairs = double(n) * n;
    if (problem.causal && problem.causalOffset == 0) {
      pairs *= 0.5;
    } else if (problem.causal) {
      pairs = 0;
      for (int64_t row = 0; row < n; ++row)
        pairs += double(problem.visibleKeys(row));
    }
    double flops = 4.0 * b * h * pairs * d;
    // Set 0 is the one checked above; each other a copy of its inputs (and
    // of the forward's outputs, the backward's inputs) at its own
    // addresses. The outputs and the backward's intermediates are shared.
    struct Copies {
      rt::ScopedBuffer q, k, v, o, lse, dO;
    };
    std::vector<Copies> copies(benchSets - 1); // copies[i]: set i + 1
    std::vector<InputSet> sets = {inputs};
    for (Copies &copy : copies) {
      InputSet in = inputs;
      TILE_RETURN_IF_ERROR(uploadTensor(q, "Q", &copy.q));
      TILE_RETURN_IF_ERROR(uploadTensor(k, "K", &copy.k));
      TILE_RETURN_IF_ERROR(uploadTensor(v, "V", &copy.v));
      in.q = copy.q.get();
      in.k = copy.k.get();
      in.v = copy.v.get();
      if (backward) {
        TILE_RETURN_IF_ERROR(uploadTensor(o, "O", &copy.o));
        TILE_RETURN_IF_ERROR(session.upload(lse, "LSE", &copy.lse));
        TILE_RETURN_IF_ERROR(uploadTensor(dO, "DO", &copy.dO));
        in.o = copy.o.get();
        in.lse = copy.lse.get();
        in.dO = copy.dO.get();
      }
      sets.push_back(in);
    }
    std::printf("timing with %zu input set%s rotated\n", sets.size(),
                sets.size() == 1 ? "" : "s");
    size_t call = 0;
    std::vector<PreparedLaunch> forwardBySet(sets.size());
    for (size_t set = 0; set < sets.size(); ++set)
      TILE_RETURN_IF_ERROR(forwardLaunch(sets[set], &forwardBySet[set]));
    double milliseconds;
    TILE_RETURN_IF_ERROR(session.benchmark(
        [&] { return session.launch(forwardBySet[call++ % sets.size()]); },
        &milliseconds));
    std::printf("bench fwd: %.3f ms  %.3f TFLOP/s\n", milliseconds,
                flops / (milliseconds * 1e9));
    // The report's "bench": how it timed, then each direction's median.
    auto timing = [](double ms, double rate) {
      return rt::JsonValue::makeObject(
          {{"ms", jsonNumber(ms)}, {"tflops", jsonNumber(rate)}});
    };
    std::vector<std::pair<std::string, rt::JsonValue>> bench = {
        {"sets", jsonInteger(static_cast<int64_t>(sets.size()))},
        {"warmup", jsonInteger(session.warmupRuns())},
        {"reps", jsonInteger(session.timedRuns())},
        {"fwd", timing(milliseconds, flops / (milliseconds * 1e9))}};
    if (backward) {
      std::vector<PreparedLaunch> preprocessBySet(sets.size()),
          gradientBySet(sets.size());
      for (size_t set = 0; set < sets.size(); ++set) {
        TILE_RETURN_IF_ERROR(
            preprocessLaunch(sets[set], &preprocessBySet[set]));
        TILE_RETURN_IF_ERROR(gradientLaunch(sets[set], &gradientBySet[set]));
      }
      call = 0;
      TILE_RETURN_IF_ERROR(session.benchmark(
          [&]() -> rt::Status {
            size_t set = call++ % sets.size();
            TILE_RETURN_IF_ERROR(session.launch(preprocessBySet[set]));
            TILE_RETURN_IF_ERROR(session.launch(gradientBySet[set]));
            return session.launch(postprocessRun);
          },
          &milliseconds));
      std::printf("bench bwd: %.3f ms  %.3f TFLOP/s\n", milliseconds,
                  2.5 * flops / (milliseconds * 1e9));
      bench.push_back(
          {"bwd", timing(milliseconds, 2.5 * flops / (milliseconds * 1e9))});
    }
    benchReport = rt::JsonValue::makeObject(std::move(bench));
    // With --check, every copy must compute what the checked set did: the
    // forward's outputs and dK, dV (dQ's atomic adds may round apart).
    if (options.has("check") && sets.size() > 1) {
      auto same = [&](const rt::ScopedBuffer &buffer, bool tensor,
                      const rt::HostArray &checked, const char *name,
                      size_t set) -> rt::Status {
        rt::HostArray again = checked;
        TILE_RETURN_IF_ERROR(tensor ? downloadTensor(buffer, &again)
                                    : session.download(buffer, &again));
        if (again.toDoubles() != checked.toDoubles())
          return rt::Status::error(
              "--bench: input set " + std::to_string(set) + " gave another " +
              name + " than the checked set: its copy of the inputs is wrong");
        return rt::Status::success();
      };
      for (size_t set = 1; set < sets.size(); ++set) {
        // The forward alone writes the shared O and LSE; the backward's
        // sets write their own copies of them.
        const Copies &copy = copies[set - 1];
        PreparedLaunch run;
        TILE_RETURN_IF_ERROR(forwardLaunch(sets[set], &run));
        TILE_RETURN_IF_ERROR(session.launch(run));
        TILE_RETURN_IF_ERROR(
            same(backward ? copy.o : oBuffer, true, o, "O", set));
        TILE_RETURN_IF_ERROR(
            same(backward ? copy.lse : lseBuffer, false, lse, "LSE", set));
        if (backward) {
          TILE_RETURN_IF_ERROR(preprocessLaunch(sets[set], &run));
          TILE_RETURN_IF_ERROR(session.launch(run));
          TILE_RETURN_IF_ERROR(gradientLaunch(sets[set], &run));
          TILE_RETURN_IF_ERROR(session.launch(run));
          TILE_RETURN_IF_ERROR(same(dkBuffer, true, dk, "dK", set));
          TILE_RETURN_IF_ERROR(same(dvBuffer, true, dv, "dV", set));
        }
      }
      std::printf("--bench: %zu input sets, each as the checked one\n",
                  sets.size());
    }
  }

  if (!reportPath.empty()) {
    std::vector<std::pair<std::string, rt::JsonValue>> kernels;
    for (const rt::KernelInfo *info :
         {forward, preprocess, gradient, postprocess})
      if (info)
        kernels.push_back(
            {info->kernel, rt::JsonValue::makeString(info->name)});
    auto text = [](const std::string &value) {
      return rt::JsonValue::makeString(value);
    };
    rt::JsonValue report = rt::JsonValue::makeObject({
        {"command", text("attention")},
        {"mode", text(mode)},
        {"backend", text(session.backend().name())},
        {"problem", rt::JsonValue::makeObject({
                        {"batch", jsonInteger(b)},
                        {"heads", jsonInteger(h)},
                        {"seq", jsonInteger(n)},
                        {"head_dim", jsonInteger(d)},
                        {"causal", rt::JsonValue::makeBool(problem.causal)},
                        {"causal_offset", jsonInteger(problem.causalOffset)},
                        {"dtype", text(dtypeName)},
                        {"layout", text(layout)},
                        {"sm_scale", jsonNumber(problem.smScale)},
                        {"seed", jsonInteger(seed)},
                    })},
        {"kernels", rt::JsonValue::makeObject(std::move(kernels))},
        {"checks", checkReport},
        {"pass", options.has("check") ? rt::JsonValue::makeBool(*passed)
                                      : rt::JsonValue()},
        {"bench", benchReport},
    });
    TILE_RETURN_IF_ERROR(writeReport(reportPath, report));
  }
  return rt::Status::success();
}
