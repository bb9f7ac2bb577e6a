//go:build linux

package sqlite

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// watchWrites reports writes to the file at path by other processes,
// calling foreign from a goroutine counted in wg, until the returned stop
// is called: on Linux, through inotify, so that a commit of another
// process is seen as it writes rather than at the next poll. own says
// whether this process is writing the file: a write seen then is taken
// for its own, and once it has finished, the writes it made meanwhile are
// dropped unseen. Writes that come before the goroutine reads them are
// reported once.
func watchWrites(path string, wg *sync.WaitGroup, own func() bool, foreign func()) (stop func(), err error) {
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
	wg.Go(func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			if !own() {
				foreign()
				continue
			}
			for own() {
				time.Sleep(ownWritePause)
			}
			// Drop the events of the writes made meanwhile, without
			// waiting for more.
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
	return func() { _ = f.Close() }, nil
}

// ownWritePause is how often the watch of the file looks whether this
// process has finished writing.
const ownWritePause = time.Millisecond
