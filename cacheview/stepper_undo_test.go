package cacheview

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/stepper"
)

// TestStepperUndo: undo through Do takes back a fork with its copy-on-write decode and a
// free, one command at a time: after each the View (blocks, tables, statistics) is the one
// before the command, the record says from which event on the page must forget, and the
// hub's history no longer replays or counts the events taken back.
func TestStepperUndo(t *testing.T) {
	st := newStepper(t, 16, 4)
	do(t, st, stepper.Command{Op: "add", Text: "Once upon a time"})
	do(t, st, stepper.Command{Op: "decode", Seq: 0, N: 2}) // 7 tokens: block 1 holds 3
	type moment struct {
		view View
		pub  int64
	}
	var before []moment
	var recs []StepRecord
	for _, c := range []stepper.Command{{Op: "fork", Seq: 0}, {Op: "decode", Seq: 1}, {Op: "free", Seq: 0}} {
		v, err := st.View(t.Context())
		require.NoError(t, err)
		before = append(before, moment{v, st.hub.Published()})
		recs = append(recs, do(t, st, c))
	}
	require.Equal(t, 1, recs[1].Decoded[0].CopiedFrom, "the fork's first token copies the shared block 1")
	for i := len(before) - 1; i >= 0; i-- {
		rec := do(t, st, stepper.Command{Op: "undo"})
		require.NotNil(t, rec.Undone)
		require.Equal(t, before[i].pub+1, rec.Undone.EventsFrom, "undo %d", i)
		require.Equal(t, recs[i].Message, rec.Undone.Message)
		v, err := st.View(t.Context())
		require.NoError(t, err)
		require.Equal(t, before[i].view.Blocks, v.Blocks, "undo %d", i)
		require.Equal(t, before[i].view.Sequences, v.Sequences, "undo %d", i)
		require.Equal(t, before[i].view.Stats, v.Stats, "undo %d", i)
		_, replay, hello := st.hub.SubscribeSince(0)
		for _, e := range replay {
			require.Less(t, e.N, rec.Undone.EventsFrom, "a page that opens now does not replay event %d", e.N)
		}
		n := int64(len(replay))
		for _, k := range hello.Tally {
			n += k.N
		}
		require.Equal(t, before[i].pub, n, "the history counts the events before the command, no more")
	}
	require.Nil(t, recs[0].Undone)
	_, err := st.Do(stepper.Command{Op: "undo"})
	require.NoError(t, err, "the prompt's decode and add can be undone too")
}
