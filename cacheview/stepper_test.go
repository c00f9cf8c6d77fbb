package cacheview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/stepper"
)

// stories loads the embedded stories260K once.
var stories = sync.OnceValues(builtin.Model)

func newStepper(t *testing.T, blocks, blockSize int) *Stepper {
	t.Helper()
	m, err := stories()
	require.NoError(t, err)
	st, err := NewStepper(m, "stories260K", engine.Config{BlockSize: blockSize, CacheBlocks: blocks, Threads: 1},
		stepper.Options{Check: true})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// do runs a command that must succeed.
func do(t *testing.T, st *Stepper, cmd stepper.Command) StepRecord {
	t.Helper()
	rec, err := st.Do(cmd)
	require.NoError(t, err, "%+v", cmd)
	requireViewAgrees(t, st)
	return rec
}

// requireViewAgrees holds the stepper's View to its pool's own Stats, Blocks and Check.
func requireViewAgrees(t *testing.T, st *Stepper) {
	t.Helper()
	v, err := st.View(t.Context())
	require.NoError(t, err)
	st.mu.Lock()
	defer st.mu.Unlock()
	pool := st.sess.Engine().Pool()
	require.NoError(t, pool.Check())
	require.Equal(t, pool.Stats(), v.Stats)
	for i, b := range pool.Blocks() {
		require.Equal(t, b.Ref, v.Blocks[i].Ref, "block %d", i)
		require.Equal(t, b.Cached, v.Blocks[i].State == kvcache.StateCached, "block %d", i)
		require.Len(t, v.Blocks[i].Text, len(v.Blocks[i].Tokens))
	}
	require.Len(t, v.Sequences, len(st.sess.Live()))
	for i, q := range st.sess.Live() {
		require.Equal(t, q.ID(), v.Sequences[i].ID)
		require.Equal(t, q.KV.Table(), v.Sequences[i].Table)
		require.Equal(t, st.m.Tokenizer.Decode(q.KV.Tokens()), v.Sequences[i].Text)
	}
	require.Equal(t, st.hub.Published(), v.Events)
}

func kinds(evs []Event) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		out[e.Kind]++
	}
	return out
}

