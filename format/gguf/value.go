package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ValueType is the type id of a GGUF metadata value.
type ValueType uint32

// The GGUF metadata value types.
const (
	Uint8   ValueType = 0
	Int8    ValueType = 1
	Uint16  ValueType = 2
	Int16   ValueType = 3
	Uint32  ValueType = 4
	Int32   ValueType = 5
	Float32 ValueType = 6
	Bool    ValueType = 7 // one byte, 0 or 1
	String  ValueType = 8 // u64 byte length, then UTF-8 bytes
	Array   ValueType = 9 // u32 element type, u64 count, then the elements
	Uint64  ValueType = 10
	Int64   ValueType = 11
	Float64 ValueType = 12
)

var valueTypeNames = [...]string{
	Uint8: "uint8", Int8: "int8", Uint16: "uint16", Int16: "int16",
	Uint32: "uint32", Int32: "int32", Float32: "float32", Bool: "bool",
	String: "string", Array: "array", Uint64: "uint64", Int64: "int64",
	Float64: "float64",
}

// String returns the type's name ("uint32", "string", ...), or "type(N)"
// for an id GGUF does not define.
func (t ValueType) String() string {
	if t.valid() {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

func (t ValueType) valid() bool { return t <= Float64 }

// fixedSize returns the encoded size of a fixed-size type, or 0 for String,
// Array and invalid ids.
func (t ValueType) fixedSize() int {
	switch t {
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16:
		return 2
	case Uint32, Int32, Float32:
		return 4
	case Uint64, Int64, Float64:
		return 8
	}
	return 0
}

// minSize returns the fewest bytes one encoded value of type t can take.
func (t ValueType) minSize() uint64 {
	switch t {
	case String:
		return 8 // length
	case Array:
		return 4 + 8 // element type and count
	}
	return uint64(t.fixedSize())
}

func (t ValueType) isInteger() bool {
	switch t {
	case Uint8, Int8, Uint16, Int16, Uint32, Int32, Uint64, Int64:
		return true
	}
	return false
}

func (t ValueType) isSigned() bool {
	return t == Int8 || t == Int16 || t == Int32 || t == Int64
}

// Value is one metadata value. Type says which accessor applies; for arrays
// ElemType is the type of every element (arrays may nest). The zero Value is
// a uint8 0. Values are immutable and safe to copy.
type Value struct {
	Type     ValueType
	ElemType ValueType // element type, meaningful only when Type is Array

	bits uint64     // integers (signed ones sign-extended), bools, float bits
	str  string     // a String; or an array of fixed-size elements, little-endian
	arr  *arrayData // an array of strings or of arrays
}

// arrayData holds the elements of an array of strings or of arrays. Arrays
// of fixed-size elements keep their encoded bytes in Value.str instead, so a
// hostile file cannot make the reader allocate much more than its own size.
type arrayData struct {
	strs []string // ElemType == String
	vals []Value  // ElemType == Array
}

// Int returns the value of any integer type as an int64. It reports false
// for non-integers and for a Uint64 above math.MaxInt64.
func (v Value) Int() (int64, bool) {
	if !v.Type.isInteger() {
		return 0, false
	}
	if !v.Type.isSigned() && v.bits > math.MaxInt64 {
		return 0, false
	}
	return int64(v.bits), true
}

// Uint returns the value of any integer type as a uint64. It reports false
// for non-integers and negative values.
func (v Value) Uint() (uint64, bool) {
	if !v.Type.isInteger() {
		return 0, false
	}
	if v.Type.isSigned() && int64(v.bits) < 0 {
		return 0, false
	}
	return v.bits, true
}

// Float returns a Float32 or Float64 value as a float64.
func (v Value) Float() (float64, bool) {
	switch v.Type {
	case Float32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case Float64:
		return math.Float64frombits(v.bits), true
	}
	return 0, false
}

// Str returns a String value.
func (v Value) Str() (string, bool) {
	if v.Type != String {
		return "", false
	}
	return v.str, true
}

// Bool returns a Bool value.
func (v Value) Bool() (bool, bool) {
	if v.Type != Bool {
		return false, false
	}
	return v.bits != 0, true
}

// Len returns the number of elements of an array, and 0 for other values.
func (v Value) Len() int {
	switch {
	case v.Type != Array:
		return 0
	case v.ElemType == String && v.arr != nil:
		return len(v.arr.strs)
	case v.ElemType == Array && v.arr != nil:
		return len(v.arr.vals)
	case v.ElemType.fixedSize() > 0:
		return len(v.str) / v.ElemType.fixedSize()
	}
	return 0
}

// Index returns element i of an array. It panics if v is not an array or i
// is out of range, like a slice index.
func (v Value) Index(i int) Value {
	if i < 0 || i >= v.Len() {
		panic(fmt.Sprintf("gguf: Value.Index(%d) on %s of length %d", i, v.typeName(), v.Len()))
	}
	switch {
	case v.ElemType == String:
		return StringValue(v.arr.strs[i])
	case v.ElemType == Array:
		return v.arr.vals[i]
	default:
		size := v.ElemType.fixedSize()
		return decodeScalar(v.ElemType, v.str[i*size:(i+1)*size])
	}
}

// Array returns the elements of an array as Values. The typed accessors
// (Strings, Float32s, Int32s) are cheaper for large arrays.
func (v Value) Array() ([]Value, bool) {
	if v.Type != Array {
		return nil, false
	}
	out := make([]Value, v.Len())
	for i := range out {
		out[i] = v.Index(i)
	}
	return out, true
}

// Strings returns a copy of an array of strings.
func (v Value) Strings() ([]string, bool) {
	if v.Type != Array || v.ElemType != String {
		return nil, false
	}
	out := make([]string, v.Len())
	if v.arr != nil {
		copy(out, v.arr.strs)
	}
	return out, true
}

// Float32s returns a copy of an array of float32.
func (v Value) Float32s() ([]float32, bool) {
	if v.Type != Array || v.ElemType != Float32 {
		return nil, false
	}
	out := make([]float32, v.Len())
	for i := range out {
		out[i] = math.Float32frombits(uint32(leUint(v.str[4*i:], 4)))
	}
	return out, true
}

// Int32s returns an array of any integer type converted to int32. It reports
// false if v is not an integer array or an element does not fit in int32.
func (v Value) Int32s() ([]int32, bool) {
	out, _, ok := v.int32s()
	return out, ok
}

// int32s is Int32s that also returns the index of the first element out of
// range (or -1), for error messages.
func (v Value) int32s() ([]int32, int, bool) {
	if v.Type != Array || !v.ElemType.isInteger() {
		return nil, -1, false
	}
	out := make([]int32, v.Len())
	for i := range out {
		x, ok := v.Index(i).Int()
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return nil, i, false
		}
		out[i] = int32(x)
	}
	return out, -1, true
}

// Equal reports whether v and o have the same type and contents. Floats are
// compared bit for bit, so a NaN equals itself.
func (v Value) Equal(o Value) bool {
	if v.Type != o.Type {
		return false
	}
	if v.Type != Array {
		return v.bits == o.bits && v.str == o.str
	}
	if v.ElemType != o.ElemType || v.Len() != o.Len() {
		return false
	}
	switch {
	case v.Len() == 0:
		return true
	case v.ElemType == String:
		return slices.Equal(v.arr.strs, o.arr.strs)
	case v.ElemType == Array:
		return slices.EqualFunc(v.arr.vals, o.arr.vals, Value.Equal)
	}
	return v.str == o.str
}

// String formats the value for people: numbers in decimal, strings quoted,
// and arrays as their type and length with the first few elements.
func (v Value) String() string {
	switch {
	case v.Type == String:
		return fmt.Sprintf("%q", v.str)
	case v.Type == Bool:
		return fmt.Sprint(v.bits != 0)
	case v.Type == Float32 || v.Type == Float64:
		f, _ := v.Float()
		return fmt.Sprint(f)
	case v.Type.isSigned():
		return fmt.Sprint(int64(v.bits))
	case v.Type.isInteger():
		return fmt.Sprint(v.bits)
	case v.Type == Array:
		const show = 8
		var b strings.Builder
		fmt.Fprintf(&b, "[%d]%s{", v.Len(), v.ElemType)
		for i := 0; i < v.Len() && i < show; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.Index(i).String())
		}
		if v.Len() > show {
			b.WriteString(", ...")
		}
		b.WriteString("}")
		return b.String()
	}
	return v.Type.String()
}

