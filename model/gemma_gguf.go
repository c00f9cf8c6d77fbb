package model

import (
	"fmt"

	"github.com/kvref/kvref/format/gguf"
)

// Gemma 2 and Gemma 3 in GGUF, as llama.cpp's converter writes them and its loader reads
// them (convert_hf_to_gguf.py, src/llama-model.cpp):
//   - the norm weights already hold Hugging Face's 1 + w (the converter adds 1 to every
//     "*norm.weight", Gemma 3's per-head q/k norms included), so they multiply as stored;
//   - the layer pattern is fixed by the architecture, not stored: gemma2 alternates a
//     sliding and a global layer (set_swa_pattern(2)), gemma3 makes every sixth layer
//     global (set_swa_pattern(6)); layer l slides when l mod N < N-1;
//   - gemma3's sliding layers rotate with base 10000 and no scaling; its global layers with
//     rope.freq_base and the file's rope scaling;
//   - the query scale is 1/sqrt(key_length), except for the 27B models (46 gemma2 layers,
//     62 gemma3 layers), where it is 1/sqrt(embedding_length/head_count): the file has no
//     key for query_pre_attn_scalar;
//   - gemma2's attention and final soft-caps default to 50 and 30, its window to 4096.

// gemmaPeriod is the fixed period of each Gemma architecture's layer pattern.
var gemmaPeriod = map[string]int{"gemma2": 2, "gemma3": 6}

// gemmaLocalRopeBase is the RoPE base of gemma3's sliding layers (llama.cpp's
// rope_freq_base_train_swa, transformers' rope_local_base_freq default).
const gemmaLocalRopeBase = 10000

// gemma27BLayers is the layer count of each architecture's 27B model, whose query scale
// llama.cpp takes from embedding_length/head_count.
var gemma27BLayers = map[string]int{"gemma2": 46, "gemma3": 62}

// GemmaPattern is the sliding-layer pattern of a Gemma architecture with the given period:
// layer l slides unless it is the last of its group of period layers (llama.cpp's
// set_swa_pattern; transformers' "sliding_attention" if (l+1) % period else "full_attention").
func GemmaPattern(layers, period int) []bool {
	p := make([]bool, layers)
	for l := range p {
		p[l] = (l+1)%period != 0
	}
	return p
}

// GGUFQueryScalar is the query_pre_attn_scalar llama.cpp uses for a Gemma GGUF file:
// headDim, except for the 27B models' layer counts.
func GGUFQueryScalar(arch string, layers, dim, heads, headDim int) int {
	if layers == gemma27BLayers[arch] && heads > 0 {
		return dim / heads
	}
	return headDim
}

// gemmaFromGGUF completes cfg (read by configFromGGUF) with the Gemma block of a gemma2 or
// gemma3 file.
func gemmaFromGGUF(f *gguf.File, cfg *Config) error {
	arch := cfg.Arch
	key := func(k string) string { return arch + "." + k }
	cfg.EmbedScale, cfg.PostNorms, cfg.Activation = true, true, ActivationGELUTanh
	cfg.QKVBias, cfg.QKNorm = false, arch == "gemma3"
	if _, ok := f.Lookup(key("attention.value_length")); ok {
		v, err := f.Uint(key("attention.value_length"))
		if err != nil {
			return err
		}
		if v != uint64(cfg.HeadDim) {
			return fmt.Errorf("model: %s: %s = %d differs from %s = %d; kvref needs keys and values of one head width",
				f.Path, key("attention.value_length"), v, key("attention.key_length"), cfg.HeadDim)
		}
	}

	// The window: gemma2's defaults to 4096; a gemma3 file without one has no sliding layers
	// (llama.cpp's converter omits it for an all-global model).
	window, hasWindow := uint64(0), false
	if _, ok := f.Lookup(key("attention.sliding_window")); ok {
		v, err := f.Uint(key("attention.sliding_window"))
		if err != nil {
			return err
		}
		window, hasWindow = v, true
	} else if arch == "gemma2" {
		window, hasWindow = 4096, true
	}
	if hasWindow {
		if err := CheckSlidingWindow(window, cfg.Context); err != nil {
			return fmt.Errorf("model: %s: %s %w", f.Path, key("attention.sliding_window"), err)
		}
		cfg.SlidingWindow = int(window)
		cfg.SlidingLayers = GemmaPattern(cfg.Layers, gemmaPeriod[arch])
		if err := checkGGUFPattern(f, key("attention.sliding_window_pattern"), cfg.SlidingLayers); err != nil {
			return err
		}
	}

	if arch == "gemma3" && hasWindow {
		if v, ok := f.Lookup(key("rope.freq_base_swa")); ok {
			if x, isNum := v.Float(); !isNum || x != gemmaLocalRopeBase {
				return fmt.Errorf("model: %s: %s = %s; llama.cpp rotates gemma3's sliding layers with base %d whatever this key says, so kvref refuses a file that means another",
					f.Path, key("rope.freq_base_swa"), v, gemmaLocalRopeBase)
			}
		}
		cfg.LocalRope = &Rope{Base: gemmaLocalRopeBase}
	}
	cfg.QueryScalar = float64(GGUFQueryScalar(arch, cfg.Layers, cfg.Dim, cfg.Heads, cfg.HeadDim))

	// The soft-caps: gemma2 always caps (50 and 30 unless the file says otherwise); gemma3
	// has no attention cap, and its logits are capped only when the file says so.
	if arch == "gemma2" {
		cfg.AttnSoftCap, cfg.FinalSoftCap = 50, 30
	} else if _, ok := f.Lookup(key("attn_logit_softcapping")); ok {
		return fmt.Errorf("model: %s: %s is set, but Gemma 3 has no attention soft-capping (transformers ignores the key and llama.cpp's converter refuses it); remove it",
			f.Path, key("attn_logit_softcapping"))
	}
	for _, c := range []struct {
		key string
		dst *float64
	}{{key("attn_logit_softcapping"), &cfg.AttnSoftCap}, {key("final_logit_softcapping"), &cfg.FinalSoftCap}} {
		if _, ok := f.Lookup(c.key); !ok {
			continue
		}
		v, err := f.Float(c.key)
		if err != nil {
			return err
		}
		if err := CheckOptionalPositive(v); err != nil || v == 0 {
			return fmt.Errorf("model: %s: %s is %g; a soft-cap must be a finite number > 0 (gemma2 uses 50 for attention, 30 for the logits; a gemma3 file omits the key for none)",
				f.Path, c.key, v)
		}
		*c.dst = v
	}
	return nil
}

