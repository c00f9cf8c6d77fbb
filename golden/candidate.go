package golden

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kvref/kvref/internal/writefile"
)

// Candidate is what another engine produced for the scenarios of a golden directory.
type Candidate struct {
	Engine    string                        // free text: which engine, version and flags
	Control   bool                          // the run had the candidate's prefix cache disabled
	Scenarios map[string]*CandidateScenario // by scenario name
}

// CandidateScenario is a candidate's result for one scenario.
type CandidateScenario struct {
	Name     string
	Requests map[string]*CandidateRequest // by request id
	Notes    []string                     // what the driver could not do (a flush without a flush URL, say)
}

// CandidateRequest is a candidate's result for one request.
type CandidateRequest struct {
	ID            string
	Choices       [][]CandidateStep // per continuation, the steps in the order reported
	CachedTokens  *int              // prompt tokens the candidate reports it took from its cache; nil: not reported
	CacheEvidence string            // where CachedTokens was read from (Evidence*; "": EvidenceCachedTokens when set)
	PromptTokens  *int              // prompt tokens the candidate reports it received; nil: not reported
	FinishReasons []string          // per continuation, as the candidate reports them
	Cancelled     bool              // the driver cancelled the request
	Error         string            // the candidate failed the request (with Unsupported: why it refused)
	Unsupported   string            // the feature (Feature*) the candidate refused before producing tokens; "": none
	// PromptSteps are the candidate's log-probabilities of the prompt's tokens, for a
	// request with prompt_logprobs: Step is the prompt position (1 to n−1); nil: none reported.
	PromptSteps []CandidateStep
	// Transport is the transport error that ended the request (connection refused or
	// reset, a timeout): the request says nothing about the candidate. "": none.
	Transport string
}

// evidence returns where the request's cached tokens were read from.
func (r *CandidateRequest) evidence() string {
	switch {
	case r.CachedTokens == nil:
		return EvidenceNone
	case r.CacheEvidence == "":
		return EvidenceCachedTokens
	}
	return r.CacheEvidence
}

// CandidateStep is one generated token as a candidate reports it.
type CandidateStep struct {
	Step    int       // index within the continuation as reported (-1: not reported)
	ID      int       // the chosen token
	Logprob *float64  // its log-probability (nil: only in Top, or not reported)
	Top     []Logprob // the top log-probabilities, most likely first
}

// tokens returns how many tokens the request has received over all continuations.
func (r *CandidateRequest) tokens() int {
	n := 0
	for _, c := range r.Choices {
		n += len(c)
	}
	return n
}

// chosenLogprob returns the step's log-probability of its chosen token, from Logprob or
// from Top.
func (s CandidateStep) chosenLogprob() (float64, bool) {
	if s.Logprob != nil {
		return *s.Logprob, true
	}
	for _, t := range s.Top {
		if t.ID == s.ID {
			return t.Logprob, true
		}
	}
	return 0, false
}

// NewCandidate returns an empty candidate.
func NewCandidate(engine string) *Candidate {
	return &Candidate{Engine: engine, Scenarios: map[string]*CandidateScenario{}}
}

// scenario returns (creating) the scenario's record.
func (c *Candidate) scenario(name string) *CandidateScenario {
	s := c.Scenarios[name]
	if s == nil {
		s = &CandidateScenario{Name: name, Requests: map[string]*CandidateRequest{}}
		c.Scenarios[name] = s
	}
	return s
}

// request returns (creating) the request's record.
func (s *CandidateScenario) request(id string) *CandidateRequest {
	r := s.Requests[id]
	if r == nil {
		r = &CandidateRequest{ID: id}
		s.Requests[id] = r
	}
	return r
}

// choice returns (growing the list) continuation i's steps.
func (r *CandidateRequest) choice(i int) *[]CandidateStep {
	for len(r.Choices) <= i {
		r.Choices = append(r.Choices, nil)
	}
	return &r.Choices[i]
}

// dumpLine is one line of a candidate dump. A header line has "format"; a step line has
// "step"; a request line has neither.
type dumpLine struct {
	Format  string `json:"format,omitempty"`
	Engine  string `json:"engine,omitempty"`
	Control bool   `json:"control,omitempty"`

	Scenario string    `json:"scenario,omitempty"`
	Request  string    `json:"request,omitempty"`
	Choice   int       `json:"choice,omitempty"`
	Step     *int      `json:"step,omitempty"`
	ID       *int      `json:"id,omitempty"`
	Logprob  *Float    `json:"logprob,omitempty"`
	Top      []Logprob `json:"top,omitempty"`
	Prompt   bool      `json:"prompt,omitempty"` // a prompt token's line: step is its position

	CachedTokens  *int     `json:"cached_tokens,omitempty"`
	CacheEvidence string   `json:"cache_evidence,omitempty"`
	PromptTokens  *int     `json:"prompt_tokens,omitempty"`
	FinishReasons []string `json:"finish_reasons,omitempty"`
	Cancelled     bool     `json:"cancelled,omitempty"`
	Error         string   `json:"error,omitempty"`
	Unsupported   string   `json:"unsupported,omitempty"`
	Transport     string   `json:"transport_error,omitempty"`
}

