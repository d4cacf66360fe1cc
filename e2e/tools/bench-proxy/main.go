// bench-proxy is the router benchmark's Go floor: the least a Go L7 gateway in front of a cell does, with
// the standard library's reverse proxy. TLS in (the serving certificate the router uses), keep-alive TLS
// out to the cell, the caller's identity passed on, the answer streamed back. No authentication, routing,
// logging or metrics. One OS thread runs Go code (GOMAXPROCS=1), as one Node.js event loop runs the router.
// Prints its port on stdout.
//
//	bench-proxy [-identity impersonate|requestheader] [-http2] <cell url> <cell pki dir> <serving pki dir>
//
// The caller is taken to be the control plane's admin (the serving pki dir's admin.crt), as the benchmark's
// load is, and passed on with what the router passes for it: user admin, groups system:masters and
// system:authenticated, and the extra authentication.kubernetes.io/credential-id kube-apiserver gives a
// client certificate. By impersonation, as the router and the bare Node.js proxy do (the certificate of
// cellfed's components, whose right to impersonate the cell's RBAC checks once per user, group and extra),
// or by requestheader, as kube-aggregator and kcp's front proxy do (the front-proxy-client certificate,
// X-Remote-* headers, whatever X-Remote-* the caller sent removed). -http2 speaks HTTP/2 to the cell.
package main

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
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
	credentialID, err := credentialIDOf(filepath.Join(servingPKI, "admin.crt"))
	if err != nil {
		return err
	}
	var certificate, prefix, extraPrefix string
	switch identity {
	case "impersonate":
		certificate, prefix, extraPrefix = "cellfed-router", "Impersonate-", "Impersonate-Extra-"
	case "requestheader":
		certificate, prefix, extraPrefix = "front-proxy-client", "X-Remote-", "X-Remote-Extra-"
	default:
		return errors.New("-identity must be impersonate or requestheader")
	}
	passIdentity := func(header http.Header) {
		// The cell believes these of whoever holds the certificate: never what the caller sent.
		for name := range header {
			lower := strings.ToLower(name)
			if strings.HasPrefix(lower, "x-remote-") || strings.HasPrefix(lower, "impersonate-") {
				header.Del(name)
			}
		}
		header.Set(prefix+"User", "admin")
		header.Add(prefix+"Group", "system:masters")
		header.Add(prefix+"Group", "system:authenticated")
		header.Set(extraPrefix+"Authentication.kubernetes.io%2fcredential-Id", credentialID)
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

// credentialIDOf is what kube-apiserver records of a client certificate as the extra
// authentication.kubernetes.io/credential-id: X509SHA256= and the hex SHA-256 of its DER.
func credentialIDOf(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return "", fmt.Errorf("no certificate in %s", file)
	}
	sum := sha256.Sum256(block.Bytes)
	return "X509SHA256=" + hex.EncodeToString(sum[:]), nil
}
