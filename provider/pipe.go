package provider

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
)

// PipeListener is a net.Listener whose connections are in-memory net.Pipe
// pairs created by Dial. It lets an http.Server and an http.Transport talk
// without a socket, which also works inside a testing/synctest bubble (create
// it inside the bubble). It is safe for concurrent use.
type PipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewPipeListener returns an open PipeListener.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next Dial and returns the server end of its pipe. It
// returns an error wrapping net.ErrClosed once the listener is closed.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, fmt.Errorf("pipe listener: accept: %w", net.ErrClosed)
	}
}

// Close stops the listener: blocked and later Accepts and Dials fail.
// Connections already established are not closed. Close is idempotent.
func (l *PipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr returns the listener's placeholder address ("pipe").
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// Dial connects to the listener and returns the client end of a new pipe,
// once Accept has taken the server end. Its signature fits
// http.Transport.DialContext; network and addr are ignored.
func (l *PipeListener) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		server.Close()
		client.Close()
		return nil, fmt.Errorf("pipe listener: dial: %w", net.ErrClosed)
	case <-ctx.Done():
		server.Close()
		client.Close()
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// Server serves an API over HTTP on a PipeListener, with a matching client
// side: the whole HTTP stack in memory. Create it inside the bubble that uses
// it and Close it before the bubble ends (its goroutines would otherwise be
// reported as leaked).
//
//	srv := provider.NewServer(p)
//	defer srv.Close()
//	var api provider.API = srv.Client()
type Server struct {
	// URL is the base URL the Client uses ("http://provider.pipe"). Any
	// host name reaches the listener.
	URL string

	listener  *PipeListener
	srv       *http.Server
	transport *http.Transport
	served    chan struct{}
}

// NewServer starts serving api (normally a *Provider) with Handler.
func NewServer(api API) *Server {
	s := &Server{
		URL:      "http://provider.pipe",
		listener: NewPipeListener(),
		served:   make(chan struct{}),
	}
	s.srv = &http.Server{
		Handler:  Handler(api),
		ErrorLog: log.New(io.Discard, "", 0),
	}
	s.transport = &http.Transport{
		DialContext:        s.listener.Dial,
		DisableCompression: true,
	}
	go func() {
		defer close(s.served)
		s.srv.Serve(s.listener)
	}()
	return s
}

// HTTPClient returns an http.Client whose connections reach the server.
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Transport: s.transport}
}

// Client returns a provider Client connected to the server.
func (s *Server) Client() *Client {
	return NewClient(s.URL, s.HTTPClient())
}

// Close stops the server: it closes the listener and every connection
// (which ends handlers waiting on a lost response), closes the client side's
// idle connections, and waits for the serving goroutine to return.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.transport.CloseIdleConnections()
	<-s.served
	return err
}
