package hf

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// Gemma 2 and Gemma 3 directories, read with transformers' semantics (modeling_gemma2.py,
// modeling_gemma3.py and their configurations):
//   - keys a config.json omits take the configuration class's defaults (Gemma 3's 4B-27B
//     text_config leaves out most of them);
//   - every RMSNorm multiplies by (1 + w): the loader adds 1 to each norm weight in float32,
//     as transformers does (1.0 + weight.float()) and as llama.cpp's converter writes them;
//   - the layers that slide come from layer_types, or else from sliding_window_pattern
//     (layer l slides unless (l+1) is a multiple of it; Gemma 2: 2, Gemma 3: 6);
//   - Gemma 3's sliding layers rotate with rope_local_base_freq and no scaling, its global
//     layers with rope_theta and rope_scaling (or transformers 5's rope_parameters per
//     layer type);
//   - Gemma3ForConditionalGeneration's text model is read from text_config and its
//     language_model tensors; the vision tower is not loaded.

// gemmaDefaults are transformers' defaults for a Gemma configuration (Gemma2Config,
// Gemma3TextConfig): config.json is decoded over them, so an absent key keeps its default.
func gemmaDefaults(modelType string) Config {
	f := func(x float64) *float64 { return &x }
	c := Config{VocabSize: 262208, HiddenSize: 2304, IntermediateSize: 9216, NumHiddenLayers: 26, NumAttentionHeads: 8,
		NumKeyValueHeads: 4, HeadDim: 256, HiddenActivation: "gelu_pytorch_tanh", MaxPositionEmbeddings: 131072,
		RMSNormEps: 1e-6, TieWordEmbeddings: true, RopeTheta: f(1e6), QueryPreAttnScalar: 256,
		SlidingWindow: json.RawMessage("4096"), RopeLocalBaseFreq: f(10000)}
	if modelType == "gemma2" {
		c.VocabSize, c.MaxPositionEmbeddings, c.RopeTheta, c.RopeLocalBaseFreq = 256000, 8192, f(10000), nil
		c.AttnLogitSoftcapping, c.FinalLogitSoftcapping = json.RawMessage("50.0"), json.RawMessage("30.0")
	}
	return c
}

// gemmaLayerTypes are the values of layer_types kvref computes.
const (
	slidingAttention = "sliding_attention"
	fullAttention    = "full_attention"
)

