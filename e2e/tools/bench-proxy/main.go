// bench-proxy is the router benchmark's Go floor: the least a Go L7 gateway in front of a cell does, with
// the standard library's reverse proxy. TLS in (the serving certificate the router uses), keep-alive TLS
// out to the cell, the caller's identity passed on, the answer streamed back. No authentication, routing,
// logging or metrics. One OS thread runs Go code (GOMAXPROCS=1), as one Node.js event loop runs the router.
// Prints its port on stdout.
//
//	bench-proxy [-identity impersonate|requestheader] [-http2] <cell url> <cell pki dir> <serving pki dir>
//
// The identity is passed as the router and the bare Node.js proxy pass it (impersonation: the cell's
// admin certificate, Impersonate-User/Group), or as kube-aggregator and kcp's front proxy do (requestheader:
// the front-proxy-client certificate, X-Remote-User/Group, whatever X-Remote-* the caller sent removed).
// -http2 speaks HTTP/2 to the cell instead of HTTP/1.1.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

func main() {
	identity := flag.String("identity", "impersonate", "how the caller's identity reaches the cell: impersonate or requestheader")
	http2 := flag.Bool("http2", false, "speak HTTP/2 to the cell")
	flag.Parse()
	if flag.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: bench-proxy [-identity impersonate|requestheader] [-http2] <cell url> <cell pki dir> <serving pki dir>")
		os.Exit(2)
	}
	if err := run(*identity, *http2, flag.Arg(0), flag.Arg(1), flag.Arg(2)); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

func run(identity string, http2 bool, cellURL, cellPKI, servingPKI string) error {
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
	var certificate string
	var passIdentity func(http.Header)
	switch identity {
	case "impersonate":
		certificate = "admin"
		passIdentity = func(header http.Header) {
			header.Set("Impersonate-User", "admin")
			header.Set("Impersonate-Group", "system:masters")
		}
	case "requestheader":
		certificate = "front-proxy-client"
		passIdentity = func(header http.Header) {
			// The front proxy's certificate vouches for whatever these say: never the caller's own.
			for name := range header {
				if strings.HasPrefix(strings.ToLower(name), "x-remote-") {
					header.Del(name)
				}
			}
			header.Set("X-Remote-User", "admin")
			header.Set("X-Remote-Group", "system:masters")
		}
	default:
		return errors.New("-identity must be impersonate or requestheader")
	}
	client, err := tls.LoadX509KeyPair(filepath.Join(cellPKI, certificate+".crt"), filepath.Join(cellPKI, certificate+".key"))
	if err != nil {
		return err
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client}},
		MaxIdleConnsPerHost: 64,
		ForceAttemptHTTP2:   http2,
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(request *httputil.ProxyRequest) {
			request.SetURL(target)
			request.Out.Header.Del("Authorization")
			passIdentity(request.Out.Header)
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
