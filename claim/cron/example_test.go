package cron_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/cron"
)

func ExampleParse() {
	s, _ := cron.Parse("30 2 * * 1-5")                // 02:30 UTC on weekdays
	t := time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC) // a Friday
	for range 2 {
		t = s.Next(t)
		fmt.Println(t.Format("Mon 15:04"))
	}
	_, err := cron.Parse("every tuesday")
	fmt.Println(errors.Is(err, lease.ErrInvalidArgument))
	// Output:
	// Mon 02:30
	// Tue 02:30
	// true
}
