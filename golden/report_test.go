package golden

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mixedReport verifies three scenarios: one passing, one failing (a perturbed
// log-probability), one vacuous (no hit reported where one is expected), plus one the
// candidate lacks.
func mixedReport(t *testing.T) *Report {
	t.Helper()
	goldens := []*Golden{
		tinyGolden(t, "mixed-hits-misses.f32"), tinyGolden(t, "block-boundary-lengths.f32"),
		tinyGolden(t, "same-step-shared-prefix.f32"), tinyGolden(t, "identical-requests.f32"),
	}
	c := cloneCandidate(t, selfCandidate(t, goldens[:3]...))
	c.Scenarios["block-boundary-lengths.f32"].Requests["L9"].Choices[0][3].Top[0].Logprob -= 1
	zero := 0
	c.Scenarios["same-step-shared-prefix.f32"].Requests["C"].CachedTokens = &zero
	rep, err := Verify(goldens, c, VerifyOptions{Oracle: oracle(t)})
	require.NoError(t, err)
	rep.Golden, rep.Candidate = "goldens/", "dump.jsonl"
	return rep
}

// TestJUnitIsValidXMLWithOneCasePerScenario parses the JUnit output with encoding/xml.
func TestJUnitIsValidXMLWithOneCasePerScenario(t *testing.T) {
	rep := mixedReport(t)
	var buf bytes.Buffer
	require.NoError(t, rep.WriteJUnit(&buf))
	require.True(t, strings.HasPrefix(buf.String(), xml.Header))

	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name       string `xml:"name,attr"`
			Tests      int    `xml:"tests,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(&buf)
	dec.Strict = true
	require.NoError(t, dec.Decode(&doc))
	require.Equal(t, 4, doc.Tests)
	require.Equal(t, 3, doc.Failures)
	require.Len(t, doc.Suites, 1)
	s := doc.Suites[0]
	require.Equal(t, "kvref-golden", s.Name)
	require.Len(t, s.Cases, 4, "one test case per scenario")
	statuses := map[string]string{}
	for _, c := range s.Cases {
		require.True(t, strings.HasPrefix(c.Classname, "kvref.golden."), c.Classname)
		require.Contains(t, c.SystemOut, "tolerance:")
		if c.Failure != nil {
			statuses[c.Name] = c.Failure.Type
			require.NotEmpty(t, c.Failure.Message)
		} else {
			statuses[c.Name] = "pass"
		}
	}
	require.Equal(t, map[string]string{
		"mixed-hits-misses.f32": "pass", "block-boundary-lengths.f32": "fail",
		"same-step-shared-prefix.f32": "vacuous", "identical-requests.f32": "missing",
	}, statuses)
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	require.Equal(t, "true", props["teacher_forcing"])
	require.Equal(t, "goldens/", props["golden"])
}

// TestTableAndJSONReports: the table has one row per scenario and the failures below; the
// JSON decodes back.
func TestTableAndJSONReports(t *testing.T) {
	rep := mixedReport(t)
	require.False(t, rep.Passed)
	var buf bytes.Buffer
	require.NoError(t, rep.WriteTable(&buf))
	out := buf.String()
	for _, want := range []string{
		"SCENARIO", "HITS", "WORST ERR", "FIRST DIVERGENCE",
		"mixed-hits-misses.f32", "pass",
		"block-boundary-lengths.f32: fail", "FAIL [logprob] request L9 continuation 0 step 3",
		"same-step-shared-prefix.f32: vacuous", "VACUOUS request C expects a prefix-cache hit",
		"identical-requests.f32: missing",
		"FAIL: 4 scenarios, 1 passed, 0 unsupported, 1 failed, 1 vacuous, 1 missing", "teacher-forced",
	} {
		require.Contains(t, out, want)
	}
	buf.Reset()
	require.NoError(t, rep.WriteJSON(&buf))
	var back Report
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	require.Len(t, back.Scenarios, 4)
	require.Equal(t, StatusFail, back.Scenarios[1].Status)
	require.Equal(t, KindLogprob, back.Scenarios[1].Failures[0].Kind)
	require.InDelta(t, 1, back.Scenarios[1].WorstError, 1e-9)
}

// TestDumpRoundTripAndPythonNumbers: a dump written and read back is the same candidate,
// and the bare NaN and Infinity that Python's json module writes are read.
func TestDumpRoundTripAndPythonNumbers(t *testing.T) {
	g := tinyGolden(t, "fork-partial-block.f32")
	c := selfCandidate(t, g)
	c.Engine = "kvref test"
	back := cloneCandidate(t, c)
	require.Equal(t, c, back)

	src := `{"format": "kvref-candidate/1", "engine": "vllm 0.11 (python)"}
# comments and blank lines are skipped

{"scenario": "s", "request": "A", "choice": 0, "step": 0, "id": 3, "logprob": NaN, "top": [[3, -Infinity], [4, -0.5]]}
{"scenario": "s", "request": "A", "choice": 0, "step": 1, "id": 4, "top": [[4, -0.1]]}
{"scenario": "s", "request": "A", "cached_tokens": 16, "prompt_tokens": 20, "finish_reasons": ["length"], "text": "NaN Infinity"}
`
	_, err := ReadDump(strings.NewReader(src))
	require.ErrorContains(t, err, `line 6: json: unknown field "text"`)
	c, err = ReadDump(strings.NewReader(strings.Replace(src, `, "text": "NaN Infinity"`, "", 1)))
	require.NoError(t, err)
	require.Equal(t, "vllm 0.11 (python)", c.Engine)
	r := c.Scenarios["s"].Requests["A"]
	require.Equal(t, 16, *r.CachedTokens)
	require.True(t, math.IsNaN(*r.Choices[0][0].Logprob))
	require.Equal(t, []Logprob{{4, -0.5}, {3, math.Inf(-1)}}, r.Choices[0][0].Top, "sorted, most likely first")
	lp, ok := r.Choices[0][1].chosenLogprob()
	require.True(t, ok, "the chosen log-probability can come from the top list")
	require.Equal(t, -0.1, lp)

	for _, bad := range []struct{ line, want string }{
		{`{"format": "other/1"}`, "want \"kvref-candidate/1\""},
		{`{"request": "A", "step": 0, "id": 1}`, `needs "scenario" and "request"`},
		{`{"scenario": "s", "request": "A", "step": 0}`, `needs "id"`},
		{`{"scenario": "s", "request": "A", "id": 1}`, `needs "step"`},
		{`{"scenario": "s", "request": "A", "step": 0, "id": 1, "top": [[1.5, -1]]}`, "integer"},
		{`not json`, "line 1"},
	} {
		_, err := ReadDump(strings.NewReader(bad.line))
		require.ErrorContains(t, err, bad.want, bad.line)
	}
	require.Equal(t, `x "NaN" "-Infinity" "a NaN \" Infinity"`, string(cleanJSON([]byte(`x NaN -Infinity "a NaN \" Infinity"`))))
}
