// Command crashpublisher is the process the outbox crash test kills: it opens the
// outbox on a SQLite file, makes sure one endpoint points at the test's receiver,
// publishes events evt-0 … evt-(n-1) (idempotently, so a restart publishes what the
// kill interrupted and nothing twice), and exits 0 once every delivery has SUCCEEDED,
// printing "done" (it counts them again after each attempt is recorded). It prints "published" when every event is stored.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

func main() {
	db := flag.String("db", "", "SQLite database file")
	url := flag.String("url", "", "receiver URL")
	n := flag.Int("n", 10000, "events to publish")
	publishers := flag.Int("publishers", 4, "concurrent publishers")
	flag.Parse()
	if err := run(*db, *url, *n, *publishers); err != nil {
		fmt.Fprintln(os.Stderr, "crashpublisher:", err)
		os.Exit(1)
	}
}

func run(path, url string, n, publishers int) error {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	rules := transport.PublicOnly()
	rules.AllowLoopback = true // the receiver is on 127.0.0.1
	// recorded is notified (without blocking) after each attempt is stored: the
	// moment to count the deliveries that succeeded again.
	recorded := make(chan struct{}, 1)
	ob, err := outbox.Open(ctx, outbox.Config{
		Store: st, Egress: &rules, // A lease far above the 1 s attempt timeout: under heavy CPU starvation a
		// completion can take seconds to commit, and an expired lease would re-send.
		Workers: 32, LeaseDuration: 10 * time.Second,
		ReapInterval: 500 * time.Millisecond, PollInterval: 100 * time.Millisecond,
		Observe: func(outbox.Delivery, outbox.Attempt) {
			select {
			case recorded <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		return err
	}
	eps, err := ob.ListEndpoints(ctx, "crash")
	if err != nil {
		return err
	}
	if len(eps) == 0 {
		_, err = ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "crash", URL: url, Overrides: outbox.Overrides{
			AllowHTTP: ptr(true), TimeoutSeconds: ptr(1.0), ScheduleSeconds: []float64{0.2, 0.5, 1, 1, 1, 1, 1, 1, 1},
			MaxInFlight: ptr(32),
		}})
		if err != nil {
			return err
		}
	}
	if err := ob.Start(ctx); err != nil {
		return err
	}
	defer ob.Close(ctx)

	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, publishers)
	for range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				ev := outbox.Event{ID: fmt.Sprintf("evt-%d", i), Account: "crash", Type: "crash.test",
					Data: []byte(fmt.Sprintf(`{"i":%d}`, i))}
				if _, err := ob.Publish(ctx, ev); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Println("published")
	for {
		var done int
		if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM outbox_deliveries WHERE status = 'SUCCEEDED'`).Scan(&done); err != nil {
			return err
		}
		if done >= n {
			fmt.Println("done")
			return nil
		}
		<-recorded
	}
}

func ptr[T any](v T) *T { return &v }
