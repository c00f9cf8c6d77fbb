package main

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/internal/inspect"
	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
)

func init() {
	register(command{"inspect", "show a model's hyper-parameters, tensors and KV-cache arithmetic", inspectCmd})
}

func inspectCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", stderr, "usage: kvref inspect [--mem SIZE] [--json] MODEL")
	var mem sizeFlag
	fs.Var(&mem, "mem", "memory for weights and cache (default: this machine's available memory; "+plan.SizeHelp+")")
	blockSize := fs.Int("block-size", kvcache.DefaultBlockSize, "cache block size for the arithmetic")
	asJSON := fs.Bool("json", false, "print one JSON object")
	tokPath := fs.String("tokenizer", "", "tokenizer.bin of a llama2.c checkpoint (default: tokenizer.bin beside it)")
	if err := parseOneArg(fs, args); err != nil {
		return err
	}
	m, err := loadModel(fs.Arg(0), *tokPath, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	var memory int64
	var source string
	if mem.set() {
		memory, source = mem.bytes, "--mem "+mem.text
	} else if memory, _, err = pages.AvailableMemory(); err == nil {
		source = "this machine's available memory"
	} else {
		return fmt.Errorf("%v; give --mem", err)
	}
	rep := inspect.New(m, memory, source, *blockSize)
	if *asJSON {
		return printJSON(stdout, rep)
	}
	rep.WriteText(stdout)
	return nil
}