// typeName describes v's type for error messages: "uint32", "array of string".
func (v Value) typeName() string {
	if v.Type == Array {
		return "array of " + v.ElemType.String()
	}
	return v.Type.String()
}

// decodeScalar decodes a fixed-size value of type t from the start of b,
// which holds at least t.fixedSize() little-endian bytes.
func decodeScalar[B ~string | ~[]byte](t ValueType, b B) Value {
	v := Value{Type: t}
	switch t {
	case Uint8, Bool:
		v.bits = uint64(b[0])
	case Int8:
		v.bits = uint64(int64(int8(b[0])))
	case Uint16:
		v.bits = uint64(leUint(b, 2))
	case Int16:
		v.bits = uint64(int64(int16(leUint(b, 2))))
	case Uint32, Float32:
		v.bits = uint64(leUint(b, 4))
	case Int32:
		v.bits = uint64(int64(int32(leUint(b, 4))))
	case Uint64, Int64, Float64:
		v.bits = leUint(b, 8)
	}
	return v
}

// leUint decodes an n-byte little-endian unsigned integer from the start of b.
func leUint[B ~string | ~[]byte](b B, n int) uint64 {
	var x uint64
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// encodeScalar appends the little-endian encoding of a fixed-size value.
func encodeScalar(dst []byte, v Value) []byte {
	switch v.Type.fixedSize() {
	case 1:
		return append(dst, byte(v.bits))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v.bits))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v.bits))
	case 8:
		return binary.LittleEndian.AppendUint64(dst, v.bits)
	}
	return dst
}