// CheckSlidingWindow checks a Gemma sliding window against the context: 0 would leave a query
// nothing to attend to (transformers' mask and llama.cpp's both mask every position,
// itself included), and a window longer than the context never slides, which transformers
// and llama.cpp silently run as full attention; kvref says so instead, since a sliding
// layer that never slides is most likely a mistaken window.
func CheckSlidingWindow(window uint64, context int) error {
	switch {
	case window == 0:
		return fmt.Errorf("is 0: a query would attend to no position, not even its own; give the window of the sliding layers (Gemma 2: 4096, Gemma 3: 512 or 1024)")
	case window > uint64(context):
		return fmt.Errorf("is %d, longer than the context of %d: those layers would never slide; give a window no longer than the context, or make the layers full", window, context)
	}
	return nil
}

// checkGGUFPattern requires a file's ARCH.attention.sliding_window_pattern, when it has
// one, to be the architecture's fixed pattern: one bool per layer (true: sliding), or the
// period as an integer. llama.cpp ignores the key for gemma2 and gemma3, so a file whose
// key says otherwise would mean two different models.
func checkGGUFPattern(f *gguf.File, key string, want []bool) error {
	v, ok := f.Lookup(key)
	if !ok {
		return nil
	}
	got := make([]bool, len(want))
	if n, isInt := v.Uint(); isInt {
		if n == 0 {
			return fmt.Errorf("model: %s: %s is 0; a pattern period must be at least 1", f.Path, key)
		}
		copy(got, GemmaPattern(len(want), int(min(n, 1<<20))))
	} else if elems, isArr := v.Array(); isArr {
		if len(elems) != len(want) {
			return fmt.Errorf("model: %s: %s has %d entries for %d layers; it needs one per layer", f.Path, key, len(elems), len(want))
		}
		for i, e := range elems {
			b, isBool := e.Bool()
			if !isBool {
				return fmt.Errorf("model: %s: %s entry %d is %s, want a bool (true: the layer slides)", f.Path, key, i, e)
			}
			got[i] = b
		}
	} else {
		return fmt.Errorf("model: %s: %s is %s; want one bool per layer or the pattern's period", f.Path, key, v)
	}
	for l := range want {
		if got[l] != want[l] {
			return fmt.Errorf("model: %s: %s makes layer %d %s, but this architecture's layers follow a fixed pattern in which it is %s (llama.cpp ignores the key); kvref refuses a file that means two models",
				f.Path, key, l, slidingWord(got[l]), slidingWord(want[l]))
		}
	}
	return nil
}

func slidingWord(sliding bool) string {
	if sliding {
		return "sliding"
	}
	return "global"
}
