package main

import "github.com/lockbench/lockbench/compose/docker"

// checkImageRef is docker.CheckImageRef, for run.go and run_generators.go, which call it by
// this name; up and image call the library. Apart from image.go so that run uses no file of
// another command's.
func checkImageRef(ref string) error { return docker.CheckImageRef(ref) }
