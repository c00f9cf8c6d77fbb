package golden

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// UnreachableError is a target that does not answer GET /models: a server that is not
// running (or not yet), a wrong URL, or not an OpenAI-compatible server. kvref verify
// reports it on one line and exits with status 2, before any scenario, so that a CI job
// whose server is still starting does not report cache failures.
type UnreachableError struct {
	URL    string
	Reason string
	Waited time.Duration
}

func (e *UnreachableError) Error() string {
	msg := fmt.Sprintf("the target %s does not answer: %s", e.URL, e.Reason)
	if e.Waited > 0 {
		msg += fmt.Sprintf(" (waited %s)", e.Waited.Round(time.Millisecond))
	}
	return msg + "; is the server running? (--wait DURATION waits for it)"
}

// Ready checks that the target answers GET BaseURL/models with 200 and a JSON body,
// polling every 250 ms for up to wait (0: one try).
func (t *Target) Ready(ctx context.Context, wait time.Duration) error {
	base := strings.TrimRight(t.BaseURL, "/")
	start := time.Now()
	for {
		reason := t.probe(ctx, base)
		if reason == "" {
			return nil
		}
		waited := time.Since(start)
		if waited >= wait || ctx.Err() != nil {
			return &UnreachableError{URL: base + "/models", Reason: reason, Waited: min(waited, wait)}
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(250*time.Millisecond, wait-waited)):
		}
	}
}

// probe asks for the model list once and says what is wrong ("" when it answered).
func (t *Target) probe(ctx context.Context, base string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return err.Error()
	}
	resp, err := t.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Sprintf("GET /models answered %s", resp.Status)
	case !strings.Contains(string(body), `"data"`):
		return "GET /models did not return a model list"
	}
	return ""
}

// isTransport reports whether a request failed on transport — the connection refused,
// reset or closed early, or a timeout — rather than with an answer from the server.
func isTransport(err error) bool {
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &oe), errors.As(err, &ne):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}
