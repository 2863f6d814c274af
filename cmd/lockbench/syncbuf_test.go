package main

import "github.com/lockbench/lockbench/internal/clitest"

// syncBuffer is a bytes.Buffer a subprocess writes to while the test reads it.
type syncBuffer = clitest.SyncBuffer
