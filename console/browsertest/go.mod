module github.com/leasehold/lease/console/browsertest

go 1.26.0

require github.com/chromedp/chromedp v0.23.0
