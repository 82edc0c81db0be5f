// Package redisaddr turns the user's choice of a real Redis server (the
// REDIS_ADDR environment variable, or labctl's --redis flag) into an
// address, and checks that the server is one the suites may use: it answers,
// and its database holds no keys but the kit's own.
//
// It speaks just enough of the Redis protocol (RESP) for that check itself,
// so that labctl, which checks a --redis server before it points a suite at
// it, links neither a Redis client nor TLS: a fresh clone's first build of
// labctl is the wait before a learner's first verdict. The suites, which do
// link go-redis, build their client options with package
// redisaddr/redisclient from the same parsed address, and check a rediss://
// server through it.
package redisaddr

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Environment variables that point the kit at a real Redis server.
const (
	// Env names the server: "127.0.0.1:6379" or "redis://host:port/db".
	Env = "REDIS_ADDR"
	// AllowForeignEnv, set to 1, allows a database that holds keys
	// outside "labkit:". The suites only ever delete their own keys.
	AllowForeignEnv = "LABKIT_REDIS_ALLOW_FOREIGN_KEYS"
)

// KeyPrefix starts every key the kit writes.
const KeyPrefix = "labkit:"

// Sentinel errors of Parse and Check, for errors.Is.
var (
	ErrBadAddr     = errors.New("not a Redis address")
	ErrUnreachable = errors.New("cannot reach a Redis server")
	ErrForeignKeys = errors.New("the database holds keys that are not the kit's")
	// ErrNeedsTLS is Check's answer for a rediss:// address when it was
	// given no dialer that speaks TLS: the address is well formed, and
	// the server is left for a client that speaks TLS to check.
	ErrNeedsTLS = errors.New("the server speaks TLS")
)

// Timeouts of the check: a server that stops answering is an error within
// a second of each step, and the whole check within three.
const (
	DialTimeout  = time.Second
	ReplyTimeout = time.Second
	checkTimeout = 3 * time.Second
)

// Addr is a parsed server address.
type Addr struct {
	Network  string // "tcp" or "unix"
	Host     string // host:port, or the socket's path
	Username string
	Password string
	DB       int
	TLS      bool // a rediss:// URL
}

// Parse reads addr: host:port, a redis:// or rediss:// URL with optional
// credentials and database number (redis://user:pass@host:port/db, port
// 6379 by default), or a unix:// socket path with an optional ?db=N.
func Parse(addr string) (Addr, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return Addr{}, fmt.Errorf("%w: empty address (want host:port or redis://host:port/db)", ErrBadAddr)
	}
	if !strings.Contains(addr, "://") {
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return Addr{}, fmt.Errorf("%w: %q has no port (want host:port or redis://host:port/db)", ErrBadAddr, addr)
		}
		return Addr{Network: "tcp", Host: addr}, nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return Addr{}, fmt.Errorf("%w: %q: %v", ErrBadAddr, addr, err)
	}
	a := Addr{Network: "tcp"}
	if u.User != nil {
		a.Username = u.User.Username()
		a.Password, _ = u.User.Password()
	}
	switch u.Scheme {
	case "redis", "rediss":
		a.TLS = u.Scheme == "rediss"
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "localhost"
		}
		if port == "" {
			port = "6379"
		}
		a.Host = net.JoinHostPort(host, port)
		if p := strings.Trim(u.Path, "/"); p != "" {
			if a.DB, err = strconv.Atoi(p); err != nil || a.DB < 0 {
				return Addr{}, fmt.Errorf("%w: %q: the database %q is not a number", ErrBadAddr, addr, p)
			}
		}
	case "unix":
		a.Network, a.Host = "unix", u.Path
		if a.Host == "" {
			return Addr{}, fmt.Errorf("%w: %q names no socket", ErrBadAddr, addr)
		}
		if d := u.Query().Get("db"); d != "" {
			if a.DB, err = strconv.Atoi(d); err != nil || a.DB < 0 {
				return Addr{}, fmt.Errorf("%w: %q: the database %q is not a number", ErrBadAddr, addr, d)
			}
		}
	default:
		return Addr{}, fmt.Errorf("%w: %q: scheme %q (want redis://, rediss:// or unix://)", ErrBadAddr, addr, u.Scheme)
	}
	return a, nil
}

// Describe names the server addr points at, for a report: "host:port db
// N", with "(TLS)" for a rediss:// URL, and never its credentials.
func Describe(addr string) string {
	a, err := Parse(addr)
	if err != nil {
		return "an unparsable address"
	}
	s := fmt.Sprintf("%s db %d", a.Host, a.DB)
	if a.TLS {
		s += " (TLS)"
	}
	return s
}

// Dialer opens a connection to a parsed address; CheckWith uses it.
type Dialer func(ctx context.Context, a Addr) (net.Conn, error)

// Check connects to addr over plain TCP (or a unix socket) and returns nil
// when the server answers and (unless allowForeign) its database holds no
// key outside KeyPrefix. For a rediss:// address it only opens a TCP
// connection: ErrUnreachable when nothing accepts one, else ErrNeedsTLS
// (redisclient.Check speaks TLS and checks the rest).
func Check(ctx context.Context, addr string, allowForeign bool) error {
	return CheckWith(ctx, addr, allowForeign, nil)
}

