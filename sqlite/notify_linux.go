//go:build linux

package sqlite

import (
	"os"
	"sync"
	"syscall"
)

// watchWrites reports writes to the file at path, on Linux through
// inotify, so that a commit of another process is seen as it writes rather
// than at the next poll. A goroutine counted in wg calls w.wrote after
// each read of the writes (all those made since the last read, which the
// kernel may have kept as one) while anyone waits. Once it read while no
// one waits, it reads no more until someone does: the writes meanwhile
// are read together then, none dropped. The returned stop ends it.
func watchWrites(path string, wg *sync.WaitGroup, w writeWatch) (stop func(), err error) {
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
	done := make(chan struct{})
	wg.Go(func() {
		buf := make([]byte, 4096)
		for {
			w.reading()
			if _, err := f.Read(buf); err != nil {
				return
			}
			w.wrote()
			w.read()
			for !w.waiting() {
				select {
				case <-w.arrived:
				case <-done:
					return
				}
			}
		}
	})
	return func() {
		close(done)
		_ = f.Close()
	}, nil
}
