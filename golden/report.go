package golden

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Status is a scenario's verdict.
type Status string

// The verdicts. Only StatusPass is a pass.
const (
	StatusPass    Status = "pass"
	StatusFail    Status = "fail"
	StatusVacuous Status = "vacuous" // correct output, but the cache path it is about was not exercised
	StatusMissing Status = "missing" // the candidate has no result for the scenario
	// StatusUnsupported: the candidate refused a feature the scenario needs (n > 1, a
	// parameter, token-id prompts), recognisably and before producing tokens.
	StatusUnsupported Status = "unsupported"
	// StatusError: a request of the scenario failed on transport (connection refused or
	// reset, a timeout): nothing is known about the candidate's cache from it. Not a pass,
	// and not a failure of the cache.
	StatusError Status = "error"
)

// The kinds of failure.
const (
	KindToken       = "token"       // a chosen token differs from the reference argmax beyond the margin tolerance
	KindLogprob     = "logprob"     // a log-probability differs beyond the tolerance
	KindInvalid     = "invalid"     // NaN, infinite or positive log-probability
	KindVocab       = "vocab"       // a token id outside the vocabulary
	KindRepeat      = "repeat"      // a degenerate run of identical tokens
	KindDropped     = "dropped"     // a token or step is missing
	KindDuplicated  = "duplicated"  // a token or step appears twice
	KindLength      = "length"      // more or fewer tokens than the request must produce
	KindSample      = "sample"      // a sampled token the reference finds implausible
	KindChoices     = "choices"     // the wrong number of continuations
	KindCrossWired  = "cross-wired" // a request returned another request's output
	KindPrompt      = "prompt"      // the candidate received a different prompt
	KindControl     = "control"     // a control run reported cache hits
	KindMissing     = "missing"     // a scenario or request without result
	KindError       = "error"       // the candidate failed the request
	KindUnsupported = "unsupported" // the candidate refused a feature that VerifyOptions.Require demands
	KindCache       = "cache"       // an impossible count of cached prompt tokens
	KindTransport   = "transport"   // a request failed on transport (refused, reset, timed out): an error outcome
)

// Report is the outcome of verifying a candidate against goldens.
type Report struct {
	Golden         string            `json:"golden"`    // the golden directory
	Candidate      string            `json:"candidate"` // the dump file or target URL
	Engine         string            `json:"engine,omitempty"`
	TeacherForcing bool              `json:"teacher_forcing"`
	Control        bool              `json:"control"`
	Passed         bool              `json:"passed"` // no scenario failed, was vacuous or missing, and one passed
	Scenarios      []*ScenarioReport `json:"scenarios"`
}

// ScenarioReport is the outcome of one scenario.
type ScenarioReport struct {
	Name            string  `json:"name"`
	Class           string  `json:"class"`
	CacheType       string  `json:"cache_type"`
	Status          Status  `json:"status"`
	Requests        int     `json:"requests"`
	StepsCompared   int     `json:"steps_compared"`
	StepsUncompared int     `json:"steps_uncompared"`
	WorstError      float64 `json:"worst_logprob_error"`
	WorstAt         string  `json:"worst_at,omitempty"`
	BenignFlips     int     `json:"benign_flips"`              // chosen tokens that differ from the reference argmax within the margin tolerance
	ExpectedHits    int     `json:"expected_hits"`             // requests that expect a prefix-cache hit
	ObservedHits    int     `json:"observed_hits"`             // ... for which the candidate reported cached prompt tokens
	SlotBoundHits   int     `json:"slot_bound_hits,omitempty"` // ... that missed while a sibling of the same wave was served their prefix (CacheModelSlots)
	// ReclaimedHits are the requests whose expected hit kvref made wholly on blocks a
	// sliding window had released (optional: a candidate may recompute them), apart from
	// ExpectedHits; ObservedReclaimedHits those the candidate hit anyway.
	ReclaimedHits         int         `json:"reclaimed_hits,omitempty"`
	ObservedReclaimedHits int         `json:"observed_reclaimed_hits,omitempty"`
	HitsReported          bool        `json:"hits_reported"` // the candidate reports cached prompt tokens at all
	HitEvidence           string      `json:"hit_evidence"`  // where the cached-token counts came from (Evidence*, joined by "+" when requests differ)
	FirstDivergence       *Divergence `json:"first_divergence,omitempty"`
	Failures              []Failure   `json:"failures,omitempty"`
	Unsupported           []Refusal   `json:"unsupported,omitempty"`
	Vacuous               []string    `json:"vacuous,omitempty"`
	Errors                []string    `json:"errors,omitempty"` // requests that failed on transport (StatusError)
	Notes                 []string    `json:"notes,omitempty"`
	Tolerance             Tolerance   `json:"tolerance"`
}

