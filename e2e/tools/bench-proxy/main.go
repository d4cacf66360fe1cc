// bench-proxy is the router benchmark's Go floor: the least a Go L7 gateway in front of a cell does, with
// the standard library's reverse proxy. TLS in (the serving certificate the router uses), keep-alive TLS
// out to the cell with one client certificate, the caller's identity passed by impersonation as the
// router and the bare Node.js proxy pass it, the answer streamed back. No authentication, routing, logging
// or metrics. One OS thread runs Go code (GOMAXPROCS=1), as one Node.js event loop runs the router. Prints
// its port on stdout.
//
//	bench-proxy <cell url> <cell pki dir> <serving pki dir>
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: bench-proxy <cell url> <cell pki dir> <serving pki dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

func run(cellURL, cellPKI, servingPKI string) error {
	runtime.GOMAXPROCS(1)
	target, err := url.Parse(cellURL)
	if err != nil {
		return fmt.Errorf("cell url: %w", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(cellPKI, "ca.crt"))
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("no certificate in %s", filepath.Join(cellPKI, "ca.crt"))
	}
	client, err := tls.LoadX509KeyPair(filepath.Join(cellPKI, "admin.crt"), filepath.Join(cellPKI, "admin.key"))
	if err != nil {
		return err
	}
	// HTTP/1.1 keep-alive to the cell, as the router and the bare Node.js proxy speak to it.
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client}},
		MaxIdleConnsPerHost: 64,
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(request *httputil.ProxyRequest) {
			request.SetURL(target)
			request.Out.Header.Del("Authorization")
			request.Out.Header.Set("Impersonate-User", "admin")
			request.Out.Header.Set("Impersonate-Group", "system:masters")
		},
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	server := &http.Server{Handler: proxy}
	return server.ServeTLS(listener, filepath.Join(servingPKI, "apiserver.crt"), filepath.Join(servingPKI, "apiserver.key"))
}
