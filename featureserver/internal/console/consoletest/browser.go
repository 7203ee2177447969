package consoletest

import (
	"context"
	"errors"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// ErrNoChromium is returned by NewBrowser when no Chromium is installed.
var ErrNoChromium = errors.New("consoletest: no chromium on PATH (apt-get install -y chromium)")

// FindChromium returns the path of the Chromium to drive.
func FindChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// NewBrowser starts a headless Chromium with a window of width×height and returns
// a chromedp context for it and the function that stops it.
func NewBrowser(width, height int) (context.Context, context.CancelFunc, error) {
	path, err := FindChromium()
	if err != nil {
		return nil, nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(width, height),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // root cannot use the sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelCtx()
		cancelAlloc()
		return nil, nil, err
	}
	return ctx, func() { cancelCtx(); cancelAlloc() }, nil
}
