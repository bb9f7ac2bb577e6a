//go:build linux

package sqlite

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// watchWrites reports writes to the file at path by other processes, on
// Linux through inotify, so that a commit of another process is seen as
// it writes rather than at the next poll. A goroutine counted in wg calls
// w.foreign for each write seen while w.waiting, when this store is not
// writing and has not written since the goroutine last looked. Once it saw
// a write at another moment, it reads no more until someone waits and
// this store has finished writing; the writes meanwhile, which the kernel
// keeps as one until then, are then dropped unseen. The returned stop ends
// it.
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
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	done := make(chan struct{})
	wg.Go(func() {
		buf := make([]byte, 4096)
		seen := w.written() // this store's commits that wrote, as last looked
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			w.read()
			if w.waiting() && !w.writing() && w.written() == seen {
				w.foreign()
				continue
			}
			for !w.waiting() || w.writing() {
				if !w.waiting() {
					select {
					case <-w.arrived:
					case <-done:
						return
					}
					continue
				}
				time.Sleep(ownWritePause)
			}
			// Drop the events of the writes made meanwhile, without
			// waiting for more.
			seen = w.written()
			if err := rc.Read(func(fd uintptr) bool {
				for {
					if _, err := syscall.Read(int(fd), buf); err != nil {
						return true
					}
				}
			}); err != nil {
				return
			}
		}
	})
	return func() {
		close(done)
		_ = f.Close()
	}, nil
}

// ownWritePause is how often the watch of the file looks whether this
// process has finished writing.
const ownWritePause = time.Millisecond
