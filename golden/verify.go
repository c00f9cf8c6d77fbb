package golden

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/tokenizer"
)

// Oracle recomputes reference logits on a candidate's own token history (teacher forcing):
// the logits at every position from..len(tokens)-1, with keys and values rounded through
// the given cache types.
type Oracle interface {
	Logits(tokens []int, from int, kType, vType quant.CacheType) ([][]float32, error)
}

// ModelOracle is an Oracle backed by kvref's cache-free reference forward pass.
type ModelOracle struct{ Runner *model.Runner }

// Logits returns Runner.Reference(tokens, kType, vType, from).
func (o ModelOracle) Logits(tokens []int, from int, kType, vType quant.CacheType) ([][]float32, error) {
	return o.Runner.Reference(tokens, kType, vType, from)
}

// Overrides replace parts of each golden's tolerance policy; nil fields keep the golden's.
type Overrides struct {
	Logprob          *float64
	Margin           *float64
	MaxRepeat        *int
	MinSampleLogprob *float64
}

func (o Overrides) apply(t Tolerance) Tolerance {
	if o.Logprob != nil {
		t.Logprob = *o.Logprob
	}
	if o.Margin != nil {
		t.Margin = *o.Margin
	}
	if o.MaxRepeat != nil {
		t.MaxRepeat = *o.MaxRepeat
	}
	if o.MinSampleLogprob != nil {
		t.MinSampleLogprob = *o.MinSampleLogprob
	}
	t.Policy = t.describe()
	return t
}

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Oracle, when set, recomputes the reference on the candidate's own tokens at every step
	// (teacher forcing), so a benign near-tie flip does not make the rest of the sequence
	// incomparable. Without it, steps are compared with the golden while the candidate's
	// history equals the golden's, and not after.
	Oracle    Oracle
	Overrides Overrides
	// TopK compares at most this many log-probabilities per step (0: as many as both the
	// golden and the candidate give).
	TopK int
	// AllowVacuous counts scenarios whose cache expectations the candidate did not meet as
	// passed (with a note) rather than vacuous.
	AllowVacuous bool
	// CacheModel says how the candidate's cache works ("": CacheModelPaged), which decides
	// which expected hits it can serve.
	CacheModel CacheModel
	// Require lists the features the candidate must support: a request it refused that
	// needs one of them fails the scenario instead of making it unsupported.
	Require Requirements
	// Tokenizer, when set, renders token ids as text in the report.
	Tokenizer tokenizer.Tokenizer
}

