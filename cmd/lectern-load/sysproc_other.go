//go:build !linux

package main

import "syscall"

// sysProcAttr: the load test needs Linux's /proc; elsewhere the server is
// started with default attributes, and the run fails at its first /proc
// reading.
func sysProcAttr() *syscall.SysProcAttr { return nil }
