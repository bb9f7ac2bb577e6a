package browsertest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"go.uber.org/goleak"
)

// chromium is the browser the tests drive.
var chromium = "/usr/bin/chromium"

func TestMain(m *testing.M) {
	if c := os.Getenv("LEASE_CHROMIUM"); c != "" {
		chromium = c
	}
	if err := ensureChromium(); err != nil {
		fmt.Fprintln(os.Stderr, "browsertest: no Chromium, and it could not be installed:", err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// ensureChromium installs Debian's chromium package when the browser is
// missing, as root or through sudo, the way scripts/with-postgres installs
// PostgreSQL.
func ensureChromium() error {
	if _, err := os.Stat(chromium); err == nil {
		return nil
	}
	sudo := []string{}
	if os.Geteuid() != 0 {
		sudo = []string{"sudo"}
	}
	for _, args := range [][]string{{"apt-get", "update"}, {"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "chromium"}} {
		cmd := exec.Command(append(sudo, args...)[0], append(sudo, args...)[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	_, err := os.Stat(chromium)
	return err
}
