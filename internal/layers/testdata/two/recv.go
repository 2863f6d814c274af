package two

// walk is declared here on a type of kind.go: a use of kind.go.
func (k *kind) walk() int { return k.n }
