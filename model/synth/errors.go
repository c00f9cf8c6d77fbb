package synth

import "fmt"

// HeadDimError says that a shape without a HeadDim has a Dim that its Heads do not divide,
// so no head width follows from it: set HeadDim, or change Dim or Heads.
type HeadDimError struct{ Dim, Heads int }

// Error names both numbers.
func (e *HeadDimError) Error() string {
	return fmt.Sprintf("synth: dim %d must be a multiple of heads %d when the shape gives no head dim", e.Dim, e.Heads)
}
