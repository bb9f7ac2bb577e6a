package textcol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestText(t *testing.T) {
	assert.Empty(t, Text(""))
	assert.Empty(t, Text("é"))
	assert.Contains(t, Text("\xff"), "not valid UTF-8")
	assert.Contains(t, Text("a\x00b"), "NUL byte")
}

func TestName(t *testing.T) {
	assert.Empty(t, Name("abc", 3, true))
	assert.Equal(t, "must not be empty", Name("", 0, false))
	assert.Equal(t, "is 4 bytes, more than 3", Name("abcd", 3, true))
	assert.Empty(t, Name("\xff", 0, false), "any bytes when not text")
	assert.Contains(t, Name("\xff", 0, true), "UTF-8")
}