// Verify compares a candidate with goldens and returns the report. It fails only when the
// oracle does; everything wrong with the candidate is in the report.
func Verify(goldens []*Golden, c *Candidate, opt VerifyOptions) (*Report, error) {
	rep := &Report{TeacherForcing: opt.Oracle != nil, Control: c.Control, Engine: c.Engine}
	for _, g := range goldens {
		sr, err := verifyScenario(g, c.Scenarios[g.Scenario.Name], c.Control, opt)
		if err != nil {
			return nil, err
		}
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	rep.Passed = rep.passed()
	return rep, nil
}

// verifier compares one scenario.
type verifier struct {
	g   *Golden
	tol Tolerance
	opt VerifyOptions
	rep *ScenarioReport
	// failedSteps marks (request, choice, step) triples that already have a failure of a
	// kind, so one step reports each kind once.
	failedSteps map[string]bool
	// hits holds, per request, whether the candidate reported a cache hit; missedHits the
	// requests that expected one and did not get it, settled once all are known.
	hits       map[string]bool
	missedHits []missedHit
}

func verifyScenario(g *Golden, cs *CandidateScenario, control bool, opt VerifyOptions) (*ScenarioReport, error) {
	tol := opt.Overrides.apply(g.Tolerance)
	rep := &ScenarioReport{Name: g.Scenario.Name, Class: g.Scenario.Class, CacheType: g.Scenario.Cache.TypeName(), Tolerance: tol}
	if cs == nil {
		rep.Status, rep.HitEvidence = StatusMissing, EvidenceNone
		rep.Failures = append(rep.Failures, Failure{Kind: KindMissing, Step: -1, Message: "the candidate has no result for this scenario"})
		return rep, nil
	}
	rep.Notes = append(rep.Notes, cs.Notes...)
	v := &verifier{g: g, tol: tol, opt: opt, rep: rep, failedSteps: map[string]bool{}, hits: map[string]bool{}}
	for i := range g.Requests {
		gr := &g.Requests[i]
		cr := cs.Requests[gr.ID]
		if cr == nil {
			v.fail(gr.ID, -1, -1, KindMissing, "the candidate has no result for request %s", gr.ID)
			continue
		}
		rep.Requests++
		if cr.Transport != "" {
			rep.Errors = append(rep.Errors, fmt.Sprintf("request %s: %s", gr.ID, cr.Transport))
			continue
		}
		if cr.Unsupported != "" {
			v.refused(gr, cr)
			continue
		}
		v.checkCache(gr, cr, control)
		if cr.Error != "" {
			v.fail(gr.ID, -1, -1, KindError, "request %s failed on the candidate: %s", gr.ID, cr.Error)
			continue
		}
		before := len(rep.Failures)
		if cr.PromptTokens != nil && *cr.PromptTokens != len(gr.PromptIDs) {
			v.fail(gr.ID, -1, -1, KindPrompt, "request %s: the candidate reports %d prompt tokens, the golden sent %d (did it add BOS, or tokenize text differently?)",
				gr.ID, *cr.PromptTokens, len(gr.PromptIDs))
		}
		cancelled := gr.Cancelled || cr.Cancelled
		if gr.PromptSteps != nil && !cancelled {
			if unsupported, err := v.comparePrompt(gr, cr); err != nil {
				return nil, err
			} else if unsupported {
				continue
			}
		}
		if !cancelled && len(cr.Choices) != gr.N && !(gr.MaxTokens == 0 && len(cr.Choices) == 0) {
			v.fail(gr.ID, -1, -1, KindChoices, "request %s: the candidate returned %d continuations, the request asked for %d", gr.ID, len(cr.Choices), gr.N)
		}
		for ci, steps := range cr.Choices {
			if ci >= gr.N {
				break
			}
			finish := ""
			if ci < len(cr.FinishReasons) {
				finish = cr.FinishReasons[ci]
			}
			if err := v.compareChoice(gr, ci, steps, finish, cancelled); err != nil {
				return nil, err
			}
		}
		if len(rep.Failures) > before {
			if other := v.crossWired(gr, cr); other != "" {
				f := Failure{Request: gr.ID, Step: -1, Kind: KindCrossWired, Message: fmt.Sprintf(
					"request %s returned the output of request %s: its first tokens are %s's golden output, not its own (responses, or cache blocks, are cross-wired)", gr.ID, other, other)}
				rep.Failures = slices.Insert(rep.Failures, before, f)
			}
		}
	}
	for _, id := range sortedKeys(cs.Requests) {
		if g.Request(id) == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the candidate reports a request %q the golden does not have; ignored", id))
		}
	}
	v.settleMissedHits()
	rep.HitEvidence = v.evidence(cs)
	switch {
	case rep.HitsReported:
	case opt.Require.has(FeatureCacheReport):
		v.fail("", -1, -1, KindUnsupported, "the candidate reports no cached prompt tokens (none of usage.prompt_tokens_details.cached_tokens, timings.cache_n, timings.prompt_n), and VerifyOptions.Require demands it (%s)", FeatureCacheReport)
	default:
		rep.Notes = append(rep.Notes, "the candidate does not report cached prompt tokens: cache expectations are unchecked")
	}
	switch {
	case len(rep.Errors) > 0 && !control:
		// A request that never reached the server leaves the scenario's cache behaviour
		// unknown: its failures (a hit its sibling did not get, say) are not the cache's.
		rep.Status = StatusError
	case len(rep.Failures) > 0:
		rep.Status = StatusFail
	case len(rep.Unsupported) > 0:
		rep.Status = StatusUnsupported
	case len(rep.Vacuous) > 0 && !opt.AllowVacuous:
		rep.Status = StatusVacuous
	default:
		rep.Status = StatusPass
		if len(rep.Vacuous) > 0 {
			rep.Notes = append(rep.Notes, "vacuous expectations allowed: "+strings.Join(rep.Vacuous, "; "))
		}
	}
	return rep, nil
}