// Failure is one violated rule.
type Failure struct {
	Request string `json:"request,omitempty"`
	Choice  int    `json:"choice"`
	Step    int    `json:"step"` // -1: not about one step
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Refusal is a request the candidate refused because it does not support a feature.
type Refusal struct {
	Request string `json:"request"`
	Feature string `json:"feature"` // Feature* or a request parameter's name
	Message string `json:"message"` // the request, the feature and the candidate's reason
}

// Divergence is the first step where a candidate's token differs from the golden's, with
// the tokens before it.
type Divergence struct {
	Request             string   `json:"request"`
	Choice              int      `json:"choice"`
	Step                int      `json:"step"`
	Position            int      `json:"position"`
	Context             []int    `json:"context"` // up to 8 tokens before the step
	ContextText         string   `json:"context_text,omitempty"`
	GoldenID            int      `json:"golden_id"` // -1: past the golden's end
	GoldenPiece         string   `json:"golden_piece,omitempty"`
	GoldenMargin        float64  `json:"golden_margin"`
	CandidateID         int      `json:"candidate_id"` // -1: the candidate stopped
	CandidatePiece      string   `json:"candidate_piece,omitempty"`
	CandidateRefLogprob *float64 `json:"candidate_reference_logprob,omitempty"`
}

// String describes the divergence in one line: where, the two tokens, the golden's margin
// and the text (or ids) before it.
func (d *Divergence) String() string {
	s := fmt.Sprintf("%s#%d step %d (pos %d): golden %d", d.Request, d.Choice, d.Step, d.Position, d.GoldenID)
	if d.GoldenPiece != "" {
		s += fmt.Sprintf(" %q", d.GoldenPiece)
	}
	s += fmt.Sprintf(", candidate %d", d.CandidateID)
	if d.CandidatePiece != "" {
		s += fmt.Sprintf(" %q", d.CandidatePiece)
	}
	s += fmt.Sprintf(", margin %.3g", d.GoldenMargin)
	if d.ContextText != "" {
		s += fmt.Sprintf(", after %q", d.ContextText)
	} else {
		s += fmt.Sprintf(", after %v", d.Context)
	}
	return s
}

// Counts returns how many scenarios have each status.
func (r *Report) Counts() map[Status]int {
	c := map[Status]int{}
	for _, s := range r.Scenarios {
		c[s.Status]++
	}
	return c
}

// maxListed is how many failures per scenario the table lists.
const maxListed = 5

// WriteTable writes the human-readable report: one row per scenario, then the failures
// and notes of every scenario that did not pass. HITS is observed/expected cache hits
// ("n/r" when the candidate does not report cached tokens, "-" when none are expected),
// then "reclaimed o/r" for the optional hits on blocks a sliding window released;
// EVIDENCE says where the cached-token counts came from.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTATUS\tREQS\tSTEPS\tHITS\tEVIDENCE\tWORST ERR\tFLIPS\tFIRST DIVERGENCE")
	for _, s := range r.Scenarios {
		div := "-"
		if s.FirstDivergence != nil {
			div = s.FirstDivergence.String()
		}
		steps := fmt.Sprint(s.StepsCompared)
		if s.StepsUncompared > 0 {
			steps += fmt.Sprintf(" (+%d)", s.StepsUncompared)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.2g\t%d\t%s\n", s.Name, s.Status, s.Requests, steps, s.hitsCell(), s.HitEvidence, s.WorstError, s.BenignFlips, div)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Scenarios {
		if s.Status == StatusPass && len(s.Notes) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", s.Name, s.Status)
		for i, f := range s.Failures {
			if i == maxListed {
				fmt.Fprintf(w, "  ... and %d more failures (the JSON report lists them all)\n", len(s.Failures)-maxListed)
				break
			}
			fmt.Fprintf(w, "  FAIL [%s] %s\n", f.Kind, f.Message)
		}
		for _, u := range s.Unsupported {
			fmt.Fprintf(w, "  UNSUPPORTED [%s] %s\n", u.Feature, u.Message)
		}
		for _, v := range s.Vacuous {
			fmt.Fprintf(w, "  VACUOUS %s\n", v)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	mode := "free-running (no -m: steps after a divergence are not compared)"
	if r.TeacherForcing {
		mode = "teacher-forced"
	}
	if r.Control {
		mode += ", control run (candidate cache disabled)"
	}
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	expected, observed, slot, reclaimed, observedReclaimed := 0, 0, 0, 0, 0
	for _, s := range r.Scenarios {
		expected += s.ExpectedHits
		observed += s.ObservedHits
		slot += s.SlotBoundHits
		reclaimed += s.ReclaimedHits
		observedReclaimed += s.ObservedReclaimedHits
	}
	hits := fmt.Sprintf("%d of %d", observed, expected)
	if slot > 0 {
		hits += fmt.Sprintf(" (%d more served to a sibling of the same wave, as a slot cache does)", slot)
	}
	if reclaimed > 0 {
		hits += fmt.Sprintf("; optional hits on blocks a sliding window released: %d of %d", observedReclaimed, reclaimed)
	}
	_, err := fmt.Fprintf(w, "\n%s: %s; expected cache hits observed: %s; %s\n", verdict, r.CountsLine(), hits, mode)
	return err
}

// hitsCell is the table's HITS: observed/expected hits ("n/r" when the candidate reports
// no cached tokens, "-" when none are expected), hits served to a sibling by a slot cache,
// and the optional hits on blocks a sliding window released ("reclaimed o/r").
func (s *ScenarioReport) hitsCell() string {
	if s.ExpectedHits == 0 && s.ReclaimedHits == 0 {
		return "-"
	}
	if !s.HitsReported {
		return "n/r"
	}
	var parts []string
	if s.ExpectedHits > 0 {
		cell := fmt.Sprintf("%d/%d", s.ObservedHits, s.ExpectedHits)
		if s.SlotBoundHits > 0 {
			cell += fmt.Sprintf(" (+%d slot)", s.SlotBoundHits)
		}
		parts = append(parts, cell)
	}
	if s.ReclaimedHits > 0 {
		parts = append(parts, fmt.Sprintf("reclaimed %d/%d", s.ObservedReclaimedHits, s.ReclaimedHits))
	}
	return strings.Join(parts, ", ")
}

// CountsLine is "N scenarios, P passed, U unsupported, F failed, V vacuous, M missing", and
// ", E error" when transport errors kept scenarios from running.
func (r *Report) CountsLine() string {
	c := r.Counts()
	line := fmt.Sprintf("%d scenarios, %d passed, %d unsupported, %d failed, %d vacuous, %d missing",
		len(r.Scenarios), c[StatusPass], c[StatusUnsupported], c[StatusFail], c[StatusVacuous], c[StatusMissing])
	if c[StatusError] > 0 {
		line += fmt.Sprintf(", %d error", c[StatusError])
	}
	return line
}

// passed reports whether a report is a pass: no scenario failed, was vacuous or missing,
// and at least one passed (unsupported scenarios are counted apart, but a candidate that
// supports none has shown nothing).
func (r *Report) passed() bool {
	c := r.Counts()
	return c[StatusPass] > 0 && c[StatusPass]+c[StatusUnsupported] == len(r.Scenarios)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// JUnit XML, as read by Jenkins, GitLab, GitHub Actions reporters and most CI systems.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: one test case per scenario (classname
// kvref.golden.CLASS), a failure for failed, vacuous and missing scenarios, skipped (with
// the refusals as its message) for unsupported ones.
func (r *Report) WriteJUnit(w io.Writer) error {
	suite := junitSuite{Name: "kvref-golden", Properties: []junitProperty{
		{"golden", r.Golden}, {"candidate", r.Candidate}, {"engine", r.Engine},
		{"teacher_forcing", fmt.Sprint(r.TeacherForcing)}, {"control", fmt.Sprint(r.Control)},
	}}
	for _, s := range r.Scenarios {
		c := junitCase{Name: s.Name, Classname: "kvref.golden." + s.Class}
		var details strings.Builder
		for _, f := range s.Failures {
			fmt.Fprintf(&details, "[%s] %s\n", f.Kind, f.Message)
		}
		for _, v := range s.Vacuous {
			fmt.Fprintf(&details, "[vacuous] %s\n", v)
		}
		var out strings.Builder
		fmt.Fprintf(&out, "requests %d, steps compared %d (not compared %d), worst log-probability error %.3g, benign flips %d, expected cache hits observed %d of %d (%d served to a sibling; evidence: %s)",
			s.Requests, s.StepsCompared, s.StepsUncompared, s.WorstError, s.BenignFlips, s.ObservedHits, s.ExpectedHits, s.SlotBoundHits, s.HitEvidence)
		if s.ReclaimedHits > 0 {
			fmt.Fprintf(&out, ", optional hits on blocks a sliding window released %d of %d", s.ObservedReclaimedHits, s.ReclaimedHits)
		}
		out.WriteString("\n")
		if s.FirstDivergence != nil {
			fmt.Fprintf(&out, "first divergence: %s\n", s.FirstDivergence)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&out, "note: %s\n", n)
		}
		fmt.Fprintf(&out, "tolerance: %s\n", s.Tolerance.Policy)
		c.SystemOut = out.String()
		switch s.Status {
		case StatusFail, StatusMissing, StatusError:
			msg := fmt.Sprintf("%d failures", len(s.Failures))
			if len(s.Failures) > 0 {
				msg = s.Failures[0].Message
			}
			c.Failure = &junitFailure{Message: msg, Type: string(s.Status), Text: details.String()}
			suite.Failures++
		case StatusVacuous:
			c.Failure = &junitFailure{Message: s.Vacuous[0], Type: string(s.Status), Text: details.String()}
			suite.Failures++
		case StatusUnsupported:
			var msgs []string
			for _, u := range s.Unsupported {
				msgs = append(msgs, u.Message)
			}
			c.Skipped = &junitSkipped{Message: "unsupported: " + strings.Join(msgs, "; ")}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "kvref verify", Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Err is nil when the report is a pass; else it says how many scenarios did not pass and
// why, or that the candidate supported none of them (so nothing was verified).
func (r *Report) Err() error {
	if r.Passed {
		return nil
	}
	c := r.Counts()
	if c[StatusError] > 0 && c[StatusFail]+c[StatusVacuous]+c[StatusMissing] == 0 {
		return &TransportError{Scenarios: c[StatusError], Of: len(r.Scenarios)}
	}
	if c[StatusPass] == 0 && c[StatusUnsupported] == len(r.Scenarios) {
		return fmt.Errorf("the candidate supports none of the %d scenarios (all unsupported): nothing was verified", len(r.Scenarios))
	}
	return fmt.Errorf("%d of %d scenarios did not pass (%d failed, %d vacuous, %d missing; %d unsupported)",
		c[StatusFail]+c[StatusVacuous]+c[StatusMissing], len(r.Scenarios), c[StatusFail], c[StatusVacuous], c[StatusMissing], c[StatusUnsupported])
}

// TransportError is Report.Err for a run whose only problems were transport errors: the
// candidate could not be reached for some scenarios, and none failed. kvref verify exits
// with status 2 for it, as for a target that does not answer at all.
type TransportError struct{ Scenarios, Of int }

func (e *TransportError) Error() string {
	return fmt.Sprintf("%d of %d scenarios could not be run: requests failed on transport (connection refused or reset, timeouts); nothing is known about the candidate's cache from them", e.Scenarios, e.Of)
}
