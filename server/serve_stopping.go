package server

import (
	"context"
	"net"
)

// ServeNotify is Serve that calls stopping once ctx is done, before the graceful shutdown
// begins, and waits for it to return before Serve returns: a command can restore a
// signal's default effect there (so that a second Ctrl-C quits at once) and say what
// happens next. stopping is not called when Serve ends on its own (a failed listener).
func (s *Server) ServeNotify(ctx context.Context, ln net.Listener, stopping func()) error {
	failed := make(chan struct{}) // closed when Serve ended on its own
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			stopping()
		case <-failed:
		}
	}()
	err := s.Serve(ctx, ln)
	if ctx.Err() == nil {
		close(failed)
	}
	<-watched
	return err
}
