package plan

import (
	"errors"
	"fmt"
)

// WeightsChoice is what a planner's caller knows about the weights' size. ChooseWeights
// takes the first that applies: a size given, a weight type × the parameter count, the
// model's real bytes, an estimate at DefaultWeightType from the parameter count.
type WeightsChoice struct {
	Given     bool   // a size was given
	Bytes     int64  // the size given
	GivenFrom string // how the given size is described ("--weights 14GB = 14000000000 B")
	Dtype     string // a weight type name to estimate with; "" for none
	Model     int64  // the model's real bytes; < 0 when there is no model
	ModelFrom string // how the model's bytes are described ("the file's tensors")
}

// Weights is the weights' size ChooseWeights settled on: bytes, the parameter count (0 when
// unknown) and where the bytes come from ("" when nothing could count them: Bytes is 0).
type Weights struct {
	Bytes, Params int64
	From          string
}

// ErrWeightsTwice is ChooseWeights' error for a size and a weight type given together.
var ErrWeightsTwice = errors.New("plan: give the weights' size or their type, not both")

// ErrWeightsNeedParams is ChooseWeights' error for a weight type given for a shape whose
// parameter count is unknown (it needs heads, hidden and vocab).
var ErrWeightsNeedParams = errors.New("plan: a weight type needs the parameter count: the shape needs heads, hidden and vocab")

// ChooseWeights decides the weights' bytes of a model of shape s (see WeightsChoice).
func ChooseWeights(s Shape, c WeightsChoice) (Weights, error) {
	params, known := s.Params()
	w := Weights{Params: params}
	switch {
	case c.Given && c.Dtype != "":
		return w, ErrWeightsTwice
	case c.Given:
		w.Bytes, w.From = c.Bytes, c.GivenFrom
	case c.Dtype != "":
		t, err := ParseWeightType(c.Dtype)
		if err != nil {
			return w, err
		}
		if !known {
			return w, ErrWeightsNeedParams
		}
		w.Bytes, w.From = t.Estimate(params)
	case c.Model >= 0:
		w.Bytes, w.From = c.Model, c.ModelFrom
	case known:
		w.Bytes, w.From = DefaultWeightType.Estimate(params)
	}
	return w, nil
}

// Estimate is the bytes of params weights of this type, and the arithmetic as one line.
func (t WeightType) Estimate(params int64) (int64, string) {
	return t.Bytes(params), fmt.Sprintf("%s estimate: %d parameters × %g bits", t.Name, params, t.BitsPerWeight())
}

// DefaultSharedPrefixes are the prefix lengths planned when none is asked for: none (the
// baseline), then ¼, ½ and ¾ of the context, each kept only when longer than the one before.
func DefaultSharedPrefixes(context int) []int {
	out := []int{0}
	for _, n := range []int{context / 4, context / 2, 3 * context / 4} {
		if n > out[len(out)-1] {
			out = append(out, n)
		}
	}
	return out
}

// DefaultDim returns s with its embedding width set to heads · head_dim when it is unknown
// and the heads are known, as for a shape given by its head counts alone.
func (s Shape) DefaultDim() Shape {
	if s.Dim == 0 && s.Heads > 0 {
		s.Dim = s.Heads * s.HeadDim
	}
	return s
}
