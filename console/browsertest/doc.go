// Package browsertest drives the operator console (package console) in
// headless Chromium. It has no API: its tests are its content.
package browsertest

import _ "github.com/chromedp/chromedp"
