package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/tokenizer"
)

func init() {
	register(command{"tokenize", "print the token ids of a text, or the text of token ids", tokenizeCmd})
}

func tokenizeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", stderr,
		"usage: kvref tokenize [-m MODEL] [--no-bos] [--special] [--json] TEXT",
		"       kvref tokenize [-m MODEL] --decode [--keep-special] [--json] IDS")
	var mf modelFlags
	mf.register(fs, "model or vocabulary: a GGUF file of any architecture (llama.cpp's vocabulary-only ggml-vocab-*.gguf too), a directory with tokenizer.json, a llama2.c checkpoint, an hf:// reference, or synth:SHAPE; empty: the built-in stories260K")
	noBOS := fs.Bool("no-bos", false, "do not add BOS (and EOS) even when the tokenizer adds them")
	special := fs.Bool("special", false, "parse special tokens in TEXT: \"<s>\", \"<|im_start|>\", ... become those tokens, as llama-server and Hugging Face do")
	decode := fs.Bool("decode", false, "TEXT is token ids (\"1 403 407\" or a JSON array): print their text")
	keep := fs.Bool("keep-special", false, "with --decode: control tokens give their text (Hugging Face's skip_special_tokens=false)")
	asJSON := fs.Bool("json", false, "print a JSON array of ids (with --decode: the text as a JSON string)")
	if err := parseOneArg(fs, args); err != nil {
		return err
	}
	switch {
	case *keep && !*decode:
		return errors.New("--keep-special needs --decode (it says how control tokens decode)")
	case *decode && (*special || *noBOS):
		return errors.New("--special and --no-bos are for encoding text; --decode reads token ids")
	}
	tok, err := loadTokenizer(mf.ref, mf.tokenizer, stderr)
	if err != nil {
		return err
	}
	if *decode {
		ids, err := tokenizer.ParseIDs(fs.Arg(0), tok)
		if err != nil {
			return err
		}
		text := tok.DecodeSpecial(ids, *keep)
		if *asJSON {
			return printJSON(stdout, text)
		}
		fmt.Fprintln(stdout, text)
		return nil
	}
	ids := tok.EncodeSpecial(fs.Arg(0), tokenizer.EncodeOptions{AddSpecial: !*noBOS, ParseSpecial: *special})
	if *asJSON {
		if ids == nil {
			ids = []int{}
		}
		return printJSON(stdout, ids)
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	fmt.Fprintln(stdout, strings.Join(s, " "))
	return nil
}