// readGemmaConfig reads a Gemma config.json (class names its architecture).
func readGemmaConfig(path, class string, data []byte) (model.Config, Config, error) {
	fail := func(err error) (model.Config, Config, error) { return model.Config{}, Config{}, err }
	arch, key := architectures[class], func(k string) string { return k }
	var hc Config
	if class == "Gemma3ForConditionalGeneration" {
		var top Config
		if err := decodeJSON(path, data, &top); err != nil {
			return fail(err)
		}
		if err := checkNames(path, class, top); err != nil {
			return fail(err)
		}
		if len(top.TextConfig) == 0 || string(top.TextConfig) == "null" {
			return fail(fmt.Errorf("hf: %s: %s has no text_config; kvref reads the text model from it", path, class))
		}
		hc = gemmaDefaults("gemma3_text")
		if err := decodeJSON(path+" (text_config)", top.TextConfig, &hc); err != nil {
			return fail(err)
		}
		if hc.ModelType != "" && hc.ModelType != "gemma3_text" {
			return fail(fmt.Errorf("hf: %s: text_config.model_type is %q, want \"gemma3_text\"", path, hc.ModelType))
		}
		if len(hc.BOSTokenID) == 0 {
			hc.BOSTokenID = top.BOSTokenID
		}
		if len(hc.EOSTokenID) == 0 {
			hc.EOSTokenID = top.EOSTokenID
		}
		key = func(k string) string { return "text_config." + k }
	} else {
		hc = gemmaDefaults(modelTypes[class])
		if err := decodeJSON(path, data, &hc); err != nil {
			return fail(err)
		}
		if err := checkNames(path, class, hc); err != nil {
			return fail(err)
		}
	}
	errf := func(format string, args ...any) (model.Config, Config, error) {
		return fail(fmt.Errorf("hf: %s: "+format, append([]any{path}, args...)...))
	}
	switch {
	case hc.HiddenActivation != "gelu_pytorch_tanh":
		return errf("%s is %q; kvref computes Gemma's feed-forward with gelu_pytorch_tanh (GELU, tanh approximation)", key("hidden_activation"), hc.HiddenActivation)
	case hc.UseBidirectionalAttention:
		return errf("%s is true: this is an embedding model (EmbeddingGemma) that attends in both directions; kvref decodes causal language models", key("use_bidirectional_attention"))
	case hc.AttentionBias:
		return errf("%s is true; Gemma's projections have no biases and kvref computes none for them", key("attention_bias"))
	}
	c := model.Config{
		Arch: arch, Dim: hc.HiddenSize, Layers: hc.NumHiddenLayers, Heads: hc.NumAttentionHeads, KVHeads: hc.NumKeyValueHeads,
		HeadDim: hc.HeadDim, Hidden: hc.IntermediateSize, Vocab: hc.VocabSize, Context: hc.MaxPositionEmbeddings,
		RopeStyle: kernels.RoPEHalves, NormEps: float32(hc.RMSNormEps), Tied: hc.TieWordEmbeddings, QKNorm: arch == "gemma3",
		EmbedScale: true, PostNorms: true, Activation: model.ActivationGELUTanh,
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if c.HeadDim == 0 && c.Heads > 0 {
		c.HeadDim = c.Dim / c.Heads
	}
	c.RopeDims = c.HeadDim
	if err := model.CheckNormEps(hc.RMSNormEps); err != nil {
		return errf("%s %w", key("rms_norm_eps"), err)
	}
	if err := model.CheckOptionalPositive(hc.QueryPreAttnScalar); err != nil || hc.QueryPreAttnScalar == 0 {
		return errf("%s is %g; the attention scale is its inverse square root, so it must be a finite number > 0 (the real models: the head dim)", key("query_pre_attn_scalar"), hc.QueryPreAttnScalar)
	}
	c.QueryScalar = hc.QueryPreAttnScalar

	// Soft-caps: a number > 0, or null for none. Gemma 3 has no attention soft-cap.
	for _, sc := range []struct {
		name string
		raw  json.RawMessage
		dst  *float64
	}{{"attn_logit_softcapping", hc.AttnLogitSoftcapping, &c.AttnSoftCap}, {"final_logit_softcapping", hc.FinalLogitSoftcapping, &c.FinalSoftCap}} {
		v, set, err := optionalNumber(sc.raw)
		if err != nil {
			return errf("%s: %w", key(sc.name), err)
		}
		if !set {
			continue
		}
		if arch == "gemma3" && sc.dst == &c.AttnSoftCap {
			return errf("%s is %g, but transformers' Gemma 3 ignores it (and llama.cpp's converter refuses it); set it to null", key(sc.name), v)
		}
		if err := model.CheckOptionalPositive(v); err != nil || v == 0 {
			return errf("%s is %g; a soft-cap must be a finite number > 0, or null for none (Gemma 2: 50 for attention, 30 for the logits)", key(sc.name), v)
		}
		*sc.dst = v
	}

	sliding, err := gemmaPattern(hc, c.Layers, arch, key)
	if err != nil {
		return fail(fmt.Errorf("hf: %s: %w", path, err))
	}
	if slices.Contains(sliding, true) {
		w, set, err := optionalNumber(hc.SlidingWindow)
		switch {
		case err != nil:
			return errf("%s: %w", key("sliding_window"), err)
		case !set:
			return errf("%s is null, but layer_types has sliding layers; give their window", key("sliding_window"))
		case w != math.Trunc(w) || w < 0 || w > 1<<31:
			return errf("%s is %g; a window is a whole number of positions", key("sliding_window"), w)
		}
		if err := model.CheckSlidingWindow(uint64(w), c.Context); err != nil {
			return errf("%s %w", key("sliding_window"), err)
		}
		c.SlidingWindow, c.SlidingLayers = int(w), sliding
	}

	global, local, err := gemmaRopes(hc, arch, key)
	if err != nil {
		return fail(fmt.Errorf("hf: %s: %w", path, err))
	}
	c.RopeBase, c.RopeScaling = global.Base, global.Scaling
	if arch == "gemma3" && c.SlidingWindow > 0 {
		c.LocalRope = &local
	}
	if err := c.Validate(); err != nil {
		return fail(fmt.Errorf("%w (in %s)", err, path))
	}
	return c, hc, nil
}

// optionalNumber reads a key that is a number or null (or absent): its value and whether
// it is set.
func optionalNumber(raw json.RawMessage) (float64, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s is not a number or null", raw)
	}
	return v, true, nil
}

