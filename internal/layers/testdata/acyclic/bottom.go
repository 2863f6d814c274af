package acyclic

type bottom struct{ size int }

// Top is a local name: shadowing is not a use of top.go.
func shadow(Top int) int { return Top }
