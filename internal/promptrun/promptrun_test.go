package promptrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/tokenizer"
)

// TestRunner runs two prompts one by one and then together: one by one, each ends (Done)
// before the next starts; together, every start comes first and the results come in
// order. Tokens carry their request's index, and the results are the same either way
// (greedy decoding).
func TestRunner(t *testing.T) {
	m, err := builtin.Model()
	require.NoError(t, err)
	defer m.Close()
	e, err := engine.New(m, engine.Config{Threads: 1, Sequences: 2})
	require.NoError(t, err)
	defer e.Close()
	reqs := []engine.Request{
		{Prompt: m.Tokenizer.EncodeSpecial("Once upon a time", tokenizer.Prompt), MaxTokens: 6},
		{Prompt: m.Tokenizer.EncodeSpecial("The cat", tokenizer.Prompt), MaxTokens: 4},
	}
	run := func(parallel bool) ([]string, [][]int, []string) {
		var events []string
		tokens := make([][]int, len(reqs))
		texts := make([]string, len(reqs))
		steps := 0
		sched := e.NewScheduler(engine.SchedulerConfig{})
		err := Runner{Sched: sched, Parallel: parallel,
			Start: func(i int) { events = append(events, fmt.Sprint("start ", i)) },
			Emit:  func(i int, tok engine.Token) error { tokens[i] = append(tokens[i], tok.ID); return nil },
			Done: func(i int, res engine.Result) error {
				events = append(events, fmt.Sprint("done ", i))
				texts[i] = res.Texts[0]
				return nil
			},
			AfterStep: func() { steps++ }}.Run(reqs)
		require.NoError(t, err)
		require.Equal(t, sched.Stats().Steps, steps, "AfterStep runs after every step")
		return events, tokens, texts
	}
	events, seqTokens, seqTexts := run(false)
	require.Equal(t, []string{"start 0", "done 0", "start 1", "done 1"}, events)
	require.Len(t, seqTokens[0], 6)
	require.Len(t, seqTokens[1], 4)
	events, parTokens, parTexts := run(true)
	require.Equal(t, []string{"start 0", "start 1", "done 0", "done 1"}, events)
	require.Equal(t, seqTokens, parTokens)
	require.Equal(t, seqTexts, parTexts)
}

// TestRunnerErrors: a request the scheduler refuses is named by its index, through
// AddHint; an error of Emit stops the run.
func TestRunnerErrors(t *testing.T) {
	m, err := builtin.Model()
	require.NoError(t, err)
	defer m.Close()
	e, err := engine.New(m, engine.Config{Threads: 1})
	require.NoError(t, err)
	defer e.Close()
	ok := engine.Request{Prompt: m.Tokenizer.EncodeSpecial("Once", tokenizer.Prompt), MaxTokens: 2}
	hinted := errors.New("hinted")
	r := Runner{Sched: e.NewScheduler(engine.SchedulerConfig{}),
		Emit:    func(int, engine.Token) error { return nil },
		Done:    func(int, engine.Result) error { return nil },
		AddHint: func(err error) error { return errors.Join(hinted, err) }}
	err = r.Run([]engine.Request{ok, {}})
	require.ErrorIs(t, err, hinted)
	require.ErrorIs(t, err, engine.ErrRejected)
	require.ErrorContains(t, err, "prompt 1: ")

	stop := errors.New("stop")
	r.Sched = e.NewScheduler(engine.SchedulerConfig{})
	r.Emit = func(int, engine.Token) error { return stop }
	require.ErrorIs(t, r.Run([]engine.Request{ok}), stop)
}

// TestReadFile reads one prompt per line, skipping blank lines, and refuses a file with
// none.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prompts.txt")
	require.NoError(t, os.WriteFile(path, []byte("Once upon a time\r\n\n  \nThe cat sat\n"), 0o644))
	got, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, []string{"Once upon a time", "The cat sat"}, got)
	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, []byte("\n \n"), 0o644))
	_, err = ReadFile(empty)
	require.EqualError(t, err, empty+" has no prompts (one per line expected)")
	_, err = ReadFile(filepath.Join(dir, "missing.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
