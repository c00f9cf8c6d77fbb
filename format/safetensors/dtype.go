package safetensors

import "strings"

// DType is a safetensors element type, as written in the header ("F32", "BF16", ...).
type DType string

// The element types of the safetensors format.
const (
	BOOL   DType = "BOOL"
	U8     DType = "U8"
	I8     DType = "I8"
	F8E5M2 DType = "F8_E5M2"
	F8E4M3 DType = "F8_E4M3"
	F8E8M0 DType = "F8_E8M0"
	I16    DType = "I16"
	U16    DType = "U16"
	F16    DType = "F16"
	BF16   DType = "BF16"
	I32    DType = "I32"
	U32    DType = "U32"
	F32    DType = "F32"
	F64    DType = "F64"
	C64    DType = "C64"
	I64    DType = "I64"
	U64    DType = "U64"
)

// dtypes lists the known types in the reference implementation's order, which
// is by increasing alignment: Write puts tensors of later types first.
var dtypes = []struct {
	t    DType
	size int
}{
	{BOOL, 1}, {U8, 1}, {I8, 1}, {F8E5M2, 1}, {F8E4M3, 1}, {F8E8M0, 1},
	{I16, 2}, {U16, 2}, {F16, 2}, {BF16, 2},
	{I32, 4}, {U32, 4}, {F32, 4},
	{F64, 8}, {C64, 8}, {I64, 8}, {U64, 8},
}

// Size is the number of bytes of one element, or 0 for an unknown type.
func (d DType) Size() int {
	for _, t := range dtypes {
		if t.t == d {
			return t.size
		}
	}
	return 0
}

// rank is d's position in dtypes, or -1 for an unknown type.
func (d DType) rank() int {
	for i, t := range dtypes {
		if t.t == d {
			return i
		}
	}
	return -1
}

// knownDTypes lists the known type names for error messages.
func knownDTypes() string {
	names := make([]string, len(dtypes))
	for i, t := range dtypes {
		names[i] = string(t.t)
	}
	return strings.Join(names, ", ")
}
