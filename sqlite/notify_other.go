//go:build !linux

package sqlite

import (
	"errors"
	"sync"
)

// watchWrites reports that this system has no file notification the store
// uses: it polls (see WithPoll).
func watchWrites(path string, wg *sync.WaitGroup, w writeWatch) (stop func(), err error) {
	return nil, errors.New("no file notification on this system")
}
