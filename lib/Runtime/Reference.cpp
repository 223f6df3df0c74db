//===- Reference.cpp - Float64 reference computations ---------------------===//

#include "tile/Runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace tile::rt;

std::vector<double> tile::rt::referenceSoftmax(const std::vector<double> &x,
                                               int64_t rows, int64_t cols) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double *in = x.data() + r * cols;
    double *out = y.data() + r * cols;
    double maximum = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c)
      maximum = std::max(maximum, in[c]);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += out[c] = std::exp(in[c] - maximum);
    for (int64_t c = 0; c < cols; ++c)
      out[c] /= sum;
  }
  return y;
}

int64_t AttentionProblem::visibleKeys(int64_t row) const {
  if (!causal || causalOffset >= seq)
    return seq;
  if (causalOffset < -seq)
    return 0; // also keeps row + causalOffset from overflowing
  return std::clamp<int64_t>(row + causalOffset + 1, 0, seq);
}

namespace {
/// Probabilities P (n x n, row-major) of one head, and each row's LSE; a
/// row that sees no key has P = 0 and LSE -inf (the log of an empty sum).
void headProbabilities(const AttentionProblem &p, const double *q,
                       const double *k, std::vector<double> &probs,
                       double *lse) {
  int64_t n = p.seq, d = p.headDim;
  probs.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double *row = probs.data() + i * n;
    int64_t visible = p.visibleKeys(i);
    double maximum = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < visible; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c)
        dot += q[i * d + c] * k[j * d + c];
      row[j] = dot * p.smScale;
      maximum = std::max(maximum, row[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < visible; ++j)
      sum += row[j] = std::exp(row[j] - maximum);
    for (int64_t j = 0; j < visible; ++j)
      row[j] /= sum;
    if (lse)
      lse[i] = visible ? maximum + std::log(sum)
                       : -std::numeric_limits<double>::infinity();
  }
}
} // namespace

void tile::rt::referenceAttentionForward(const AttentionProblem &p,
                                         const std::vector<double> &q,
                                         const std::vector<double> &k,
                                         const std::vector<double> &v,
                                         std::vector<double> *o,
                                         std::vector<double> *lse) {
  int64_t n = p.seq, d = p.headDim;
  o->assign(p.tensorSize(), 0.0);
  lse->assign(p.rowCount(), 0.0);
  std::vector<double> probs;
  for (int64_t head = 0; head < p.batch * p.heads; ++head) {
    size_t base = static_cast<size_t>(head * n * d);
    headProbabilities(p, q.data() + base, k.data() + base, probs,
                      lse->data() + head * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double weight = probs[i * n + j];
        if (weight == 0)
          continue;
        for (int64_t c = 0; c < d; ++c)
          (*o)[base + i * d + c] += weight * v[base + j * d + c];
      }
  }
}

void tile::rt::referenceAttentionBackward(
    const AttentionProblem &p, const std::vector<double> &q,
    const std::vector<double> &k, const std::vector<double> &v,
    const std::vector<double> &dO, std::vector<double> *dq,
    std::vector<double> *dk, std::vector<double> *dv) {
  int64_t n = p.seq, d = p.headDim;
  dq->assign(p.tensorSize(), 0.0);
  dk->assign(p.tensorSize(), 0.0);
  dv->assign(p.tensorSize(), 0.0);
  std::vector<double> probs, dS(static_cast<size_t>(n * n));
  for (int64_t head = 0; head < p.batch * p.heads; ++head) {
    size_t base = static_cast<size_t>(head * n * d);
    const double *qh = q.data() + base, *kh = k.data() + base,
                 *vh = v.data() + base, *dOh = dO.data() + base;
    headProbabilities(p, qh, kh, probs, nullptr);
    for (int64_t i = 0; i < n; ++i) {
      // dP_ij = dO_i . v_j;  dS_ij = P_ij (dP_ij - sum_l P_il dP_il).
      double rowDot = 0;
      for (int64_t j = 0; j < n; ++j) {
        double dP = 0;
        if (probs[i * n + j] != 0)
          for (int64_t c = 0; c < d; ++c)
            dP += dOh[i * d + c] * vh[j * d + c];
        dS[i * n + j] = dP;
        rowDot += probs[i * n + j] * dP;
      }
      for (int64_t j = 0; j < n; ++j)
        dS[i * n + j] = probs[i * n + j] * (dS[i * n + j] - rowDot);
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double pij = probs[i * n + j], sij = dS[i * n + j] * p.smScale;
        if (pij == 0 && sij == 0)
          continue;
        for (int64_t c = 0; c < d; ++c) {
          (*dv)[base + j * d + c] += pij * dOh[i * d + c];
          (*dq)[base + i * d + c] += sij * kh[j * d + c];
          (*dk)[base + j * d + c] += sij * qh[i * d + c];
        }
      }
  }
}

uint64_t Random::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Random::skip(uint64_t draws) {
  state += draws * 0x9E3779B97F4A7C15ull;
  haveSpare = false;
}

double Random::uniform() { return (next() >> 11) * 0x1.0p-53; }

double Random::normal() {
  if (haveSpare) {
    haveSpare = false;
    return spare;
  }
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300)
    u1 = 1e-300;
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 2.0 * M_PI * u2;
  spare = radius * std::sin(angle);
  haveSpare = true;
  return radius * std::cos(angle);
}
