package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/server"
	"github.com/kvref/kvref/stepper"
)

// stepWeb is `kvref step --web`: the session of kvref step behind the cache view's page,
// until ctx is done. ready, when not nil, receives the page's URL once it is served (tests).
func stepWeb(ctx context.Context, o stepOptions, stderr io.Writer, ready func(url string)) error {
	cfg, err := o.engineFlags.config(1)
	if err != nil {
		return err
	}
	announce(o.modelFlags.ref, stderr)
	m, err := o.modelFlags.open(stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	attn, err := stepper.ParseAttention(o.attn, m.Config.Layers, m.Config.Heads)
	if err != nil {
		return fmt.Errorf("--attn: %w", err)
	}
	st, err := cacheview.NewStepper(m, server.ModelName(m.Source), cfg, stepper.Options{Sampling: o.sampling, Check: o.check, Attention: &attn})
	if err != nil {
		return err
	}
	defer st.Close()
	if o.prompt != "" {
		if _, err := st.Do(stepper.Command{Op: "add", Text: o.prompt}); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stderr, "kvref step --web: %s on %s; open %s (Ctrl-C stops)\n", server.ModelName(m.Source), m.Source, url)
	if ready != nil {
		ready(url)
	}
	return st.Serve(ctx, ln)
}