// Uint8Value returns a Uint8 Value.
func Uint8Value(x uint8) Value { return Value{Type: Uint8, bits: uint64(x)} }

// Int8Value returns an Int8 Value.
func Int8Value(x int8) Value { return Value{Type: Int8, bits: uint64(int64(x))} }

// Uint16Value returns a Uint16 Value.
func Uint16Value(x uint16) Value { return Value{Type: Uint16, bits: uint64(x)} }

// Int16Value returns an Int16 Value.
func Int16Value(x int16) Value { return Value{Type: Int16, bits: uint64(int64(x))} }

// Uint32Value returns a Uint32 Value.
func Uint32Value(x uint32) Value { return Value{Type: Uint32, bits: uint64(x)} }

// Int32Value returns an Int32 Value.
func Int32Value(x int32) Value { return Value{Type: Int32, bits: uint64(int64(x))} }

// Uint64Value returns a Uint64 Value.
func Uint64Value(x uint64) Value { return Value{Type: Uint64, bits: x} }

// Int64Value returns an Int64 Value.
func Int64Value(x int64) Value { return Value{Type: Int64, bits: uint64(x)} }

// Float32Value returns a Float32 Value.
func Float32Value(x float32) Value { return Value{Type: Float32, bits: uint64(math.Float32bits(x))} }

// Float64Value returns a Float64 Value.
func Float64Value(x float64) Value { return Value{Type: Float64, bits: math.Float64bits(x)} }

// BoolValue returns a Bool Value.
func BoolValue(x bool) Value {
	v := Value{Type: Bool}
	if x {
		v.bits = 1
	}
	return v
}

// StringValue returns a String Value.
func StringValue(s string) Value { return Value{Type: String, str: s} }

// ArrayValue returns an array of elemType holding elems. Every element must
// have type elemType; a mismatch is a programming error and panics. Nested
// arrays may have different element types from each other.
func ArrayValue(elemType ValueType, elems []Value) Value {
	if !elemType.valid() {
		panic(fmt.Sprintf("gguf: ArrayValue: invalid element type %s", elemType))
	}
	v := Value{Type: Array, ElemType: elemType}
	for i, e := range elems {
		if e.Type != elemType {
			panic(fmt.Sprintf("gguf: ArrayValue: element %d is %s, want %s", i, e.Type, elemType))
		}
	}
	switch elemType {
	case String:
		strs := make([]string, len(elems))
		for i, e := range elems {
			strs[i] = e.str
		}
		v.arr = &arrayData{strs: strs}
	case Array:
		v.arr = &arrayData{vals: append([]Value(nil), elems...)}
	default:
		raw := make([]byte, 0, len(elems)*elemType.fixedSize())
		for _, e := range elems {
			raw = encodeScalar(raw, e)
		}
		v.str = string(raw)
	}
	return v
}

// StringsValue returns an array of strings.
func StringsValue(s []string) Value {
	return Value{Type: Array, ElemType: String, arr: &arrayData{strs: append([]string(nil), s...)}}
}

// Float32sValue returns an array of float32.
func Float32sValue(x []float32) Value {
	raw := make([]byte, 0, 4*len(x))
	for _, f := range x {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
	}
	return Value{Type: Array, ElemType: Float32, str: string(raw)}
}

// Int32sValue returns an array of int32.
func Int32sValue(x []int32) Value {
	raw := make([]byte, 0, 4*len(x))
	for _, i := range x {
		raw = binary.LittleEndian.AppendUint32(raw, uint32(i))
	}
	return Value{Type: Array, ElemType: Int32, str: string(raw)}
}
