package two

type kind struct{ n int }

// Use calls the method recv.go declares: a use of recv.go, and the cycle is closed.
func Use() int { return (&kind{}).walk() }
