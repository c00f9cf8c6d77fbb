package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/kvref/kvref/quant"
)

// cacheFlags are the cache storage flags of every command that builds a K/V cache:
// --cache-dtype T for keys and values, and llama.cpp's --cache-type-k/-ctk and
// --cache-type-v/-ctv, which override it for keys or values.
type cacheFlags struct{ both, k, v string }

// register adds the flags to fs, with def the default of --cache-dtype.
func (c *cacheFlags) register(fs *flag.FlagSet, def string) {
	fs.StringVar(&c.both, "cache-dtype", def, "KV cache storage for keys and values: "+typeNames())
	fs.StringVar(&c.k, "cache-type-k", "", "key storage (overrides --cache-dtype; llama.cpp's spelling)")
	fs.StringVar(&c.k, "ctk", "", "same as --cache-type-k")
	fs.StringVar(&c.v, "cache-type-v", "", "value storage (overrides --cache-dtype; llama.cpp's spelling)")
	fs.StringVar(&c.v, "ctv", "", "same as --cache-type-v")
}

// types resolves the flags to the key and value cache types.
func (c cacheFlags) types() (k, v quant.CacheType, err error) {
	return cacheTypes(c.both, c.k, c.v)
}

// cacheTypes resolves --cache-dtype, --cache-type-k and --cache-type-v: an empty key or
// value type takes the --cache-dtype one.
func cacheTypes(both, k, v string) (quant.CacheType, quant.CacheType, error) {
	kt, err := parseCacheFlag("--cache-dtype", both)
	if err != nil {
		return 0, 0, err
	}
	vt := kt
	if k != "" {
		if kt, err = parseCacheFlag("--cache-type-k/-ctk", k); err != nil {
			return 0, 0, err
		}
	}
	if v != "" {
		if vt, err = parseCacheFlag("--cache-type-v/-ctv", v); err != nil {
			return 0, 0, err
		}
	}
	return kt, vt, nil
}

// parseCacheFlag parses the value of a cache type flag, naming the flag in the error.
func parseCacheFlag(flag, value string) (quant.CacheType, error) {
	t, err := quant.ParseCacheType(value)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", flag, err)
	}
	return t, nil
}

// typeNames lists the cache types, from the registry.
func typeNames() string {
	var s []string
	for _, t := range quant.CacheTypes() {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}
