package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

func init() {
	register(command{"tokenize", "print the token ids of a text", tokenizeCmd})
}

func tokenizeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", stderr)
	modelPath := fs.String("m", "", "model: GGUF file, Hugging Face directory, llama2.c checkpoint, hf:// reference, or synth:SHAPE; empty: the built-in stories260K")
	tokPath := fs.String("tokenizer", "", "tokenizer.bin of a llama2.c checkpoint (default: tokenizer.bin beside it)")
	noBOS := fs.Bool("no-bos", false, "do not add BOS even when the model's tokenizer adds one")
	asJSON := fs.Bool("json", false, "print a JSON array")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref tokenize [-m MODEL] [--no-bos] [--json] TEXT")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	m, err := loadModelWith(*modelPath, *tokPath, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	ids := m.Tokenizer.Encode(fs.Arg(0), !*noBOS)
	if *asJSON {
		if ids == nil {
			ids = []int{}
		}
		b, _ := json.Marshal(ids)
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	fmt.Fprintln(stdout, strings.Join(s, " "))
	return nil
}
