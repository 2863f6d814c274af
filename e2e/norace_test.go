//go:build !race

package e2e

// raceBuild: without -race the binary is built without it.
const raceBuild = false