// fail records a failure.
func (v *verifier) fail(req string, choice, step int, kind, format string, args ...any) {
	key := fmt.Sprintf("%s/%d/%d/%s", req, choice, step, kind)
	if step >= 0 && v.failedSteps[key] {
		return
	}
	v.failedSteps[key] = true
	v.rep.Failures = append(v.rep.Failures, Failure{Request: req, Choice: choice, Step: step, Kind: kind, Message: fmt.Sprintf(format, args...)})
}

// crossWired returns the id of another request whose golden output the candidate returned
// for gr, or "".
func (v *verifier) crossWired(gr *GoldenRequest, cr *CandidateRequest) string {
	if len(cr.Choices) == 0 || len(gr.Choices) == 0 || !gr.Greedy() {
		return ""
	}
	got := ids(cr.Choices[0])
	want := gr.Choices[0].OutputIDs
	w := min(8, len(got), len(want))
	if w < 3 || slices.Equal(got[:w], want[:w]) {
		return ""
	}
	for i := range v.g.Requests {
		o := &v.g.Requests[i]
		if o.ID == gr.ID || !o.Greedy() || len(o.Choices) == 0 || slices.Equal(o.PromptIDs, gr.PromptIDs) {
			continue
		}
		out := o.Choices[0].OutputIDs
		if len(out) >= w && slices.Equal(got[:w], out[:w]) {
			return o.ID
		}
	}
	return ""
}

func ids(steps []CandidateStep) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.ID
	}
	return out
}

// reference is the reference distribution at one step: the full log-probabilities (with an
// oracle), or the golden's top-k.
type reference struct {
	full  []float64
	top   []Logprob
	given *Logprob // a token whose log-probability is known outside top (a prompt token's)
}

func (r *reference) argmax() Logprob { return r.top[0] }

// lookup returns the reference log-probability of id; exact is false when only the
// golden's top-k is known and id is not in it, and lp is then an upper bound.
func (r *reference) lookup(id int) (lp float64, exact bool) {
	if r.full != nil {
		return r.full[id], true
	}
	if r.given != nil && r.given.ID == id {
		return r.given.Logprob, true
	}
	for _, t := range r.top {
		if t.ID == id {
			return t.Logprob, true
		}
	}
	return r.top[len(r.top)-1].Logprob, false
}

