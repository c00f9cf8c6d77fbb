package golden

import "github.com/kvref/kvref/quant"

// AtCacheTypes returns a copy of the library scenario sc (at any of its cache types) with
// keys stored as k and values as v on the reference side. It is named CLASS.K when k == v,
// as Suite names it, and CLASS.K+V otherwise — for a candidate whose cache keeps keys and
// values in different types, such as llama-server's -ctk q8_0 -ctv f16 — and its seed is
// derived from the new name, as Suite derives it, so that its prompts are its own.
func AtCacheTypes(sc *Scenario, k, v quant.CacheType) *Scenario {
	c := *sc
	c.Cache.TypeK, c.Cache.TypeV = k.String(), v.String()
	c.Name = c.Class + "." + k.String()
	if k != v {
		c.Name += "+" + v.String()
	}
	c.Seed = seedOf(c.Name)
	return &c
}
