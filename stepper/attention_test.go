package stepper

import "testing"

// TestParseAttention: off, a layer's mean and one head parse; a layer or head out of the
// model's range is refused with the range.
func TestParseAttention(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want AttentionChoice
	}{{"", AttentionChoice{-1, -1}}, {"off", AttentionChoice{-1, -1}}, {"2", AttentionChoice{2, -1}}, {"3:7", AttentionChoice{3, 7}}} {
		got, err := ParseAttention(c.arg, 4, 8)
		if err != nil || got != c.want {
			t.Errorf("ParseAttention(%q) = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
	for _, c := range []struct{ arg, msg string }{
		{"4", `want LAYER or LAYER:HEAD with a layer from 0 to 3, got "4"`},
		{"x", `want LAYER or LAYER:HEAD with a layer from 0 to 3, got "x"`},
		{"1:8", `want a head from 0 to 7 after the colon, got "1:8"`},
	} {
		if _, err := ParseAttention(c.arg, 4, 8); err == nil || err.Error() != c.msg {
			t.Errorf("ParseAttention(%q): error %v, want %q", c.arg, err, c.msg)
		}
	}
}