// compareChoice compares one continuation of a candidate request step by step.
func (v *verifier) compareChoice(gr *GoldenRequest, ci int, steps []CandidateStep, finish string, cancelled bool) error {
	vocab := v.g.Model.Vocab
	got := ids(steps)
	valid := len(steps) // steps before a structural error or an impossible token
	for i, s := range steps {
		switch {
		case s.Step >= 0 && s.Step > i:
			v.fail(gr.ID, ci, i, KindDropped, "request %s continuation %d: step %d is missing: after step %d the candidate reports step %d (a dropped token)", gr.ID, ci, i, i-1, s.Step)
		case s.Step >= 0 && s.Step < i:
			v.fail(gr.ID, ci, i, KindDuplicated, "request %s continuation %d: step %d is reported again at place %d (a duplicated token)", gr.ID, ci, s.Step, i)
		case s.ID < 0 || vocab > 0 && s.ID >= vocab:
			v.fail(gr.ID, ci, i, KindVocab, "request %s continuation %d step %d: token id %d is outside the vocabulary of %d", gr.ID, ci, i, s.ID, vocab)
		default:
			continue
		}
		valid = i
		break
	}
	if valid > gr.MaxTokens {
		v.fail(gr.ID, ci, gr.MaxTokens, KindLength, "request %s continuation %d: the candidate produced %d tokens, more than max_tokens = %d", gr.ID, ci, len(steps), gr.MaxTokens)
		valid = gr.MaxTokens
	}
	golden := v.followedChoice(gr, ci, got)
	var forced [][]float32
	if v.opt.Oracle != nil && valid > 0 {
		kType, vType, err := v.g.Scenario.Cache.Types()
		if err != nil {
			return err
		}
		tokens := append(slices.Clone(gr.PromptIDs), got[:valid-1]...)
		if forced, err = v.opt.Oracle.Logits(tokens, len(gr.PromptIDs)-1, kType, vType); err != nil {
			return fmt.Errorf("golden: teacher forcing scenario %s request %s: %w", v.g.Scenario.Name, gr.ID, err)
		}
	}
	var forced32 [][]float32 // the f32 reference, to measure the quantization error per step
	if forced != nil {
		if kType, vType, _ := v.g.Scenario.Cache.Types(); kType != quant.F32 || vType != quant.F32 {
			tokens := append(slices.Clone(gr.PromptIDs), got[:valid-1]...)
			var err error
			if forced32, err = v.opt.Oracle.Logits(tokens, len(gr.PromptIDs)-1, quant.F32, quant.F32); err != nil {
				return fmt.Errorf("golden: teacher forcing scenario %s request %s: %w", v.g.Scenario.Name, gr.ID, err)
			}
		}
	}
	diverged := -1 // first step whose token differs from the followed golden continuation
	for i := range valid {
		var ref *reference
		switch {
		case forced != nil:
			lp := LogSoftmax(forced[i])
			ref = &reference{full: lp, top: TopK(lp, max(v.g.TopK, len(steps[i].Top), 1)+1)}
		case golden != nil && i < len(golden.Steps) && slices.Equal(got[:i], golden.OutputIDs[:i]):
			gs := golden.Steps[i]
			ref = &reference{top: gs.Top}
		}
		if golden != nil && diverged < 0 && (i >= len(golden.OutputIDs) || got[i] != golden.OutputIDs[i]) {
			diverged = i
			// Tokens past a cancelled golden's end are not a divergence: the candidate was
			// just slower to stop.
			if gr.Greedy() && !(cancelled && i >= len(golden.OutputIDs)) {
				v.noteDivergence(gr, ci, i, got, golden, ref)
			}
		}
		if ref == nil || len(ref.top) == 0 {
			v.rep.StepsUncompared += valid - i
			if golden != nil && i >= len(golden.OutputIDs) {
				break // past the golden's end: the length check below reports it
			}
			if gr.Greedy() {
				v.rep.Notes = appendOnce(v.rep.Notes, "steps after a free-running divergence are not compared; give -m MODEL to compare them by teacher forcing")
			} else {
				v.rep.Notes = appendOnce(v.rep.Notes, "sampled continuations are compared only while they follow a golden continuation; give -m MODEL to compare every step by teacher forcing")
			}
			break
		}
		v.rep.StepsCompared++
		var lp32 []float64
		if forced32 != nil {
			lp32 = LogSoftmax(forced32[i])
		}
		v.checkStep(gr, ci, i, steps[i], ref, lp32)
	}
	v.diagnoseShift(gr, ci, got, golden)
	if valid == len(steps) {
		v.checkLength(gr, ci, got, golden, finish, diverged, cancelled)
	}
	v.checkRepeats(gr, ci, got, golden, forced != nil)
	return nil
}

