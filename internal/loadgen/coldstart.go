package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ColdStart is one cold start of a server: the times from starting its process until it
// answers /health with 200, and until the first token of a completion sent then arrives.
type ColdStart struct {
	Command     []string `json:"command"`
	PromptLen   int      `json:"prompt_len"`
	Ready       float64  `json:"ready_seconds"`       // process start to /health 200
	TTFT        float64  `json:"ttft_seconds"`        // request sent (once ready) to its first token
	FirstToken  float64  `json:"first_token_seconds"` // process start to the first token: Ready + TTFT
	ServerError string   `json:"server_stderr,omitempty"`
}

// MeasureColdStart starts the server command argv (which must listen where c.URL says),
// polls c.URL's /health every few milliseconds until it answers 200, sends one streamed
// completion of c.Prompts(1)[0] for one token, and stops the server (SIGTERM, then SIGKILL
// after five seconds). The server's stderr is kept for the error when it fails. Give each
// start its own port: the connections llama-server closes linger in TIME_WAIT without
// SO_REUSEADDR, and the next server on that port may fail to bind for a minute.
func MeasureColdStart(ctx context.Context, c Config, argv []string) (ColdStart, error) {
	out := ColdStart{Command: argv}
	if len(argv) == 0 {
		return out, fmt.Errorf("loadgen: no server command to start")
	}
	if c.Vocab < 4 {
		return out, fmt.Errorf("loadgen: vocabulary bound %d: give at least 4", c.Vocab)
	}
	endpoint, err := c.Endpoint()
	if err != nil {
		return out, err
	}
	u, _ := url.Parse(endpoint)
	health := u.Scheme + "://" + u.Host + "/health"
	prompt := c.Prompts(1)[0]
	out.PromptLen = len(prompt)
	client := c.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Minute}
	}
	// The port must be free: a server still answering there would be measured instead (and
	// one that has just been stopped may hold it for a moment).
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			return out, fmt.Errorf("loadgen: something still listens on %s after 10 s: stop it before a cold start", u.Host)
		}
		time.Sleep(50 * time.Millisecond)
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	stderr := &limitedWriter{n: 1 << 16}
	cmd.Stderr = stderr
	cmd.Stdout = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return out, fmt.Errorf("loadgen: starting %s: %w", argv[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	for {
		select {
		case err := <-exited:
			exited <- err
			return out, fmt.Errorf("loadgen: %s exited before it was ready (%v); its last words: %s", argv[0], err, lastWords(stderr.String()))
		case <-ctx.Done():
			return out, ctx.Err()
		default:
		}
		resp, err := client.Get(health)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	out.Ready = time.Since(start).Seconds()
	o := Send(ctx, client, endpoint, c.Model, prompt, 1)
	if !o.Success {
		return out, fmt.Errorf("loadgen: the first completion failed: %s; the server's last words: %s", o.Error, lastWords(stderr.String()))
	}
	out.TTFT = o.TTFT
	out.FirstToken = out.Ready + o.TTFT
	return out, nil
}

// lastWords returns the last three non-empty lines of s, joined by " | ".
func lastWords(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	if len(lines) == 0 {
		return "(nothing on stderr)"
	}
	return strings.Join(lines, " | ")
}

// limitedWriter keeps the last writes up to about n bytes (it drops the oldest half when
// full), so that a chatty server's log does not grow without bound. It is safe for one
// writer and concurrent readers.
type limitedWriter struct {
	mu sync.Mutex
	b  []byte
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.b)+len(p) > l.n {
		l.b = append(l.b[:0], l.b[len(l.b)/2:]...)
	}
	l.b = append(l.b, p...)
	return len(p), nil
}

// String returns what the writer holds.
func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// MeasureColdStarts runs MeasureColdStart rounds times, one after another, saying on
// progress (nil: nowhere) which start runs.
func MeasureColdStarts(ctx context.Context, c Config, argv []string, rounds int, progress io.Writer) ([]ColdStart, error) {
	var runs []ColdStart
	for i := range rounds {
		if progress != nil {
			fmt.Fprintf(progress, "kvref loadgen: cold start %d of %d: %s\n", i+1, rounds, strings.Join(argv, " "))
		}
		r, err := MeasureColdStart(ctx, c, argv)
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// WriteColdStarts writes the cold starts of the server command argv as a table, one row
// per run, and the median time to the first token.
func WriteColdStarts(w io.Writer, argv []string, runs []ColdStart) {
	fmt.Fprintf(w, "cold start of %s\n%6s %14s %14s %16s\n", strings.Join(argv, " "), "run", "ready s", "TTFT s", "first token s")
	var first []float64
	for i, r := range runs {
		fmt.Fprintf(w, "%6d %14.3f %14.3f %16.3f\n", i+1, r.Ready, r.TTFT, r.FirstToken)
		first = append(first, r.FirstToken)
	}
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(w, "median first token %.3f s (process start to the first token of a %d-token prompt; ready: /health answers 200)\n", Percentile(first, 50), runs[0].PromptLen)
}
