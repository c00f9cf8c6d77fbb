package golden

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/internal/writefile"
)

// writeLogits writes a golden's full logits as safetensors: one F32 tensor of shape
// [steps, vocab] per request continuation, named "REQUEST/CHOICE" (continuations without
// steps are left out), with the scenario, model and kvref version as metadata. numpy,
// torch and safetensors' own loaders read it directly.
func writeLogits(path string, g *Golden) error {
	var tensors []safetensors.Tensor
	for _, id := range sortedKeys(g.logits) {
		for c, steps := range g.logits[id] {
			if len(steps) == 0 {
				continue
			}
			vocab := len(steps[0])
			data := make([]byte, 0, 4*vocab*len(steps))
			for _, row := range steps {
				for _, v := range row {
					data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
				}
			}
			tensors = append(tensors, safetensors.Tensor{
				Name: fmt.Sprintf("%s/%d", id, c), DType: safetensors.F32, Shape: []int{len(steps), vocab}, Data: data,
			})
		}
	}
	meta := map[string]string{
		"format":        GoldenFormat + " full logits",
		"scenario":      g.Scenario.Name,
		"kvref_version": g.KvrefVersion,
		"model_sha256":  g.Model.SHA256,
		"cache_type_k":  g.Scenario.Cache.TypeK,
		"cache_type_v":  g.Scenario.Cache.TypeV,
		"layout":        "tensor REQUEST/CHOICE has one row of raw logits (before log-softmax) per generated step, in step order",
	}
	return writefile.Write(path, func(w io.Writer) error { return safetensors.Write(w, tensors, meta) })
}
