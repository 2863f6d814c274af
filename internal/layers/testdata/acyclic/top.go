package acyclic

import (
	"slices"

	"github.com/example/notloaded"
)

// Top uses mid.go, and bottom.go's field size through a type only slices.Clone's result
// carries: both below it.
func Top() int { return mid(notloaded.Value) + slices.Clone(parts())[0].size }