// gemmaPattern reads which layers slide: layer_types when given, else the period
// (sliding_window_pattern, or _sliding_window_pattern as transformers 4.53+ saves it;
// Gemma 2 alternates, starting with a sliding layer). Both given must agree.
func gemmaPattern(hc Config, layers int, arch string, key func(string) string) ([]bool, error) {
	period, periodKey := 6, ""
	if arch == "gemma2" {
		period = 2
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"sliding_window_pattern", hc.SlidingWindowPattern}, {"_sliding_window_pattern", hc.PrivSlidingWindowPattern}} {
		if p.v == nil {
			continue
		}
		if *p.v < 1 {
			return nil, fmt.Errorf("%s is %d; the pattern's period must be at least 1 (1: every layer global)", key(p.name), *p.v)
		}
		if periodKey != "" && *p.v != period {
			return nil, fmt.Errorf("%s is %d but %s is %d; give one period", key(p.name), *p.v, key(periodKey), period)
		}
		period, periodKey = *p.v, p.name
	}
	fromPeriod := model.GemmaPattern(layers, period)
	if hc.LayerTypes == nil {
		return fromPeriod, nil
	}
	if len(hc.LayerTypes) != layers {
		return nil, fmt.Errorf("%s has %d entries for %d layers (num_hidden_layers); it needs one per layer", key("layer_types"), len(hc.LayerTypes), layers)
	}
	sliding := make([]bool, layers)
	for l, t := range hc.LayerTypes {
		switch t {
		case slidingAttention:
			sliding[l] = true
		case fullAttention:
		default:
			return nil, fmt.Errorf("%s[%d] is %q; Gemma's layers are %q or %q", key("layer_types"), l, t, slidingAttention, fullAttention)
		}
		if periodKey != "" && sliding[l] != fromPeriod[l] {
			return nil, fmt.Errorf("%s[%d] is %q, but %s %d makes layer %d %s; transformers versions differ on which one wins, so kvref refuses the contradiction",
				key("layer_types"), l, t, key(periodKey), period, l, map[bool]string{true: slidingAttention, false: fullAttention}[fromPeriod[l]])
		}
	}
	return sliding, nil
}

// ropeParams is one entry of transformers 5's rope_parameters.
type ropeParams struct {
	RopeScaling
	RopeTheta *float64 `json:"rope_theta"`
}

// gemmaRopes reads the global and (Gemma 3) local rotary embeddings: rope_theta and
// rope_scaling for the global layers, rope_local_base_freq unscaled for the sliding ones,
// each overridden by rope_parameters (per layer type, or one entry for every layer).
func gemmaRopes(hc Config, arch string, key func(string) string) (global, local model.Rope, err error) {
	global.Base, local.Base = 10000, 10000
	if arch == "gemma3" {
		global.Base = 1e6
	}
	if hc.RopeTheta != nil {
		global.Base = *hc.RopeTheta
	}
	if hc.RopeLocalBaseFreq != nil {
		local.Base = *hc.RopeLocalBaseFreq
	}
	if hc.RopeScaling != nil {
		if global.Scaling, err = hc.RopeScaling.scaling("config.json", key("rope_scaling")); err != nil {
			return
		}
	}
	if len(hc.RopeParameters) > 0 && string(hc.RopeParameters) != "null" {
		var byType map[string]json.RawMessage
		if err = json.Unmarshal(hc.RopeParameters, &byType); err != nil {
			return global, local, fmt.Errorf("%s: %w", key("rope_parameters"), err)
		}
		entries := map[string]*model.Rope{fullAttention: &global, slidingAttention: &local}
		if _, perType := byType[fullAttention]; !perType {
			entries = map[string]*model.Rope{"": &global} // one entry: the global rope
		}
		for t, dst := range entries {
			raw := hc.RopeParameters
			name := key("rope_parameters")
			if t != "" {
				raw, name = byType[t], key("rope_parameters."+t)
			}
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			var p ropeParams
			if err = json.Unmarshal(raw, &p); err != nil {
				return global, local, fmt.Errorf("%s: %w", name, err)
			}
			if p.RopeTheta != nil {
				dst.Base = *p.RopeTheta
			}
			if p.RopeType != "" || p.Type != "" {
				if dst.Scaling, err = p.RopeScaling.scaling("config.json", name); err != nil {
					return
				}
			}
		}
	}
	for _, r := range []struct {
		name string
		rope model.Rope
	}{{key("rope_theta"), global}, {key("rope_local_base_freq"), local}} {
		if e := model.CheckRopeBase(r.rope.Base); e != nil {
			return global, local, fmt.Errorf("%s %w", r.name, e)
		}
	}
	if t := global.Scaling.Type; arch == "gemma3" && t != "" && t != "linear" {
		return global, local, fmt.Errorf("%s type %q: Gemma 3 scales its global layers' RoPE linearly; kvref computes linear here", key("rope_scaling"), t)
	}
	if local.Scaling.Type != "" {
		return global, local, fmt.Errorf("%s scales the sliding layers' RoPE (%q); Gemma 3 rotates them unscaled", key("rope_parameters.sliding_attention"), local.Scaling.Type)
	}
	return global, local, nil
}