// CheckWith is Check with the connection opened by dial; a nil dial dials
// plainly, and then a rediss:// address that accepts a TCP connection
// gives ErrNeedsTLS. Its errors are
// one line, wrap ErrBadAddr, ErrUnreachable, ErrForeignKeys or
// ErrNeedsTLS, and say what to do.
func CheckWith(ctx context.Context, addr string, allowForeign bool, dial Dialer) error {
	a, err := Parse(addr)
	if err != nil {
		return err
	}
	plain := dial == nil
	if plain {
		dial = func(ctx context.Context, a Addr) (net.Conn, error) {
			d := net.Dialer{Timeout: DialTimeout}
			return d.DialContext(ctx, a.Network, a.Host)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	nc, err := dial(ctx, a)
	if err != nil {
		return fmt.Errorf("%w at %s: %s", ErrUnreachable, addr, oneLine(err))
	}
	defer nc.Close()
	if plain && a.TLS {
		return fmt.Errorf("%w: %s accepts connections; it is a rediss:// address, whose TLS this check cannot open", ErrNeedsTLS, Describe(addr))
	}
	c := &conn{nc: nc, r: bufio.NewReader(nc), deadline: time.Now().Add(checkTimeout)}
	if d, ok := ctx.Deadline(); ok && d.Before(c.deadline) {
		c.deadline = d
	}
	if a.Password != "" {
		args := []string{"AUTH", a.Password}
		if a.Username != "" {
			args = []string{"AUTH", a.Username, a.Password}
		}
		if _, err := c.do(args...); err != nil {
			return fmt.Errorf("%w at %s: %s", ErrUnreachable, addr, oneLine(err))
		}
	}
	if a.DB != 0 {
		if _, err := c.do("SELECT", strconv.Itoa(a.DB)); err != nil {
			return fmt.Errorf("%w at %s: %s", ErrUnreachable, addr, oneLine(err))
		}
	}
	if _, err := c.do("PING"); err != nil {
		return fmt.Errorf("%w at %s: %s", ErrUnreachable, addr, oneLine(err))
	}
	if allowForeign {
		return nil
	}
	foreign, err := c.firstForeignKey()
	if err != nil {
		return fmt.Errorf("%w at %s: cannot list keys: %s", ErrUnreachable, addr, oneLine(err))
	}
	if foreign != "" {
		return fmt.Errorf("%w: database %d at %s holds keys outside %q (for example %q); use an empty database (redis://%s/15) or set %s=1 (the kit only ever deletes its own keys)",
			ErrForeignKeys, a.DB, addr, KeyPrefix, show(foreign), a.Host, AllowForeignEnv)
	}
	return nil
}

// AllowForeign reports whether AllowForeignEnv is set to 1 in env, a list of
// KEY=VALUE pairs as os.Environ returns.
func AllowForeign(env []string) bool {
	for _, kv := range env {
		if kv == AllowForeignEnv+"=1" {
			return true
		}
	}
	return false
}

// conn is one connection speaking RESP, the Redis protocol: a command is an
// array of bulk strings, a reply one typed value.
type conn struct {
	nc       net.Conn
	r        *bufio.Reader
	deadline time.Time
}

// errReply is an error the server replied with ("-ERR ...").
type errReply string

func (e errReply) Error() string { return string(e) }

// do sends one command and reads its reply.
func (c *conn) do(args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	step := time.Now().Add(ReplyTimeout)
	if c.deadline.Before(step) {
		step = c.deadline
	}
	c.nc.SetDeadline(step)
	if _, err := c.nc.Write([]byte(b.String())); err != nil {
		return nil, err
	}
	v, err := readReply(c.r, 0)
	if err != nil {
		return nil, err
	}
	if e, ok := v.(errReply); ok {
		return nil, e
	}
	return v, nil
}

// Limits on a reply, which comes from a server the user named but which
// might not be Redis at all.
const (
	maxBulk  = 1 << 20
	maxArray = 1 << 16
	maxDepth = 4
)

// readReply reads one RESP2 value: a simple string, an error (errReply),
// an integer, a bulk string (nil when null) or an array of values.
func readReply(r *bufio.Reader, depth int) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return nil, errors.New("the server sent an empty line, not a Redis reply")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return errReply(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n > maxBulk {
			return nil, fmt.Errorf("the server sent %q, not a Redis reply", show(line))
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n > maxArray || depth >= maxDepth {
			return nil, fmt.Errorf("the server sent %q, not a Redis reply", show(line))
		}
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("the server sent %q, not a Redis reply", show(line))
}

// firstForeignKey scans the database for a key outside KeyPrefix, "" when
// there is none.
func (c *conn) firstForeignKey() (string, error) {
	cursor := "0"
	for {
		v, err := c.do("SCAN", cursor, "COUNT", "1000")
		if err != nil {
			return "", err
		}
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			return "", fmt.Errorf("SCAN replied %v, not a cursor and keys", v)
		}
		next, ok1 := pair[0].(string)
		keys, ok2 := pair[1].([]any)
		if !ok1 || !ok2 {
			return "", fmt.Errorf("SCAN replied %v, not a cursor and keys", v)
		}
		for _, k := range keys {
			if s, ok := k.(string); ok && !strings.HasPrefix(s, KeyPrefix) {
				return s, nil
			}
		}
		if next == "0" {
			return "", nil
		}
		cursor = next
	}
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// show shortens a key for an error message.
func show(key string) string {
	if len(key) > 40 {
		return key[:40] + "..."
	}
	return key
}
