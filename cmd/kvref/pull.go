package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/kvref/kvref/internal/hub"
)

func init() {
	register(command{"pull", "download a model file from the Hugging Face hub or a URL into the cache", pullCmd})
}

// pullUsage is the help text of kvref pull, above its flags.
const pullUsage = `usage: kvref pull [--force] [--cache DIR] [--sha256 HEX] REF...

Downloads each file into the cache and prints its local path on stdout, one per line.

REF is one of
  hf://OWNER/REPO/PATH[@REV]  a file on the Hugging Face hub; REV is a branch, tag or commit
                              (default main), e.g. hf://ggml-org/models/tinyllamas/stories260K.gguf
  https://HOST/PATH           any URL (http:// too)

A file already in the cache is printed without any request (--force downloads it again). An
interrupted download resumes where it stopped when pulled again. A download enters the cache
only after it matches every checksum known for it: the sha256 the hub announces for LFS files
(the git blob sha1 for small files), and the one given with --sha256. A server that announces
none (a plain URL) is trusted unless --sha256 is given: its sha256 is printed instead. With
--sha256, a file already in the cache is checked against it too.

environment:
  HF_ENDPOINT  hub address (default https://huggingface.co)
  HF_TOKEN     access token for private and gated repos (sent to the hub only)
  KVREF_CACHE  cache directory (default: kvref in the user cache directory)`

func pullCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pull", stderr, pullUsage)
	force := fs.Bool("force", false, "download again even when the file is cached")
	cache := fs.String("cache", "", "cache directory (default: $KVREF_CACHE, else kvref in the user cache directory)")
	sum := fs.String("sha256", "", "expected sha256 of the file (one REF only): verified whatever the server announces")
	refs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		fs.Usage()
		return errUsage
	}
	if *sum != "" && len(refs) != 1 {
		return fmt.Errorf("--sha256 names the checksum of one file, but %d references were given", len(refs))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, ref := range refs {
		p, err := hub.Fetch(ctx, ref, hub.Options{CacheDir: *cache, Force: *force, Progress: stderr, SHA256: *sum})
		if err != nil {
			return pullHint(err)
		}
		fmt.Fprintln(stdout, p)
	}
	return nil
}
