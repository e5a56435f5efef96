//go:build unix

package mcptest

import "syscall"

func processGroup() int { return syscall.Getpgrp() }
