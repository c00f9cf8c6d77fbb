package server

import (
	"bytes"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Memory after large requests. Decoding a request of megabytes (a chat request with
// hundreds of thousands of template variables, say, refused once decoded) takes a few
// times its size of heap, which is garbage as soon as it is answered; Go returns such
// memory to the system only gradually, so a burst of them left the process at ten times
// its idle size for minutes. A request body of largeBody bytes or more makes the server
// return freed memory to the system once it is answered (debug.FreeOSMemory: a garbage
// collection, whose cost follows the live heap, small between requests), once per burst.

const (
	largeBody    = 1 << 20
	releaseAfter = 200 * time.Millisecond
)

// releasePending is set while a release is scheduled (shared by all servers): the large
// requests of a burst share one release, after the last of them.
var releasePending atomic.Bool

// releaseLarge schedules the return of freed memory to the system after a request of n
// body bytes, when n is large: releaseAfter from now, unless one is scheduled already.
func (s *Server) releaseLarge(n int) {
	if n < largeBody || !releasePending.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(releaseAfter, func() {
		releasePending.Store(false)
		debug.FreeOSMemory()
	})
}

// readBody reads a request body into one buffer of its declared length (when it gives one
// within limit), not a buffer doubled as it grows.
func readBody(r io.Reader, length, limit int64) ([]byte, error) {
	if length <= 0 || length > limit {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, length+1))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