// ReadDump reads a candidate dump: JSON Lines as documented in docs/golden.md. Blank lines
// and lines starting with # are skipped; the bare words NaN and Infinity that Python's json
// module writes are accepted.
func ReadDump(r io.Reader) (*Candidate, error) {
	c := NewCandidate("")
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var l dumpLine
		dec := json.NewDecoder(bytes.NewReader(cleanJSON(line)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("golden: candidate dump line %d: %w", n, err)
		}
		switch {
		case l.Format != "":
			if l.Format != CandidateFormat {
				return nil, fmt.Errorf("golden: candidate dump line %d: format %q, want %q", n, l.Format, CandidateFormat)
			}
			c.Engine, c.Control = l.Engine, l.Control
			continue
		case l.Scenario == "" || l.Request == "":
			return nil, fmt.Errorf("golden: candidate dump line %d: needs \"scenario\" and \"request\"", n)
		case l.Choice < 0:
			return nil, fmt.Errorf("golden: candidate dump line %d: choice %d is negative", n, l.Choice)
		}
		req := c.scenario(l.Scenario).request(l.Request)
		if l.Step == nil {
			if l.ID != nil || l.Top != nil || l.Logprob != nil {
				return nil, fmt.Errorf("golden: candidate dump line %d: a token line needs \"step\"", n)
			}
			if l.CacheEvidence != "" && l.CachedTokens == nil {
				return nil, fmt.Errorf("golden: candidate dump line %d: \"cache_evidence\" needs \"cached_tokens\"", n)
			}
			req.CachedTokens, req.CacheEvidence, req.PromptTokens = l.CachedTokens, l.CacheEvidence, l.PromptTokens
			req.FinishReasons, req.Cancelled, req.Error, req.Unsupported = l.FinishReasons, l.Cancelled, l.Error, l.Unsupported
			req.Transport = l.Transport
			continue
		}
		if l.ID == nil {
			return nil, fmt.Errorf("golden: candidate dump line %d: a token line needs \"id\"", n)
		}
		st := CandidateStep{Step: *l.Step, ID: *l.ID, Top: l.Top}
		if l.Logprob != nil {
			v := float64(*l.Logprob)
			st.Logprob = &v
		}
		slices.SortStableFunc(st.Top, compareLogprobs)
		if l.Prompt {
			req.PromptSteps = append(req.PromptSteps, st)
			continue
		}
		steps := req.choice(l.Choice)
		*steps = append(*steps, st)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("golden: reading candidate dump: %w", err)
	}
	return c, nil
}

// ReadDumpFile reads a candidate dump from a file.
func ReadDumpFile(path string) (*Candidate, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := ReadDump(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// WriteDump writes a candidate as a dump, scenarios and requests in name order, steps in
// the order they were reported: a header line, then per request its step lines and a
// request line.
func WriteDump(w io.Writer, c *Candidate) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(dumpLine{Format: CandidateFormat, Engine: c.Engine, Control: c.Control}); err != nil {
		return err
	}
	for _, name := range sortedKeys(c.Scenarios) {
		s := c.Scenarios[name]
		for _, id := range sortedKeys(s.Requests) {
			r := s.Requests[id]
			for _, st := range r.PromptSteps {
				l := dumpLine{Scenario: name, Request: id, Step: &st.Step, ID: &st.ID, Top: st.Top, Prompt: true}
				if st.Logprob != nil {
					f := Float(*st.Logprob)
					l.Logprob = &f
				}
				if err := enc.Encode(l); err != nil {
					return err
				}
			}
			for ci, steps := range r.Choices {
				for _, st := range steps {
					l := dumpLine{Scenario: name, Request: id, Choice: ci, Step: &st.Step, ID: &st.ID, Top: st.Top}
					if st.Logprob != nil {
						f := Float(*st.Logprob)
						l.Logprob = &f
					}
					if err := enc.Encode(l); err != nil {
						return err
					}
				}
			}
			l := dumpLine{Scenario: name, Request: id, CachedTokens: r.CachedTokens, CacheEvidence: r.CacheEvidence, PromptTokens: r.PromptTokens,
				FinishReasons: r.FinishReasons, Cancelled: r.Cancelled, Error: r.Error, Unsupported: r.Unsupported, Transport: r.Transport}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// WriteDumpFile writes a candidate dump to a file.
func WriteDumpFile(path string, c *Candidate) error {
	return writefile.Write(path, func(w io.Writer) error { return WriteDump(w, c) })
}
