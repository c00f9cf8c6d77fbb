package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/kvref/kvref/internal/logit"
)

// Logprob is a token id and its log-probability. In JSON it is the pair [id, logprob], the
// shape of kvref's top_logprobs_ids; NaN and ±Infinity are written as the strings "NaN",
// "Infinity" and "-Infinity" (JSON has no such numbers) and read back from either form.
type Logprob struct {
	ID      int
	Logprob float64
}

// MarshalJSON writes [id, logprob].
func (l Logprob) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "[%d,%s]", l.ID, Float(l.Logprob).text()), nil
}

// UnmarshalJSON reads [id, logprob].
func (l *Logprob) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("golden: a logprob must be [id, logprob], got %s", truncate(b))
	}
	var id float64
	if err := json.Unmarshal(pair[0], &id); err != nil || id != math.Trunc(id) || math.Abs(id) > 1<<53 {
		return fmt.Errorf("golden: a logprob's token id must be an integer, got %s", truncate(pair[0]))
	}
	var f Float
	if err := f.UnmarshalJSON(pair[1]); err != nil {
		return err
	}
	l.ID, l.Logprob = int(id), float64(f)
	return nil
}

// Float is a float64 whose JSON form may also be "NaN", "Infinity" or "-Infinity" (as
// strings, or as the bare words Python's json module writes; see cleanJSON).
type Float float64

func (f Float) text() string {
	switch v := float64(f); {
	case math.IsNaN(v):
		return `"NaN"`
	case math.IsInf(v, 1):
		return `"Infinity"`
	case math.IsInf(v, -1):
		return `"-Infinity"`
	default:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
}

// MarshalJSON writes the number, or a string for NaN and infinities.
func (f Float) MarshalJSON() ([]byte, error) { return []byte(f.text()), nil }

// UnmarshalJSON reads a number or one of the strings "NaN", "Infinity", "-Infinity".
func (f *Float) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "NaN":
			*f = Float(math.NaN())
		case "Infinity", "inf", "+Infinity":
			*f = Float(math.Inf(1))
		case "-Infinity", "-inf":
			*f = Float(math.Inf(-1))
		default:
			return fmt.Errorf("golden: %q is not a number", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("golden: %s is not a number", truncate(b))
	}
	*f = Float(v)
	return nil
}

// cleanJSON rewrites the bare words NaN, Infinity and -Infinity outside strings — which
// Python's json module writes but JSON does not allow — as strings that Float reads.
func cleanJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		word := ""
		for _, w := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(b[i:], []byte(w)) {
				word = w
				break
			}
		}
		if word != "" {
			out = append(out, '"')
			out = append(out, word...)
			out = append(out, '"')
			i += len(word) - 1
			continue
		}
		if c == '"' {
			inString = true
		}
		out = append(out, c)
	}
	return out
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// LogSoftmax returns log-softmax(logits) computed in float64 (logit.LogSoftmax).
func LogSoftmax(logits []float32) []float64 { return logit.LogSoftmax(logits) }

// TopK returns the k most likely tokens of a log-probability vector, most likely first
// (ties by lower id).
func TopK(lp []float64, k int) []Logprob {
	ids := logit.TopK(lp, k)
	out := make([]Logprob, len(ids))
	for i, id := range ids {
		out[i] = Logprob{ID: id, Logprob: lp[id]}
	}
	return out
}

// compareLogprobs orders most likely first, ties by lower id, NaN last (logit.TopK's order).
func compareLogprobs(a, b Logprob) int {
	an, bn := math.IsNaN(a.Logprob), math.IsNaN(b.Logprob)
	switch {
	case an && bn:
		return a.ID - b.ID
	case an:
		return 1
	case bn:
		return -1
	case a.Logprob > b.Logprob:
		return -1
	case a.Logprob < b.Logprob:
		return 1
	}
	return a.ID - b.ID
}

// Margin returns the distance between the two largest log-probabilities (equal to the
// distance between the two largest logits): how far the top token is from a tie.
func Margin(lp []float64) float64 {
	if len(lp) < 2 {
		return math.Inf(1)
	}
	first, second := math.Inf(-1), math.Inf(-1)
	for _, v := range lp {
		switch {
		case v > first:
			first, second = v, first
		case v > second:
			second = v
		}
	}
	return first - second
}

// Step is one generated token of a golden: the chosen id, its log-probability, the margin
// between the two most likely tokens, and the top-k log-probabilities.
type Step struct {
	ID      int       `json:"id"`
	Logprob float64   `json:"logprob"`
	Margin  float64   `json:"margin"`
	Top     []Logprob `json:"top"`
}

// newStep summarises the logits a token was chosen from.
func newStep(logits []float32, id, k int) Step {
	lp := LogSoftmax(logits)
	return Step{ID: id, Logprob: lp[id], Margin: Margin(lp), Top: TopK(lp, k)}
}
