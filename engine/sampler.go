package engine

import (
	"math"
	"slices"

	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/internal/rng"
)

// Sampling holds the sampling parameters of a request, with llama.cpp's meanings.
type Sampling struct {
	Temperature float64 `json:"temperature"` // ≤ 0: greedy (argmax)
	TopK        int     `json:"top_k"`       // keep the K most likely tokens (≤ 0: all)
	TopP        float64 `json:"top_p"`       // keep the smallest set whose probability reaches P (≥ 1: all)
	MinP        float64 `json:"min_p"`       // drop tokens less likely than MinP × the most likely (≤ 0: none)
	Seed        uint64  `json:"seed"`        // the same seed gives the same tokens
}

// Greedy reports whether sampling is plain argmax.
func (s Sampling) Greedy() bool { return s.Temperature <= 0 }

// Sampler draws tokens from logits. The filters run in llama.cpp's default order: top-k,
// top-p, min-p, then temperature, then a draw from the remaining distribution.
type Sampler struct {
	params Sampling
	rng    *rng.SplitMix64
	cand   []candidate
}

type candidate struct {
	id    int
	logit float64
	p     float64
}

// NewSampler returns a sampler seeded with params.Seed.
func NewSampler(params Sampling) *Sampler {
	return &Sampler{params: params, rng: rng.New(params.Seed)}
}

// Sample chooses the next token from logits.
func (s *Sampler) Sample(logits []float32) int {
	p := s.params
	if p.Greedy() {
		return logit.Argmax(logits)
	}
	c := s.cand[:0]
	for id, l := range logits {
		c = append(c, candidate{id: id, logit: float64(l)})
	}
	// Sort by logit, best first (ties by id, so the order is fully determined).
	slices.SortFunc(c, func(a, b candidate) int {
		switch {
		case a.logit > b.logit:
			return -1
		case a.logit < b.logit:
			return 1
		}
		return a.id - b.id
	})
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	if p.TopP > 0 && p.TopP < 1 {
		softmax(c, 1)
		cum := 0.0
		for i := range c {
			cum += c[i].p
			if cum >= p.TopP {
				c = c[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		floor := c[0].logit + math.Log(p.MinP)
		n := 1
		for n < len(c) && c[n].logit >= floor {
			n++
		}
		c = c[:n]
	}
	softmax(c, p.Temperature)
	s.cand = c
	u := s.rng.Float64()
	cum := 0.0
	for _, x := range c {
		cum += x.p
		if u < cum {
			return x.id
		}
	}
	return c[len(c)-1].id
}

// softmax sets p of sorted candidates from logit/temp.
func softmax(c []candidate, temp float64) {
	sum := 0.0
	for i := range c {
		c[i].p = math.Exp((c[i].logit - c[0].logit) / temp)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}
