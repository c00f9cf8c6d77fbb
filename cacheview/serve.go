package cacheview

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve serves the stepper's page and API (Handler) on ln until ctx is done, then shuts the
// HTTP server down, closing within a second the event streams that do not end by
// themselves. It returns the error that stopped serving, nil after a shutdown.
func (s *Stepper) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close() // open event streams do not end by themselves
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
