// A client written with Go's net/http, for `poolbench serve --check-client`
// tests: what a Go service does to a server when it leaves the Transport
// at its defaults.
//
//	go build -o go_http main.go
//	go_http -url http://127.0.0.1:PORT/ -goroutines 10 -requests 30 [-pause 5ms] [-max-idle-per-host K]
//
// Each of the goroutines sends its requests one after another (GET, body
// read to the end and closed, so the connection can be reused) through
// one shared http.Client, pausing -pause between two of them, as the
// handlers of a service do between their calls to another service.
// -max-idle-per-host 0 leaves the Transport's MaxIdleConnsPerHost at its
// default (http.DefaultMaxIdleConnsPerHost, 2): while more than two
// goroutines pause at once, each connection coming back finds the idle
// list full and is closed, and the next request dials a new one (churn).
// K > 0 sets it (and MaxIdleConns at least as high). Without a pause a
// goroutine takes its connection back at once and Go hardly churns: the
// Transport puts a connection on the idle list before the body's reader
// sees its end.
//
// Bounded: -timeout (default 30s) caps each request and the whole run.
// Exit 0 when every request got a 200; 1 otherwise (the first errors go
// to stderr); 2 on bad flags. Standard library only, and nothing newer
// than Go 1.19 (Debian bookworm's golang-go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "target URL, e.g. http://127.0.0.1:8080/")
	goroutines := flag.Int("goroutines", 10, "goroutines sending at once")
	requests := flag.Int("requests", 30, "requests per goroutine, one after another")
	pause := flag.Duration("pause", 0, "pause of each goroutine between two of its requests")
	maxIdle := flag.Int("max-idle-per-host", 0, "Transport.MaxIdleConnsPerHost (0: the default, 2)")
	timeout := flag.Duration("timeout", 30*time.Second, "cap on each request and on the whole run")
	flag.Parse()
	if *url == "" || *goroutines < 1 || *requests < 1 || *maxIdle < 0 || *pause < 0 {
		fmt.Fprintln(os.Stderr, "go_http: -url is required; -goroutines and -requests must be at least 1; -pause and -max-idle-per-host not negative")
		os.Exit(2)
	}

	// A clone of the default Transport, as most services use it (proxy
	// from the environment ignored: the target is on loopback).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	if *maxIdle > 0 {
		tr.MaxIdleConnsPerHost = *maxIdle
		if tr.MaxIdleConns < *maxIdle {
			tr.MaxIdleConns = *maxIdle
		}
	}
	client := &http.Client{Transport: tr, Timeout: *timeout}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var ok, failed int64
	var once sync.Once
	var wg sync.WaitGroup
	for g := 0; g < *goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < *requests; i++ {
				if i > 0 && *pause > 0 {
					time.Sleep(*pause)
				}
				if err := get(ctx, client, *url); err != nil {
					atomic.AddInt64(&failed, 1)
					once.Do(func() { fmt.Fprintln(os.Stderr, "go_http:", err) })
					continue
				}
				atomic.AddInt64(&ok, 1)
			}
		}()
	}
	wg.Wait()
	// Close what is idle before leaving, as a service shutting down would;
	// the process exit would close the rest.
	tr.CloseIdleConnections()
	fmt.Printf("ok %d failed %d\n", ok, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// get sends one GET and reads the body to the end, which lets the
// Transport put the connection back on its idle list.
func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