// TestStepperTutorialWalk is the page's three walks through Do, with stories260K greedy in
// blocks of 4 (the tutorial's numbers: "Once upon a time" is 5 tokens, greedy continues
// ", there was a little girl").
func TestStepperTutorialWalk(t *testing.T) {
	st := newStepper(t, 16, 4)

	// Prefix hit.
	a := do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	require.Equal(t, []int{1, 403, 407, 261, 378}, a.Added.Tokens)
	require.Equal(t, []string{"<s>", " Once", " upon", " a", " time"}, a.Added.Text)
	require.Zero(t, a.Added.Hit)
	require.Equal(t, map[string]int{"alloc": 2, "indexed": 1}, kinds(a.Events))
	d := do(t, st, stepper.Command{Op: "decode", Seq: a.Seq, N: 3})
	require.Len(t, d.Decoded, 3)
	var text []string
	for _, x := range d.Decoded {
		text = append(text, x.Text)
		require.Equal(t, "greedy", x.How)
		require.Equal(t, x.Token, x.Top[0].Token)
	}
	require.Equal(t, []string{",", " there", " was"}, text)
	require.Equal(t, 7, d.Decoded[2].Pos)
	require.Equal(t, [2]int{1, 3}, [2]int{d.Decoded[2].Block, d.Decoded[2].Slot})
	b := do(t, st, stepper.Command{Op: "add", Text: "Once upon a time, there was a little dog"})
	require.Equal(t, 8, b.Added.Hit, "blocks 0 and 1 come from the cache")
	require.Equal(t, 2, kinds(b.Events)["prefix_hit"])
	v, _ := st.View(t.Context())
	require.Equal(t, []int{0, 1}, v.Sequences[1].Table[:2])
	require.Equal(t, kvcache.StateShared, v.Blocks[0].State)

	// Fork and copy-on-write, after a reset.
	r := do(t, st, stepper.Command{Op: "reset"})
	require.Equal(t, "reset", r.Events[0].Kind)
	v, _ = st.View(t.Context())
	require.Empty(t, v.Sequences)
	require.Equal(t, 16, v.Stats.BlocksFree)
	a = do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	do(t, st, stepper.Command{Op: "decode", Seq: a.Seq, N: 4})
	f := do(t, st, stepper.Command{Op: "fork", Seq: a.Seq})
	require.Equal(t, 3, kinds(f.Events)["fork"])
	c := do(t, st, stepper.Command{Op: "decode", Seq: f.Seq})
	require.Equal(t, 2, c.Decoded[0].CopiedFrom, "block 2 was shared")
	require.Equal(t, 1, c.Decoded[0].CopiedSlots)
	require.Equal(t, 3, c.Decoded[0].Block)
	require.Equal(t, 1, kinds(c.Events)["cow"])
	c = do(t, st, stepper.Command{Op: "decode", Seq: a.Seq})
	require.Equal(t, -1, c.Decoded[0].CopiedFrom, "block 2 is private again")

	// Eviction in a pool of 6 blocks.
	do(t, st, stepper.Command{Op: "reset", Blocks: 6})
	a = do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	do(t, st, stepper.Command{Op: "decode", Seq: a.Seq, N: 7})
	v, _ = st.View(t.Context())
	first := v.Sequences[0].Text
	require.Equal(t, "Once upon a time, there was a little gir", first)
	free := do(t, st, stepper.Command{Op: "free", Seq: a.Seq})
	require.Equal(t, 3, kinds(free.Events)["release"])
	v, _ = st.View(t.Context())
	require.Equal(t, 3, v.Stats.BlocksCached)
	long := do(t, st, stepper.Command{Op: "add", Text: "Tom had a big red ball and he liked to play with it"})
	need := (len(long.Added.Tokens) + 3) / 4
	require.Greater(t, need, 3, "the walk's prompt must need more than the 3 free blocks")
	require.Equal(t, need-3, kinds(long.Events)["evict"])
	var evicted []int
	for _, e := range long.Events {
		if e.Kind == "evict" {
			evicted = append(evicted, e.Block)
		}
	}
	require.Equal(t, []int{2, 1}, evicted, "a prefix's last block is released first, so evicted first")
	do(t, st, stepper.Command{Op: "free", Seq: long.Seq})
	again := do(t, st, stepper.Command{Op: "add", Text: first})
	require.Len(t, again.Added.Tokens, 12, "the first sequence's 12 tokens again")
	require.Equal(t, 4, again.Added.Hit, "block 0 survived the eviction; blocks 1 and 2 are recomputed")
}

// TestStepperSettings: temperature, seed and attention change what decode steps do, and are
// reported back; attention weights come per position, drawn over the table.
func TestStepperSettings(t *testing.T) {
	st := newStepper(t, 16, 4)
	a := do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	layer, head := 2, 0
	r := do(t, st, stepper.Command{Op: "attention", Layer: &layer, Head: &head})
	require.Equal(t, 2, r.Settings.Layer)
	require.Equal(t, 0, r.Settings.Head)
	d := do(t, st, stepper.Command{Op: "decode", Seq: a.Seq, N: 4})
	require.Nil(t, d.Decoded[0].Attention, "only the last step of a command carries attention")
	att := d.Decoded[3].Attention
	require.NotNil(t, att)
	require.Len(t, att.Weights, d.Decoded[3].Pos+1)
	require.Equal(t, []int{0, 1, 2}, att.Table)
	sum := 0.0
	for _, w := range att.Weights {
		sum += w
	}
	require.InDelta(t, 1, sum, 1e-5)
	// The tutorial: head 0 of layer 2 puts 0.867 of its weight at pos 8 on pos 7 (" was").
	require.InDelta(t, 0.867, att.Weights[7], 5e-4)

	temp := 1.5
	seed := uint64(7)
	r = do(t, st, stepper.Command{Op: "temperature", Temperature: &temp})
	require.Equal(t, 1.5, r.Settings.Sampling.Temperature)
	r = do(t, st, stepper.Command{Op: "seed", Seed: &seed})
	require.Equal(t, uint64(7), r.Settings.Sampling.Seed)
	d = do(t, st, stepper.Command{Op: "decode", Seq: a.Seq})
	require.Equal(t, "sampled", d.Decoded[0].How)
	tok := 42
	d = do(t, st, stepper.Command{Op: "decode", Seq: a.Seq, Token: &tok})
	require.Equal(t, "picked", d.Decoded[0].How)
	require.Equal(t, 42, d.Decoded[0].Token)
}

