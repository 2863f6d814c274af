package three

const limit = 3

// A closes the cycle a.go -> b.go -> c.go -> a.go.
func A() int { return b() }