// gemmaNames says where a Gemma directory keeps its text model's tensors: under "model."
// for the CausalLM classes; for Gemma3ForConditionalGeneration under
// "language_model.model." (the hub's checkpoints) or "model.language_model." (transformers
// 4.52 and later), with the classifier at "language_model.lm_head.weight" or
// "lm_head.weight".
func gemmaNames(set *safetensors.Set) tensorNames {
	for _, n := range []tensorNames{
		{prefix: "model.", lmHead: "lm_head.weight"},
		{prefix: "language_model.model.", lmHead: "language_model.lm_head.weight"},
		{prefix: "model.language_model.", lmHead: "lm_head.weight"},
	} {
		if _, _, ok := set.Tensor(n.prefix + "embed_tokens.weight"); ok {
			n.gemma = true
			return n
		}
	}
	return tensorNames{prefix: "model.", lmHead: "lm_head.weight", gemma: true}
}

// isGemma reports whether c is a Gemma configuration.
func isGemma(c model.Config) bool { return c.Arch == "gemma2" || c.Arch == "gemma3" }

// writeGemmaConfig sets the Gemma keys of hc from c, the way transformers saves a Gemma
// configuration (layer_types spelled out, soft-caps null when absent).
func writeGemmaConfig(hc *Config, c model.Config, class string) {
	hc.ModelType = modelTypes[class]
	hc.HiddenAct = ""
	if c.Arch == "gemma2" {
		hc.HiddenAct = "gelu_pytorch_tanh" // Gemma 2's configs carry both spellings
	}
	hc.HiddenActivation = "gelu_pytorch_tanh"
	hc.QueryPreAttnScalar = c.QueryScalar
	if hc.QueryPreAttnScalar == 0 {
		hc.QueryPreAttnScalar = float64(c.HeadDim)
	}
	capOf := func(v float64) json.RawMessage {
		if v == 0 {
			return json.RawMessage("null")
		}
		return json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64))
	}
	hc.AttnLogitSoftcapping, hc.FinalLogitSoftcapping = capOf(c.AttnSoftCap), capOf(c.FinalSoftCap)
	hc.LayerTypes = make([]string, c.Layers)
	for l := range hc.LayerTypes {
		hc.LayerTypes[l] = fullAttention
		if c.Window(l) > 0 {
			hc.LayerTypes[l] = slidingAttention
		}
	}
	window := c.SlidingWindow
	if window == 0 {
		window = c.Context // no layer slides; transformers still wants a number
	}
	hc.SlidingWindow = json.RawMessage(strconv.Itoa(window))
	if c.LocalRope != nil {
		base := c.LocalRope.Base
		hc.RopeLocalBaseFreq = &base
	}
}

// endOfGeneration lists the ids that end generation in tok, EOS first.
func endOfGeneration(tok interface {
	VocabSize() int
	EOS() int
	IsEOG(int) bool
}) []int {
	var ids []int
	if tok.EOS() >= 0 {
		ids = append(ids, tok.EOS())
	}
	for id := range tok.VocabSize() {
		if id != tok.EOS() && tok.IsEOG(id) {
			ids = append(ids, id)
		}
	}
	return ids
}
