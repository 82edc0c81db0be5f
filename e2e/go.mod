// The browser test of the docs site, in a module of its own, so that
// chromedp is not a dependency of the kit that students download (as
// tools/ keeps gremlins apart). Run it with make e2e.
module github.com/fourth-outcome/labkit/e2e

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/fourth-outcome/labkit v0.0.0
)

require (
	github.com/bluekeyes/go-gitdiff v0.9.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/yuin/goldmark v1.8.7 // indirect
)

replace github.com/fourth-outcome/labkit => ../
