package callback

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCallRecoversAndReports(t *testing.T) {
	var name string
	var value any
	var stack []byte
	report := func(n string, v any, s []byte) { name, value, stack = n, v, s }
	assert.True(t, Call("hook", report, func() { panic("boom") }))
	assert.Equal(t, "hook", name)
	assert.Equal(t, "boom", value)
	assert.Contains(t, string(stack), "callback_test.go")

	ran := false
	assert.False(t, Call("hook", func(string, any, []byte) { t.Error("reported without a panic") }, func() { ran = true }))
	assert.True(t, ran)
}