// TestStepperRefusesBadCommands: each bad command is a 4xx that says what to do, and
// changes nothing.
func TestStepperRefusesBadCommands(t *testing.T) {
	st := newStepper(t, 4, 4)
	srv := httptest.NewServer(st.Handler())
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/v1/step", "application/json", bytes.NewBufferString(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post(`{"op":"decode","seq":0}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "add a prompt first")
	status, _ = post(`{"op":"add","text":"Once upon a time"}`)
	require.Equal(t, http.StatusOK, status)
	for _, c := range []struct {
		body, want string
		status     int
	}{
		{`{"op":"decode","seq":5}`, "the live ones are 0", 400},
		{`{"op":"fly"}`, "unknown op", 400},
		{`{}`, "has no", 400},
		{`{"op":"decode","seq":0,"n":100000}`, "at most 512", 400},
		{`{"op":"decode","seq":0,"token":99999}`, "token must be an id from 0 to 511", 400},
		{`{"op":"decode","seq":0,"token":3,"n":2}`, "n must be 1", 400},
		{`{"op":"temperature","temperature":-1}`, "≥ 0", 400},
		{`{"op":"attention","layer":9}`, "layer must be from 0 to 4", 400},
		{`{"op":"attention","layer":1,"head":8}`, "head must be from 0 to 7", 400},
		{`{"op":"reset","blocks":100000}`, "blocks must be from 1 to 4096", 400},
		{`{"op":"add","text":"` + longText(20) + `"}`, "out of blocks", 409},
		{`{"op":"decode","seq":0,"bogus":1}`, "unknown field", 400},
		{`{"op":"decode","seq":0} {}`, "more after it", 400},
		{`not json`, "one JSON command", 400},
	} {
		before, _ := st.View(t.Context())
		status, body := post(c.body)
		require.Equal(t, c.status, status, "%s: %s", c.body, body)
		require.Contains(t, body, c.want, c.body)
		after, _ := st.View(t.Context())
		require.Equal(t, before.Blocks, after.Blocks, c.body)
		require.Equal(t, before.Sequences, after.Sequences, c.body)
	}
	resp, err := http.Get(srv.URL + "/v1/step")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func longText(words int) string {
	var b bytes.Buffer
	for i := range words {
		fmt.Fprintf(&b, "w%d ", i)
	}
	return b.String()
}

// TestStepperConcurrentClients: many clients stepping and viewing at once are serialised by
// the stepper's lock (run with -race); every snapshot is consistent.
func TestStepperConcurrentClients(t *testing.T) {
	st := newStepper(t, 64, 4)
	srv := httptest.NewServer(st.Handler())
	defer srv.Close()
	do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				body := `{"op":"decode","seq":0,"n":1}`
				if i%3 == 2 {
					body = fmt.Sprintf(`{"op":"add","text":"Once upon a time %d %d"}`, c, i)
				}
				resp, err := http.Post(srv.URL+"/v1/step", "application/json", bytes.NewBufferString(body))
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("%s: status %d", body, resp.StatusCode)
				}
			}
		}()
	}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				resp, err := http.Get(srv.URL + "/v1/cache")
				if err != nil {
					errs <- err
					return
				}
				var v View
				err = json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
				if err == nil {
					err = v.Check()
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	requireViewAgrees(t, st)
	v, _ := st.View(t.Context())
	require.Equal(t, 5+4*4, v.Sequences[0].Len, "every decode of seq 0 counted once")
}

// TestViewCheckFindsDisagreements: Check refuses a snapshot whose parts disagree.
func TestViewCheckFindsDisagreements(t *testing.T) {
	st := newStepper(t, 8, 4)
	do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	good, err := st.View(t.Context())
	require.NoError(t, err)
	require.NoError(t, good.Check())
	for name, spoil := range map[string]func(v *View){
		"owners": func(v *View) { v.Blocks[0].Seqs = nil },
		"tokens": func(v *View) { v.Blocks[1].Tokens = append(v.Blocks[1].Tokens, 7) },
		"states": func(v *View) { v.Blocks[5].State = kvcache.StateCached },
		"tables": func(v *View) { v.Sequences[0].Table[1] = 6 },
		"range":  func(v *View) { v.Sequences[0].Table[0] = 99 },
	} {
		v, _ := st.View(t.Context())
		spoil(&v)
		require.Error(t, v.Check(), name)
	}
}
