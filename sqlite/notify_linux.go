//go:build linux

package sqlite

import (
	"os"
	"sync"
	"syscall"
)

// watchWrites calls wrote after writes to the file at path by any
// process, from a goroutine counted in wg, until the returned stop is
// called: on Linux, through inotify, so that a commit of another process
// is seen at once rather than at the next poll. Writes that come while
// wrote runs, or before the goroutine reads them, are reported once.
func watchWrites(path string, wg *sync.WaitGroup, wrote func()) (stop func(), err error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_MODIFY); err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	// A non-blocking descriptor is read through the runtime's poller, and
	// Close ends a Read under way.
	f := os.NewFile(uintptr(fd), "inotify:"+path)
	wg.Go(func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			wrote()
		}
	})
	return func() { _ = f.Close() }, nil
}
