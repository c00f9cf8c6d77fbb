package gguf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValueAccessors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		v       Value
		intV    any // int64 or nil when Int must fail
		uintV   any // uint64 or nil
		floatV  any // float64 or nil
		str     string
		display string
	}{
		{"uint8", Uint8Value(200), int64(200), uint64(200), nil, "", "200"},
		{"int8 negative", Int8Value(-5), int64(-5), nil, nil, "", "-5"},
		{"uint16", Uint16Value(65535), int64(65535), uint64(65535), nil, "", "65535"},
		{"int16 negative", Int16Value(-300), int64(-300), nil, nil, "", "-300"},
		{"uint32", Uint32Value(math.MaxUint32), int64(math.MaxUint32), uint64(math.MaxUint32), nil, "", "4294967295"},
		{"int32 positive", Int32Value(7), int64(7), uint64(7), nil, "", "7"},
		{"uint64 max", Uint64Value(math.MaxUint64), nil, uint64(math.MaxUint64), nil, "", "18446744073709551615"},
		{"int64 min", Int64Value(math.MinInt64), int64(math.MinInt64), nil, nil, "", "-9223372036854775808"},
		{"float32", Float32Value(1.5), nil, nil, 1.5, "", "1.5"},
		{"float64", Float64Value(math.Pi), nil, nil, math.Pi, "", "3.141592653589793"},
		{"string", StringValue("héllo"), nil, nil, nil, "héllo", `"héllo"`},
		{"bool", BoolValue(true), nil, nil, nil, "", "true"},
		{"array", Int32sValue([]int32{1, -2}), nil, nil, nil, "", "[2]int32{1, -2}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, ok := tt.v.Int()
			require.Equal(t, tt.intV != nil, ok, "Int ok")
			if ok {
				require.Equal(t, tt.intV, i)
			}
			u, ok := tt.v.Uint()
			require.Equal(t, tt.uintV != nil, ok, "Uint ok")
			if ok {
				require.Equal(t, tt.uintV, u)
			}
			f, ok := tt.v.Float()
			require.Equal(t, tt.floatV != nil, ok, "Float ok")
			if ok {
				require.Equal(t, tt.floatV, f)
			}
			s, ok := tt.v.Str()
			require.Equal(t, tt.v.Type == String, ok, "Str ok")
			require.Equal(t, tt.str, s)
			_, ok = tt.v.Bool()
			require.Equal(t, tt.v.Type == Bool, ok, "Bool ok")
			require.Equal(t, tt.display, tt.v.String())
			require.True(t, tt.v.Equal(tt.v))
		})
	}
}

func TestValueArrays(t *testing.T) {
	t.Parallel()

	strs := StringsValue([]string{"a", "b"})
	got, ok := strs.Strings()
	require.True(t, ok)
	require.Equal(t, []string{"a", "b"}, got)
	got[0] = "changed"
	again, _ := strs.Strings()
	require.Equal(t, "a", again[0], "Strings returns a copy")
	_, ok = strs.Float32s()
	require.False(t, ok)

	fl := Float32sValue([]float32{1, -2.5})
	f, ok := fl.Float32s()
	require.True(t, ok)
	require.Equal(t, []float32{1, -2.5}, f)

	// Int32s converts any integer element type and refuses out-of-range ones.
	u8 := ArrayValue(Uint8, []Value{Uint8Value(1), Uint8Value(255)})
	i32, ok := u8.Int32s()
	require.True(t, ok)
	require.Equal(t, []int32{1, 255}, i32)
	big := ArrayValue(Uint32, []Value{Uint32Value(1), Uint32Value(math.MaxUint32)})
	_, ok = big.Int32s()
	require.False(t, ok)
	_, ok = fl.Int32s()
	require.False(t, ok)

	elems, ok := u8.Array()
	require.True(t, ok)
	require.Len(t, elems, 2)
	require.True(t, elems[1].Equal(Uint8Value(255)))
	require.Equal(t, 2, u8.Len())
	require.Equal(t, 0, Uint8Value(1).Len())
	_, ok = Uint8Value(1).Array()
	require.False(t, ok)

	nested := ArrayValue(Array, []Value{strs, StringsValue(nil)})
	require.Equal(t, `[2]array{[2]string{"a", "b"}, [0]string{}}`, nested.String())
	require.True(t, nested.Index(0).Equal(strs))

	long := Int32sValue([]int32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	require.Equal(t, "[9]int32{1, 2, 3, 4, 5, 6, 7, 8, ...}", long.String())

	require.Panics(t, func() { u8.Index(2) })
	require.Panics(t, func() { ArrayValue(Uint8, []Value{Int8Value(1)}) }, "mismatched element type")
}

func TestValueEqual(t *testing.T) {
	t.Parallel()

	nan := Float32Value(float32(math.NaN()))
	tests := []struct {
		name string
		a, b Value
		want bool
	}{
		{"same int", Int32Value(3), Int32Value(3), true},
		{"different type same number", Int32Value(3), Uint32Value(3), false},
		{"nan equals itself", nan, nan, true},
		{"strings differ", StringValue("a"), StringValue("b"), false},
		{"empty arrays of same type", StringsValue(nil), ArrayValue(String, nil), true},
		{"empty arrays of different type", StringsValue(nil), Int32sValue(nil), false},
		{"arrays differ in element", Int32sValue([]int32{1, 2}), Int32sValue([]int32{1, 3}), false},
		{"arrays differ in length", Int32sValue([]int32{1}), Int32sValue([]int32{1, 1}), false},
		{"nested equal",
			ArrayValue(Array, []Value{StringsValue([]string{"x"})}),
			ArrayValue(Array, []Value{StringsValue([]string{"x"})}), true},
		{"nested differ",
			ArrayValue(Array, []Value{StringsValue([]string{"x"})}),
			ArrayValue(Array, []Value{StringsValue([]string{"y"})}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.a.Equal(tt.b))
			require.Equal(t, tt.want, tt.b.Equal(tt.a))
		})
	}
}
