// Package logit is the one home of the small arithmetic on a vector of logits that the
// engine, the server, the golden recorder and the command all need: softmax and
// log-softmax in float64, the top k, the rank of a token, argmax, and the sampling seed of
// continuation i. Every function has one fixed order of operations, so the same logits
// always give the same bits, and ties always go to the lower token id.
package logit

import (
	"math"
	"slices"
)

// Argmax returns the index of the largest logit (the lowest index on ties; NaN never wins
// over a number).
func Argmax(logits []float32) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] || (logits[best] != logits[best] && v == v) {
			best = i
		}
	}
	return best
}

// LogSumExp returns ln Σ exp(l_i) in float64, as m + ln Σ exp(l_i − m) with m the largest
// logit, summed in vocabulary order.
func LogSumExp(logits []float32) float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	sum := 0.0
	for _, l := range logits {
		sum += math.Exp(float64(l) - m)
	}
	return m + math.Log(sum)
}

// LogSoftmax returns log-softmax(logits) in float64: l_i − LogSumExp(logits).
func LogSoftmax(logits []float32) []float64 {
	lse := LogSumExp(logits)
	out := make([]float64, len(logits))
	for i, l := range logits {
		out[i] = float64(l) - lse
	}
	return out
}

// Softmax returns the probabilities exp(l_i − m) / Σ exp(l_j − m) in float64: the model's
// own distribution, before temperature and any sampling filter.
func Softmax(logits []float32) []float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	p := make([]float64, len(logits))
	sum := 0.0
	for i, l := range logits {
		p[i] = math.Exp(float64(l) - m)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// better orders two entries of v: the larger value first, ties by lower index, NaN last.
func better[F float32 | float64](v []F, a, b int) int {
	an, bn := v[a] != v[a], v[b] != v[b]
	switch {
	case an && bn:
		return a - b
	case an:
		return 1
	case bn:
		return -1
	case v[a] > v[b]:
		return -1
	case v[a] < v[b]:
		return 1
	}
	return a - b
}

// TopK returns the indices of the k largest values of v (logits or log-probabilities),
// largest first, ties by lower index, NaN last; fewer when v is shorter. It keeps a sorted
// list of k, so it costs O(len(v)·log k) and allocates only the result.
func TopK[F float32 | float64](v []F, k int) []int {
	k = min(k, len(v))
	if k <= 0 {
		return nil
	}
	cmp := func(a, b int) int { return better(v, a, b) }
	top := make([]int, 0, k+1)
	for id := range v {
		if len(top) == k && cmp(id, top[k-1]) > 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, id, cmp)
		top = slices.Insert(top, i, id)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// TopPairs returns the k highest logits as [id, logit] pairs, best first (the order of
// TopK), both as float64: the "top" of a kvref run --json line.
func TopPairs(logits []float32, k int) [][2]float64 {
	ids := TopK(logits, k)
	out := make([][2]float64, len(ids))
	for i, id := range ids {
		out[i] = [2]float64{float64(id), float64(logits[id])}
	}
	return out
}

// Rank is id's place when the logits are sorted best first (1 for the most likely; ties:
// lower id first).
func Rank(logits []float32, id int) int {
	r := 1
	for i := range logits {
		if better(logits, i, id) < 0 {
			r++
		}
	}
	return r
}

// ContinuationSeed derives the sampling seed of continuation i (a fork, an n > 1 choice, a
// stepping session's sequence i) from a request's seed. Continuation 0 uses the seed
// itself, so one continuation samples exactly like a plain run with the same seed.
func ContinuationSeed(seed uint64, i int) uint64 { return seed + uint64(i)*0x9e3779b97f4a7c15 }
