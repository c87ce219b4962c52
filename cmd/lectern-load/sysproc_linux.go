package main

import "syscall"

// sysProcAttr puts the server in its own process group, so that a Ctrl-C
// at the terminal reaches only lectern-load, which then stops the server
// itself; and has the kernel send the server SIGTERM should lectern-load
// die without doing so.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
