package cacheview

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// PlanModel is the model a server runs, offered by the "price it" panel as "this model":
// its shape and the bytes its weights really take.
type PlanModel struct {
	Name         string
	Shape        plan.Shape
	WeightsBytes int64
}

// Planner answers GET /v1/plan and GET /v1/plan/presets with internal/plan's arithmetic, so
// that every number the page shows is the one `kvref plan` prints.
type Planner struct {
	This *PlanModel // nil: no "this model"
}

// PlanAnswer is GET /v1/plan's body.
type PlanAnswer struct {
	Plan  plan.JSON `json:"plan"`
	Notes []string  `json:"notes"`
	Curve Curve     `json:"curve"`
}

// Curve is sequences-that-fit against context for every cache type (plan.ComputeCurve).
type Curve = plan.Curve

// CurveSeries is one cache type's line of a Curve.
type CurveSeries = plan.CurveSeries

// PresetInfo is one entry of GET /v1/plan/presets.
type PresetInfo struct {
	Name    string `json:"name"`
	Repo    string `json:"repo,omitempty"`
	Layers  int    `json:"layers"`
	Heads   int    `json:"heads"`
	KVHeads int    `json:"kv_heads"`
	HeadDim int    `json:"head_dim"`
	Context int    `json:"context"`
}

// thisModel is the preset name of PlanModel.
const thisModel = "this"

// ServePresets lists "this model" (when there is one) and the presets.
func (p Planner) ServePresets(w http.ResponseWriter, r *http.Request) {
	var out []PresetInfo
	if p.This != nil {
		s := p.This.Shape
		out = append(out, PresetInfo{Name: thisModel, Repo: p.This.Name, Layers: s.Layers, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Context: s.Context})
	}
	for _, pr := range plan.Presets() {
		s := pr.Shape
		out = append(out, PresetInfo{Name: pr.Name, Repo: pr.Repo, Layers: s.Layers, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Context: s.Context})
	}
	writeJSON(w, http.StatusOK, out)
}

