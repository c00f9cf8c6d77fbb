package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVerifyTargetForCI: against a port nothing listens on, kvref verify prints one error
// line and exits 2 (not 1, the status of failed scenarios) before any scenario; with
// --wait it polls until a server started later answers, then runs the prompt-logprobs
// scenarios, which pass.
func TestVerifyTargetForCI(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := kvref(t, "golden", "--out", dir, "--suite", "prompt-logprobs", "--block-size", "8", "--cache-blocks", "64", "-t", "2", "--run", `\.f32$`)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "recorded 4 scenarios")

	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%s/v1", port)
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--target", url)
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "kvref verify: the target "+url+"/models does not answer: ")
	require.Contains(t, stderr, "connection refused")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	exited := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		exited <- serve(ctx, func() {}, []string{"--port", fmt.Sprint(port), "--block-size", "8", "--cache-blocks", "64", "-t", "2", "--quiet"}, io.Discard, io.Discard)
	}()
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--target", url, "--wait", "30s", "--flush-url", fmt.Sprintf("http://127.0.0.1:%s/reset_prefix_cache", port))
	require.Equal(t, 0, code, out+stderr)
	require.Contains(t, out, "PASS: 4 scenarios, 4 passed")
	stop()
	require.NoError(t, <-exited)
}
