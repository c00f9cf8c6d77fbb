package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/builtin"
)

// BenchmarkCacheViewers measures what watching costs the engine: kvref serve's throughput
// on the embedded stories260K with 4 viewers connected against none, in one run, rounds
// alternating. A viewer does what the page does: it reads the event stream and fetches
// /v1/cache at most every 150 ms ("page"); the "greedy" viewers fetch /v1/cache back to
// back, the worst a client can do. It reports tokens per second of each and the ratios:
//
//	go test ./server -run '^$' -bench CacheViewers -benchtime 1x
func BenchmarkCacheViewers(b *testing.B) {
	m, err := builtin.Model()
	require.NoError(b, err)
	eng, err := engine.New(m, engine.Config{BlockSize: 16, Sequences: 16})
	require.NoError(b, err)
	defer eng.Close()
	srv := New(eng, Options{})
	loop := make(chan error, 1)
	go func() { loop <- srv.Run(context.Background()) }()
	hs := &http.Server{Handler: srv.Handler()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go hs.Serve(ln)
	defer func() { hs.Close(); srv.Close(); <-loop }()
	url := "http://" + ln.Addr().String()

	// One round: 16 concurrent requests of 96 tokens each (a shared 5-token prefix).
	round := func() float64 {
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		tokens := 0
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"prompt": "Once upon a time", "max_tokens": 96, "ignore_eos": true, "temperature": 0.8, "seed": %d}`, i)
				resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				var r CompletionResponse
				err = json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				if err != nil || r.Usage == nil {
					b.Errorf("request %d: %v", i, err)
					return
				}
				mu.Lock()
				tokens += r.Usage.CompletionTokens
				mu.Unlock()
			}()
		}
		wg.Wait()
		return float64(tokens) / time.Since(start).Seconds()
	}
	// viewers connects n viewers until stop is closed; interval 0 fetches back to back.
	viewers := func(n int, interval time.Duration) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range n {
			wg.Add(2)
			go func() { // the event stream
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/cache/events", nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
				}
			}()
			go func() { // the snapshots
				defer wg.Done()
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/cache", nil)
					if resp, err := http.DefaultClient.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					if interval > 0 {
						select {
						case <-time.After(interval):
						case <-ctx.Done():
						}
					}
				}
			}()
		}
		time.Sleep(100 * time.Millisecond) // connected
		return func() { cancel(); wg.Wait() }
	}

	// Each round measures the three settings back to back, in a rotating order, and the
	// ratios are taken within a round, so that a change in the machine's load between
	// rounds cancels out; the medians over the rounds are reported.
	round() // warm up
	const rounds = 11
	var none, page, greedy, pageRatio, greedyRatio []float64
	for r := range rounds {
		var tps [3]float64
		for k := range 3 {
			setting := (r + k) % 3
			var stop func()
			switch setting {
			case 1:
				stop = viewers(4, 150*time.Millisecond)
			case 2:
				stop = viewers(4, 0)
			}
			tps[setting] = round()
			if stop != nil {
				stop()
			}
		}
		none, page, greedy = append(none, tps[0]), append(page, tps[1]), append(greedy, tps[2])
		pageRatio, greedyRatio = append(pageRatio, tps[1]/tps[0]), append(greedyRatio, tps[2]/tps[0])
	}
	med := func(x []float64) float64 { x = slices.Clone(x); slices.Sort(x); return x[len(x)/2] }
	b.ReportMetric(med(none), "tok/s_none")
	b.ReportMetric(med(page), "tok/s_4page")
	b.ReportMetric(med(greedy), "tok/s_4greedy")
	b.ReportMetric(med(pageRatio), "ratio_4page/none")
	b.ReportMetric(med(greedyRatio), "ratio_4greedy/none")
	// What one snapshot costs, measured while a round runs: the copy on the engine loop, and
	// the description and JSON off it.
	var onLoop, offLoop time.Duration
	const samples = 40
	busy := make(chan float64, 1)
	go func() { busy <- round() }()
	time.Sleep(200 * time.Millisecond)
	for range samples {
		time.Sleep(20 * time.Millisecond)
		var snap kvcache.Snapshot
		srv.Inspect(context.Background(), func(e *engine.Engine) {
			t1 := time.Now()
			snap = e.Pool().Snapshot()
			onLoop += time.Since(t1)
		})
		t2 := time.Now()
		json.Marshal(cacheview.Build("serve", "x", eng, snap, 0))
		offLoop += time.Since(t2)
	}
	<-busy
	onLoop, offLoop = onLoop/samples, offLoop/samples
	b.ReportMetric(float64(onLoop.Microseconds()), "µs_snapshot_on_loop")
	b.ReportMetric(float64(offLoop.Microseconds()), "µs_snapshot_off_loop")
	b.Logf("one snapshot of the %d-block pool: %v on the engine loop (at most one per %v: ≤ %.2f%% of the loop), %v to describe and encode off it",
		eng.Pool().Config().NumBlocks, onLoop, cacheview.MinSnapshotInterval, 100*float64(onLoop)/float64(cacheview.MinSnapshotInterval), offLoop)
	b.Logf("%d rounds of 16 requests × 96 tokens: none %.0f tok/s, 4 page viewers %.0f tok/s, 4 greedy viewers %.0f tok/s (medians); "+
		"ratios within a round, median (min–max): 4 page/none %.3f (%.3f–%.3f), 4 greedy/none %.3f (%.3f–%.3f)",
		rounds, med(none), med(page), med(greedy), med(pageRatio), slices.Min(pageRatio), slices.Max(pageRatio),
		med(greedyRatio), slices.Min(greedyRatio), slices.Max(greedyRatio))
}