// followedChoice returns the golden continuation a candidate continuation is compared with:
// the same index for greedy requests, else the one sharing the longest prefix of tokens.
func (v *verifier) followedChoice(gr *GoldenRequest, ci int, got []int) *GoldenChoice {
	if len(gr.Choices) == 0 {
		return nil
	}
	if gr.Greedy() {
		return &gr.Choices[min(ci, len(gr.Choices)-1)]
	}
	best, bestLen := min(ci, len(gr.Choices)-1), -1
	for i := range gr.Choices {
		n := commonPrefix(got, gr.Choices[i].OutputIDs)
		if n > bestLen || n == bestLen && i == ci {
			best, bestLen = i, n
		}
	}
	return &gr.Choices[best]
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// checkStep applies the token and log-probability rules to one step. lp32 is the f32
// reference at the step when the golden's cache is quantized and an oracle is available.
func (v *verifier) checkStep(gr *GoldenRequest, ci, i int, s CandidateStep, ref *reference, lp32 []float64) {
	pos := len(gr.PromptIDs) + i
	v.checkLogprobs(gr, ci, i, fmt.Sprintf("request %s continuation %d step %d (position %d)", gr.ID, ci, i, pos), s, ref, lp32, true)
}

// checkLogprobs compares one step's log-probabilities with the reference's under the
// tolerance rules; with chosen, also the token the candidate chose (a generated step; a
// prompt token is given, not chosen).
func (v *verifier) checkLogprobs(gr *GoldenRequest, ci, i int, where string, s CandidateStep, ref *reference, lp32 []float64, choose bool) {
	chosen, haveChosen := s.chosenLogprob()
	for _, t := range append([]Logprob{{s.ID, chosen}}, s.Top...) {
		if t.ID == s.ID && !haveChosen {
			continue
		}
		if math.IsNaN(t.Logprob) || math.IsInf(t.Logprob, 0) || t.Logprob > 1e-3 {
			v.fail(gr.ID, ci, i, KindInvalid, "%s: the candidate's log-probability of token %d is %v, not a log-probability", where, t.ID, t.Logprob)
			return
		}
	}
	// Log-probabilities compared: the chosen token's and the top-k.
	k := len(s.Top)
	if v.opt.TopK > 0 {
		k = min(k, v.opt.TopK)
	}
	entries := slices.Clone(s.Top[:k])
	if haveChosen && !slices.ContainsFunc(entries, func(l Logprob) bool { return l.ID == s.ID }) {
		entries = append(entries, Logprob{s.ID, chosen})
	}
	q := v.tol.QuantizationError
	if lp32 != nil {
		extra := []int{s.ID}
		for _, t := range entries {
			extra = append(extra, t.ID)
		}
		q = stepQuantizationError(ref.full, lp32, len(ref.top), extra)
	}
	lpTol, marginTol := v.tol.logprobTol(q), v.tol.marginTol(q)
	tolText := func(t float64) string {
		if q > 0 {
			return fmt.Sprintf("%.3g, quantization error %.3g included", t, q)
		}
		return fmt.Sprintf("%.3g", t)
	}

	best := ref.argmax()
	refChosen, exact := ref.lookup(s.ID)
	if !choose {
	} else if gr.Greedy() {
		if s.ID != best.ID {
			gap := best.Logprob - refChosen
			bound := ""
			if !exact {
				bound = " at least"
			}
			if gap > marginTol {
				v.fail(gr.ID, ci, i, KindToken, "%s: the candidate chose token %d, the reference argmax is %d, which beats it by%s %.4g (tolerance %s): not a near tie",
					where, s.ID, best.ID, bound, gap, tolText(marginTol))
			} else {
				v.rep.BenignFlips++
			}
		}
	} else if refChosen < v.tol.MinSampleLogprob {
		v.fail(gr.ID, ci, i, KindSample, "%s: the candidate sampled token %d, whose reference log-probability is%s %.4g, below %.3g: implausible",
			where, s.ID, map[bool]string{true: "", false: " at most"}[exact], refChosen, v.tol.MinSampleLogprob)
	}
	// Log-probabilities against the reference.
	worst, worstMsg := -1.0, ""
	for _, t := range entries {
		r, exact := ref.lookup(t.ID)
		var err float64
		var msg string
		if exact {
			err = math.Abs(t.Logprob - r)
			msg = fmt.Sprintf("the candidate's log-probability of token %d is %.5g, the reference's %.5g: error %.3g", t.ID, t.Logprob, r, err)
		} else {
			err = t.Logprob - r // r is an upper bound
			msg = fmt.Sprintf("the candidate gives token %d log-probability %.5g, but it is below the golden's top %d (≤ %.5g): error at least %.3g", t.ID, t.Logprob, len(ref.top), r, err)
		}
		if exact {
			v.noteError(err, where)
		}
		if err > worst {
			worst, worstMsg = err, msg
		}
	}
	// The candidate's list, without the chosen token (which servers add to the top-k, as
	// vLLM does, or which is one of them), claims to be the most likely tokens other than
	// the chosen one: a reference token that should be among them and is not must not be
	// more likely than the list's last entry.
	var listed []Logprob
	for _, t := range s.Top[:k] {
		if t.ID != s.ID {
			listed = append(listed, t)
		}
	}
	if len(listed) > 0 {
		last := listed[len(listed)-1].Logprob
		n := 0
		for _, t := range ref.top {
			if n == len(listed) {
				break
			}
			if t.ID == s.ID {
				continue
			}
			n++
			if slices.ContainsFunc(listed, func(l Logprob) bool { return l.ID == t.ID }) {
				continue
			}
			if err := t.Logprob - last; err > worst {
				worst = err
				worstMsg = fmt.Sprintf("token %d (reference log-probability %.5g) is missing from the candidate's top %d, whose last entry is %.5g: error at least %.3g", t.ID, t.Logprob, len(listed), last, err)
			}
		}
	}
	if worst > lpTol {
		v.fail(gr.ID, ci, i, KindLogprob, "%s: %s > tolerance %s", where, worstMsg, tolText(lpTol))
	}
}

// noteError keeps the worst log-probability error of the scenario.
func (v *verifier) noteError(err float64, where string) {
	if err > v.rep.WorstError || v.rep.WorstAt == "" {
		v.rep.WorstError, v.rep.WorstAt = err, where
	}
}

// noteDivergence records the first step where the candidate's token differs from the
// golden's.
func (v *verifier) noteDivergence(gr *GoldenRequest, ci, i int, got []int, golden *GoldenChoice, ref *reference) {
	if v.rep.FirstDivergence != nil {
		return
	}
	d := &Divergence{Request: gr.ID, Choice: ci, Step: i, Position: len(gr.PromptIDs) + i, CandidateID: -1, GoldenID: -1}
	history := append(slices.Clone(gr.PromptIDs), got[:i]...)
	d.Context = slices.Clone(history[max(0, len(history)-8):])
	if i < len(got) {
		d.CandidateID = got[i]
	}
	if i < len(golden.OutputIDs) {
		d.GoldenID = golden.OutputIDs[i]
		d.GoldenMargin = golden.Steps[i].Margin
	}
	if ref != nil && d.CandidateID >= 0 {
		if lp, exact := ref.lookup(d.CandidateID); exact {
			d.CandidateRefLogprob = &lp
		}
	}
	if tok := v.opt.Tokenizer; tok != nil {
		d.ContextText = string(pieces(tok, d.Context))
		if d.CandidateID >= 0 {
			d.CandidatePiece = string(tok.Piece(d.CandidateID))
		}
		if d.GoldenID >= 0 {
			d.GoldenPiece = string(tok.Piece(d.GoldenID))
		}
	}
	v.rep.FirstDivergence = d
}

func pieces(tok tokenizer.Tokenizer, ids []int) []byte {
	var out []byte
	for _, id := range ids {
		if id >= 0 && id < tok.VocabSize() {
			out = append(out, tok.Piece(id)...)
		}
	}
	return out
}

// diagnoseShift turns the first token (or log-probability) failure of a continuation into
// a dropped- or duplicated-token failure when the candidate's tokens are the golden's
// shifted by one.
func (v *verifier) diagnoseShift(gr *GoldenRequest, ci int, got []int, golden *GoldenChoice) {
	if golden == nil {
		return
	}
	want := golden.OutputIDs
	s := commonPrefix(got, want)
	if s >= len(got) || s >= len(want) {
		return
	}
	idx := slices.IndexFunc(v.rep.Failures, func(f Failure) bool {
		return f.Request == gr.ID && f.Choice == ci && f.Step == s && (f.Kind == KindToken || f.Kind == KindLogprob)
	})
	if idx < 0 {
		return
	}
	w := min(6, len(got)-s, len(want)-s-1)
	switch {
	case w >= 4 && slices.Equal(got[s:s+w], want[s+1:s+1+w]):
		f := &v.rep.Failures[idx]
		f.Kind = KindDropped
		f.Message = fmt.Sprintf("request %s continuation %d step %d (position %d): the golden's token %d is missing and the candidate continues with the golden's next tokens (a dropped token, as after a faulty preemption or recompute)",
			gr.ID, ci, s, len(gr.PromptIDs)+s, want[s])
	case s > 0 && got[s] == got[s-1] && s+1 < len(got):
		if w2 := min(6, len(got)-s-1, len(want)-s); w2 >= 4 && slices.Equal(got[s+1:s+1+w2], want[s:s+w2]) {
			f := &v.rep.Failures[idx]
			f.Kind = KindDuplicated
			f.Message = fmt.Sprintf("request %s continuation %d step %d (position %d): token %d is repeated and the candidate then continues with the golden's tokens (a duplicated token, as after a faulty preemption or recompute)",
				gr.ID, ci, s, len(gr.PromptIDs)+s, got[s])
		}
	}
}

// checkLength compares the number of tokens with the golden's. finish is the candidate's
// finish reason for the continuation ("" when not reported).
func (v *verifier) checkLength(gr *GoldenRequest, ci int, got []int, golden *GoldenChoice, finish string, diverged int, cancelled bool) {
	if cancelled || golden == nil || !gr.Greedy() && diverged >= 0 {
		return
	}
	want := len(golden.OutputIDs)
	switch {
	case diverged < 0 && len(got) == want-1 && stopTokenLeftOut(gr, golden, finish):
		v.rep.Notes = appendOnce(v.rep.Notes, fmt.Sprintf("request %s continuation %d: the candidate leaves out the token that completes the stop string (as llama-server does); accepted at a stop-string finish", gr.ID, ci))
	case diverged < 0 && len(got) < want:
		v.fail(gr.ID, ci, -1, KindDropped, "request %s continuation %d: the candidate produced %d tokens, the golden %d (finish reason %s): %d dropped at the end",
			gr.ID, ci, len(got), want, golden.FinishReason, want-len(got))
	case diverged >= 0 && diverged == want && len(got) > want:
		v.fail(gr.ID, ci, -1, KindLength, "request %s continuation %d: the candidate produced %d tokens, the golden %d (finish reason %s): %d extra",
			gr.ID, ci, len(got), want, golden.FinishReason, len(got)-want)
	case diverged >= 0 && gr.IgnoreEOS && len(gr.Stop) == 0 && golden.FinishReason == "length" && len(got) != gr.MaxTokens:
		v.fail(gr.ID, ci, -1, KindLength, "request %s continuation %d: with ignore_eos and no stop strings the candidate must produce max_tokens = %d tokens, it produced %d",
			gr.ID, ci, gr.MaxTokens, len(got))
	}
}

// stopTokenLeftOut reports whether the stop-string finish rule applies to a candidate
// continuation that is the golden's without its last token: the golden finished on one of
// the request's stop strings, so its last token is the one whose text completes the stop
// string, and the candidate says it stopped (finish reason "stop", or none reported).
// Engines differ here: kvref and vLLM return that token, llama-server leaves it out of the
// tokens and log-probabilities. Either is accepted there, and nowhere else.
func stopTokenLeftOut(gr *GoldenRequest, golden *GoldenChoice, finish string) bool {
	return len(gr.Stop) > 0 && golden.FinishReason == "stop" && len(golden.OutputIDs) > 0 && (finish == "" || finish == "stop")
}

// checkRepeats fails runs of MaxRepeat or more identical tokens that the golden does not
// have at the same steps. With teacher forcing every step is checked against the
// reference argmax already, so only uncompared steps need this.
func (v *verifier) checkRepeats(gr *GoldenRequest, ci int, got []int, golden *GoldenChoice, forced bool) {
	r := v.tol.MaxRepeat
	if r < 2 || forced {
		return
	}
	for start := 0; start < len(got); {
		end := start + 1
		for end < len(got) && got[end] == got[start] {
			end++
		}
		if end-start >= r && (golden == nil || end > len(golden.OutputIDs) || !slices.Equal(got[start:end], golden.OutputIDs[start:end])) {
			v.fail(gr.ID, ci, start, KindRepeat, "request %s continuation %d: token %d repeats %d times from step %d, which the golden does not (degenerate output)",
				gr.ID, ci, got[start], end-start, start)
		}
		start = end
	}
}
