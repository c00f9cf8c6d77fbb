package golden

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/server"
)

// TestTransportErrorsAreErrors: a request whose connection the server drops is a transport
// error, and its scenario's outcome is "error", not a cache failure (the expected hits it
// leaves unobserved are not held against the cache); Report.Err is a *TransportError.
// Ready reports a closed port at once and with a wait.
func TestTransportErrorsAreErrors(t *testing.T) {
	goldens := promptGoldens(t)[:1] // prompt-logprobs-full-hit.f32
	eng, err := engine.New(tiny(t), engine.Config{BlockSize: tinyParams.BlockSize, CacheBlocks: tinyParams.Blocks, Threads: 1})
	require.NoError(t, err)
	defer eng.Close()
	srv := server.New(eng, server.Options{})
	go srv.Run(context.Background())
	defer srv.Close()
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "/S1") { // drop S1's connection
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	target := &Target{BaseURL: ts.URL + "/v1"}
	require.NoError(t, target.Ready(context.Background(), 0))
	cand, err := target.Run(context.Background(), goldens)
	require.NoError(t, err)
	require.NotEmpty(t, cand.Scenarios[goldens[0].Scenario.Name].Requests["S1"].Transport)
	rep, err := Verify(goldens, cand, VerifyOptions{})
	require.NoError(t, err)
	s := rep.Scenarios[0]
	require.Equal(t, StatusError, s.Status)
	require.Empty(t, s.Failures)
	require.Contains(t, s.Errors[0], "request S1: ")
	var te *TransportError
	require.True(t, errors.As(rep.Err(), &te))
	require.Contains(t, rep.CountsLine(), "1 error")

	closed := &Target{BaseURL: "http://127.0.0.1:9/v1"}
	var ue *UnreachableError
	require.True(t, errors.As(closed.Ready(context.Background(), 0), &ue))
	start := time.Now()
	err = closed.Ready(context.Background(), 600*time.Millisecond)
	require.True(t, errors.As(err, &ue))
	require.GreaterOrEqual(t, time.Since(start), 600*time.Millisecond)
	require.Contains(t, err.Error(), "(waited 600ms)")
}
