package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/eval"
	"github.com/kvref/kvref/quant"
)

func TestCacheTypesPrecedence(t *testing.T) {
	for _, c := range []struct {
		both, k, v string
		wantK      quant.CacheType
		wantV      quant.CacheType
	}{
		{"f32", "", "", quant.F32, quant.F32},
		{"q4_0", "", "", quant.Q4_0, quant.Q4_0},
		{"f16", "q8_0", "", quant.Q8_0, quant.F16}, // llama-server -ctk q8_0 with its f16 default
		{"f32", "", "iq4_nl", quant.F32, quant.IQ4_NL},
		{"f32", "Q5_1", "q4_1", quant.Q5_1, quant.Q4_1},
	} {
		k, v, err := cacheTypes(c.both, c.k, c.v)
		require.NoError(t, err, "%+v", c)
		require.Equal(t, []quant.CacheType{c.wantK, c.wantV}, []quant.CacheType{k, v}, "%+v", c)
	}
	_, _, err := cacheTypes("f32", "q4", "")
	require.ErrorContains(t, err, "--cache-type-k/-ctk")
	require.ErrorContains(t, err, `unknown cache type "q4"`)
	_, _, err = cacheTypes("f32", "", "iq4_xs")
	require.ErrorContains(t, err, "--cache-type-v/-ctv")
	_, _, err = cacheTypes("int4", "", "")
	require.ErrorContains(t, err, "--cache-dtype")
}

// TestEveryCacheCommandTakesLlamaSpellings: each command that builds a cache accepts
// llama.cpp's -ctk and -ctv (and the long forms), and its help lists every cache type of
// the registry.
func TestEveryCacheCommandTakesLlamaSpellings(t *testing.T) {
	names := typeNames()
	for _, name := range []string{"q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"} {
		require.Contains(t, names, name)
	}
	for _, cmd := range []string{"run", "step", "serve", "chat", "bench", "plan", "eval", "golden", "verify"} {
		_, stderr, code := kvref(t, cmd, "-h")
		require.Equal(t, 0, code, cmd)
		for _, flag := range []string{"--cache-type-k, -ctk TYPE", "--cache-type-v, -ctv TYPE"} {
			require.Contains(t, stderr, "\n  "+flag+"\n", "%s -h lists each cache type flag once, with its llama.cpp alias", cmd)
		}
		require.Contains(t, stderr, names, "%s -h lists the cache types", cmd)
	}

	out, stderr, code := kvref(t, "run", "-p", "Once", "-n", "4", "--temp", "0", "--check", "--json", "-ctk", "q4_1", "-ctv", "q5_0")
	require.Equal(t, 0, code, stderr)
	sum := parseJSONRun(t, out).Summary
	require.Equal(t, "q4_1", sum["cache_type_k"])
	require.Equal(t, "q5_0", sum["cache_type_v"])
	// stories260K: 5 layers × (one 20-byte q4_1 block + one 22-byte q5_0 block) per token.
	require.EqualValues(t, 5*(20+22), sum["bytes_per_token"])

	out, stderr, code = kvref(t, "plan", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--mem", "80GB", "--weights", "14GB",
		"--cache-type-k", "q4_0", "-ctv", "iq4_nl", "--json")
	require.Equal(t, 0, code, stderr)
	var p struct {
		BytesPerToken int64  `json:"bytes_per_token"`
		CacheTypeK    string `json:"cache_type_k"`
		CacheTypeV    string `json:"cache_type_v"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, "q4_0", p.CacheTypeK)
	require.Equal(t, "iq4_nl", p.CacheTypeV)
	require.EqualValues(t, 32*(32*18+32*18), p.BytesPerToken, "32 layers × (32 blocks of 18 B for K and for V)")

	out, stderr, code = kvref(t, "eval", "-c", "64", "--cache-dtype", "q5_0", "-ctk", "q8_0", "-ctv", "q4_0", "--json")
	require.Equal(t, 0, code, stderr)
	var rep eval.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	var rows []string
	for _, r := range rep.Results {
		rows = append(rows, r.CacheType+"="+r.CacheTypeK+","+r.CacheTypeV)
	}
	require.Equal(t, []string{"f32=f32,f32", "q5_0=q5_0,q5_0", "q8_0/q4_0=q8_0,q4_0"}, rows)
	require.EqualValues(t, 5*(34+18), rep.Results[2].BytesPerToken)

	_, stderr, code = kvref(t, "step", "-p", "Once", "-ctk", "q4")
	require.Equal(t, 1, code)
	require.True(t, strings.Contains(stderr, "--cache-type-k/-ctk") && strings.Contains(stderr, `unknown cache type "q4"`), stderr)
}
