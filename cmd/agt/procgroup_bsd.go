//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "syscall"

// waitExited waits until the child pid has exited, without reaping it: a
// kqueue's EVFILT_PROC NOTE_EXIT. A child that has exited already is
// refused with ESRCH: it is a zombie of ours, so it has exited.
func waitExited(pid int) error {
	kq, err := syscall.Kqueue()
	if err != nil {
		return err
	}
	defer syscall.Close(kq)
	var change syscall.Kevent_t
	syscall.SetKevent(&change, pid, syscall.EVFILT_PROC, syscall.EV_ADD|syscall.EV_ONESHOT)
	change.Fflags = syscall.NOTE_EXIT
	events := make([]syscall.Kevent_t, 1)
	for {
		n, err := syscall.Kevent(kq, []syscall.Kevent_t{change}, events, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.ESRCH:
			return nil
		case err != nil:
			return err
		case n == 1 && events[0].Flags&syscall.EV_ERROR != 0:
			if errno := syscall.Errno(events[0].Data); errno != syscall.ESRCH {
				return errno
			}
			return nil
		case n == 1:
			return nil
		}
	}
}
