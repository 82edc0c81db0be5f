// Package e2e holds the kit's browser test: it builds the docs site, serves
// it on a loopback port and drives headless Chromium through it with
// chromedp (make e2e), and checks every figure of the course at a phone's
// and a desktop's width. The test is behind the e2e build tag, so make test
// needs no browser.
package e2e