// ServePlan answers one planning question given in the query: preset=NAME (or "this"), or
// layers, kv_heads, head_dim (and optionally heads, dim, hidden, vocab); cache_dtype (or
// cache_type_k and cache_type_v; default f16), ctx (default the model's), block_size
// (default 16), mem (default this machine's available memory, pages.AvailableMemory), weights=SIZE or
// weights_dtype=T (default: this model's real bytes, else an f16 estimate). Bad input is a
// 400 that names the parameter.
func (p Planner) ServePlan(w http.ResponseWriter, r *http.Request) {
	ans, err := p.Answer(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

// Answer computes the plan for a query (see ServePlan).
func (p Planner) Answer(q url.Values) (PlanAnswer, error) {
	var notes []string
	name, from, shape, err := p.shape(q)
	if err != nil {
		return PlanAnswer{}, err
	}
	both := strings.TrimSpace(q.Get("cache_dtype"))
	if both == "" {
		both = "f16"
	}
	kType, vType, err := quant.ParseCacheTypes(both, q.Get("cache_type_k"), q.Get("cache_type_v"))
	if err != nil {
		return PlanAnswer{}, fmt.Errorf("plan: cache type: %w", err)
	}
	ctx, err := intParam(q, "ctx", shape.Context, 1)
	if err != nil {
		return PlanAnswer{}, err
	}
	if ctx == 0 {
		ctx = plan.DefaultContext
		notes = append(notes, fmt.Sprintf("context %d is a default: set ctx to plan another length", plan.DefaultContext))
	}
	bs, err := intParam(q, "block_size", kvcache.DefaultBlockSize, 1)
	if err != nil {
		return PlanAnswer{}, err
	}
	mem, memFrom, err := memory(q.Get("mem"))
	if err != nil {
		return PlanAnswer{}, err
	}
	wt, err := p.weights(q, name, shape)
	if err != nil {
		return PlanAnswer{}, err
	}
	weights, params, weightsFrom := wt.Bytes, wt.Params, wt.From
	if weightsFrom == "" {
		weightsFrom = "not counted"
		notes = append(notes, "the weights are not counted (the shape gives no parameter count): give weights, or heads, hidden and vocab")
	}
	in := plan.Input{Shape: shape, KType: kType, VType: vType, Context: ctx, BlockSize: bs, Memory: mem, Weights: weights,
		SharedPrefixes: plan.DefaultSharedPrefixes(ctx)}
	rep, err := plan.Compute(in)
	if plan.IsNoRoom(err) {
		notes = append(notes, fmt.Sprintf("the weights (%s) need more than the memory (%s): nothing is left for the KV cache",
			plan.FormatSize(weights), plan.FormatSize(mem)))
	} else if err != nil {
		return PlanAnswer{}, err
	}
	ans := PlanAnswer{Plan: rep.JSON(plan.ModelInfo{Name: name, From: from, Params: params}, memFrom, weightsFrom), Notes: notes}
	if ans.Notes == nil {
		ans.Notes = []string{}
	}
	ans.Curve = plan.ComputeCurve(in)
	return ans, nil
}

// shape resolves the model of a query: a preset, this model, or the shape parameters.
func (p Planner) shape(q url.Values) (name, from string, s plan.Shape, err error) {
	preset := strings.TrimSpace(q.Get("preset"))
	if preset == "" && q.Get("layers") == "" && p.This != nil {
		preset = thisModel
	}
	switch {
	case preset == thisModel && p.This != nil:
		return p.This.Name, "the served model", p.This.Shape, nil
	case preset != "":
		pr, err := plan.LookupPreset(preset)
		if err != nil {
			return "", "", s, err
		}
		return pr.Name, pr.Repo, pr.Shape, nil
	}
	for _, f := range []struct {
		key string
		dst *int
		min int
	}{{"layers", &s.Layers, 1}, {"kv_heads", &s.KVHeads, 1}, {"head_dim", &s.HeadDim, 1},
		{"heads", &s.Heads, 0}, {"dim", &s.Dim, 0}, {"hidden", &s.Hidden, 0}, {"vocab", &s.Vocab, 0}} {
		if *f.dst, err = intParam(q, f.key, 0, f.min); err != nil {
			return "", "", s, err
		}
		if f.min > 0 && *f.dst == 0 {
			return "", "", s, fmt.Errorf("plan: give preset=NAME, or layers, kv_heads and head_dim; %s is missing", f.key)
		}
	}
	s = s.DefaultDim()
	if err := s.Validate(); err != nil {
		return "", "", s, err
	}
	return "shape", "parameters", s, nil
}

// weights decides the weights' bytes as kvref plan does (plan.ChooseWeights): weights=SIZE,
// weights_dtype=T × the parameter count, this model's real bytes, an f16 estimate, or
// nothing ("" From).
func (p Planner) weights(q url.Values, name string, s plan.Shape) (plan.Weights, error) {
	size, dtype := strings.TrimSpace(q.Get("weights")), strings.TrimSpace(q.Get("weights_dtype"))
	c := plan.WeightsChoice{Given: size != "", Dtype: dtype, Model: -1, ModelFrom: "the model's tensors"}
	if c.Given && dtype == "" {
		n, err := plan.ParseSize(size)
		if err != nil {
			return plan.Weights{}, fmt.Errorf("plan: weights: %w", err)
		}
		c.Bytes, c.GivenFrom = n, fmt.Sprintf("weights %s = %d B", size, n)
	}
	if p.This != nil && name == p.This.Name && s == p.This.Shape {
		c.Model = p.This.WeightsBytes
	}
	w, err := plan.ChooseWeights(s, c)
	switch {
	case errors.Is(err, plan.ErrWeightsTwice):
		return w, errors.New("plan: give weights=SIZE or weights_dtype=T, not both")
	case errors.Is(err, plan.ErrWeightsNeedParams):
		return w, errors.New("plan: weights_dtype needs the parameter count, so the shape needs heads, hidden and vocab too (or give weights=SIZE)")
	}
	return w, err
}

// memory reads mem=SIZE, or this machine's available memory.
func memory(text string) (int64, string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		n, source, err := pages.AvailableMemory()
		if err != nil {
			return 0, "", fmt.Errorf("%v; say how much memory to plan for with mem=SIZE (e.g. mem=16GiB)", err)
		}
		return n, fmt.Sprintf("this machine's %s, %d B", source, n), nil
	}
	n, err := plan.ParseSize(text)
	if err != nil {
		return 0, "", fmt.Errorf("plan: mem: %w", err)
	}
	return n, fmt.Sprintf("mem %s = %d B", text, n), nil
}

// intParam reads an integer parameter ≥ min, or def when absent.
func intParam(q url.Values, key string, def, min int) (int, error) {
	text := strings.TrimSpace(q.Get(key))
	if text == "" {
		return def, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < min {
		return 0, fmt.Errorf("plan: %s must be a whole number ≥ %d, got %q", key, min, text)
	}
	return n, nil
}
