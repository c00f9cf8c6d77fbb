package stepper

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseAttention reads an attention choice as a person types it: "" or "off" (none),
// "LAYER" (the mean over the layer's heads) or "LAYER:HEAD", for a model of layers layers
// and heads query heads. The error says what the valid range is.
func ParseAttention(arg string, layers, heads int) (AttentionChoice, error) {
	if arg == "" || arg == "off" {
		return AttentionChoice{Layer: -1, Head: -1}, nil
	}
	layerText, headText, hasHead := strings.Cut(arg, ":")
	layer, err := strconv.Atoi(layerText)
	if err != nil || layer < 0 || layer >= layers {
		return AttentionChoice{}, fmt.Errorf("want LAYER or LAYER:HEAD with a layer from 0 to %d, got %q", layers-1, arg)
	}
	head := -1
	if hasHead {
		head, err = strconv.Atoi(headText)
		if err != nil || head < 0 || head >= heads {
			return AttentionChoice{}, fmt.Errorf("want a head from 0 to %d after the colon, got %q", heads-1, arg)
		}
	}
	return AttentionChoice{Layer: layer, Head: head}, nil
}
