//===- Reference.h - Float64 reference computations -------------*- C++ -*-===//
//
// What every shipped kernel must compute, in double precision on the host,
// from the very inputs the kernel saw (already rounded to its dtype).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_REFERENCE_H
#define TILE_RUNTIME_REFERENCE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tile::rt {

/// Softmax of each row of a contiguous [rows, cols] matrix.
std::vector<double> referenceSoftmax(const std::vector<double> &x, int64_t rows,
                                     int64_t cols);

/// Attention over contiguous [batch, heads, seq, headDim] tensors.
struct AttentionProblem {
  int64_t batch = 1, heads = 1, seq = 1, headDim = 64;
  /// Key j is visible to query i iff j <= i + causalOffset (any value; the
  /// offset means nothing without causal). A row that sees no key has out
  /// 0, LSE -inf and zero gradients.
  bool causal = false;
  int64_t causalOffset = 0;
  double smScale = 0.125;

  /// How many keys (0, 1, ..., seq) query `row` sees.
  int64_t visibleKeys(int64_t row) const;

  size_t tensorSize() const {
    return static_cast<size_t>(batch * heads * seq * headDim);
  }
  size_t rowCount() const { return static_cast<size_t>(batch * heads * seq); }
};

/// O = softmax(sm_scale * Q K^T) V, and LSE [batch*heads, seq], the natural
/// log of sum_j exp(sm_scale * q_i . k_j) over the keys row i sees (-inf,
/// with O 0, when it sees none).
void referenceAttentionForward(const AttentionProblem &problem,
                               const std::vector<double> &q,
                               const std::vector<double> &k,
                               const std::vector<double> &v,
                               std::vector<double> *o,
                               std::vector<double> *lse);

/// dQ, dK, dV of sum(O * dO) for the forward above.
void referenceAttentionBackward(
    const AttentionProblem &problem, const std::vector<double> &q,
    const std::vector<double> &k, const std::vector<double> &v,
    const std::vector<double> &dO, std::vector<double> *dq,
    std::vector<double> *dk, std::vector<double> *dv);

/// Seeded, platform-independent random numbers (splitmix64).
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform();
  /// Standard normal (Box-Muller): each pair of values takes two draws.
  double normal();
  /// Moves the stream `draws` draws ahead in constant time (splitmix64 is a
  /// counter), dropping a pending Box-Muller value: after skip(2 * i), the
  /// next normal() is the (2 * i)-th of the stream.
  void skip(uint64_t draws);

private:
  uint64_t state;
  bool haveSpare = false;
  double spare = 0;
};

} // namespace tile::rt

#endif // TILE_RUNTIME_REFERENCE_H
