package deadletter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = strings.Contains
var _ = fakeclock.Now
var _ = time.Second

var bg = context.Background()

func mustQ(t *testing.T, o Options) *Queue {
	t.Helper()
	q, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func enq(t *testing.T, q *Queue, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := q.Enqueue(bg, Task{ID: id, Subject: "subj " + id}); err != nil {
			t.Fatal(err)
		}
	}
}

func recv(t *testing.T, q *Queue) Message {
	t.Helper()
	m, err := q.Receive(bg, "c")
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return m
}

func dlq(t *testing.T, q *Queue) []DeadLetter {
	t.Helper()
	l, err := q.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProbeCrashesAreCounted(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 3})
		defer q.Close()
		enq(t, q, "poison")
		for i := 1; i <= 3; i++ {
			m := recv(t, q)
			if m.Deliveries != i {
				t.Fatalf("delivery %d has count %d", i, m.Deliveries)
			}
			time.Sleep(DefaultDeliveryTimeout) // the consumer crashed
		}
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth receive: %v", err)
		}
		l := dlq(t, q)
		if len(l) != 1 || l[0].Deliveries != 3 || l[0].Reason != ReasonMaxDeliveries || l[0].LastError != "" {
			t.Fatalf("dlq %v", l)
		}
	})
}

func TestProbeVisibleAtExpires(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{VisibilityTimeout: 10 * time.Second})
		defer q.Close()
		enq(t, q, "a")
		m := recv(t, q)
		time.Sleep(time.Until(m.Expires))
		m2, err := q.Receive(bg, "c")
		if err != nil || m2.Deliveries != 2 {
			t.Fatalf("receive at Expires: %v %v", m2, err)
		}
	})
}

func TestProbeDeadLettersInExpiryOrder(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 2, VisibilityTimeout: 30 * time.Second})
		defer q.Close()
		enq(t, q, "A", "B")
		if m := recv(t, q); m.Task.ID != "A" { // A d1, expires t=30
			t.Fatal(m)
		}
		time.Sleep(time.Second)
		mb := recv(t, q) // B d1 at t=1
		if mb.Task.ID != "B" {
			t.Fatal(mb)
		}
		if err := q.Nack(bg, mb.Receipt, errors.New("b1")); err != nil {
			t.Fatal(err)
		}
		if m := recv(t, q); m.Task.ID != "B" || m.Deliveries != 2 { // B's last, expires t=31
			t.Fatal(m)
		}
		time.Sleep(29 * time.Second)                                // t=30: A's first delivery ends
		if m := recv(t, q); m.Task.ID != "A" || m.Deliveries != 2 { // A's last, expires t=60
			t.Fatal(m)
		}
		time.Sleep(31 * time.Second) // t=61
		l := dlq(t, q)
		if len(l) != 2 || l[0].Task.ID != "B" || l[1].Task.ID != "A" {
			t.Fatalf("dlq order %v, want B (expired t=31) then A (t=60)", l)
		}
	})
}

func TestProbeStaleNackRecordsNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 3})
		defer q.Close()
		enq(t, q, "a")
		m1 := recv(t, q)
		time.Sleep(DefaultDeliveryTimeout)
		recv(t, q)
		if err := q.Nack(bg, m1.Receipt, errors.New("stale")); !errors.Is(err, ErrDeliveryLost) {
			t.Fatalf("stale nack: %v", err)
		}
		time.Sleep(DefaultDeliveryTimeout)
		recv(t, q)
		time.Sleep(DefaultDeliveryTimeout)
		l := dlq(t, q)
		if len(l) != 1 || l[0].LastError != "" {
			t.Fatalf("dlq %v: a refused nack recorded its error", l)
		}
	})
}

func TestProbeValidatorPanicIsMalformed(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{Validate: func(t Task) error {
			if t.ID == "bad" {
				panic("unparsable doc-42")
			}
			return nil
		}})
		defer q.Close()
		enq(t, q, "bad", "good")
		if m := recv(t, q); m.Task.ID != "good" {
			t.Fatalf("delivered %v", m)
		}
		l := dlq(t, q)
		if len(l) != 1 || l[0].Reason != ReasonMalformed || !strings.Contains(l[0].LastError, "unparsable doc-42") {
			t.Fatalf("dlq %v", l)
		}
	})
}

func TestProbeMalformedCountUnchanged(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{Validate: func(Task) error { return errors.New("no recipient") }})
		defer q.Close()
		enq(t, q, "bad")
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatal(err)
		}
		l := dlq(t, q)
		if len(l) != 1 || l[0].Deliveries != 0 || l[0].LastError != "no recipient" {
			t.Fatalf("dlq %v", l)
		}
	})
}

func TestProbeRedriveForgetsLastError(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 1})
		defer q.Close()
		enq(t, q, "a")
		m := recv(t, q)
		if err := q.Nack(bg, m.Receipt, errors.New("e1")); err != nil {
			t.Fatal(err)
		}
		if err := q.Redrive(bg, "a"); err != nil {
			t.Fatal(err)
		}
		if m := recv(t, q); m.Deliveries != 1 {
			t.Fatal(m)
		}
		time.Sleep(DefaultDeliveryTimeout)
		l := dlq(t, q)
		if len(l) != 1 || l[0].LastError != "" || l[0].Deliveries != 1 {
			t.Fatalf("dlq %v", l)
		}
	})
}

func TestProbeRedriveGoesToBack(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 1})
		defer q.Close()
		enq(t, q, "A")
		m := recv(t, q)
		if err := q.Nack(bg, m.Receipt, errors.New("x")); err != nil {
			t.Fatal(err)
		}
		enq(t, q, "B")
		if err := q.Redrive(bg, "A"); err != nil {
			t.Fatal(err)
		}
		if m := recv(t, q); m.Task.ID != "B" {
			t.Fatalf("after redrive got %v, want B first", m)
		}
	})
}

func TestProbeNackLimitExact(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 3})
		defer q.Close()
		enq(t, q, "a")
		for i := 1; i <= 3; i++ {
			m := recv(t, q)
			if err := q.Nack(bg, m.Receipt, errors.New("fail")); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("fourth delivery %v %v", m, err)
		}
		if l := dlq(t, q); len(l) != 1 || l[0].Deliveries != 3 || l[0].LastError != "fail" {
			t.Fatalf("dlq %v", l)
		}
	})
}

func TestProbeAckAtExpiresIsLost(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{})
		defer q.Close()
		enq(t, q, "a")
		m := recv(t, q)
		time.Sleep(time.Until(m.Expires))
		if err := q.Ack(bg, m.Receipt); !errors.Is(err, ErrDeliveryLost) {
			t.Fatalf("ack at Expires: %v", err)
		}
		if m2 := recv(t, q); m2.Deliveries != 2 {
			t.Fatal(m2)
		}
	})
}

func TestProbeEnqueueOfDeadLetteredID(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 1})
		defer q.Close()
		enq(t, q, "a")
		m := recv(t, q)
		if err := q.Nack(bg, m.Receipt, errors.New("x")); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(bg, Task{ID: "a"}); !errors.Is(err, ErrDuplicateMessage) {
			t.Fatalf("enqueue of dead-lettered id: %v", err)
		}
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("receive: %v", err)
		}
	})
}

func TestProbeReceiveSkipsMalformed(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{Validate: func(t Task) error {
			if t.ID == "bad" {
				return errors.New("bad doc")
			}
			return nil
		}})
		defer q.Close()
		enq(t, q, "bad", "good")
		m, err := q.Receive(bg, "c")
		if err != nil || m.Task.ID != "good" {
			t.Fatalf("receive: %v %v", m, err)
		}
	})
}

func TestProbeListIsACopy(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 1})
		defer q.Close()
		enq(t, q, "a")
		m := recv(t, q)
		if err := q.Nack(bg, m.Receipt, errors.New("orig")); err != nil {
			t.Fatal(err)
		}
		l := dlq(t, q)
		l[0].LastError = "changed"
		l[0].Task.ID = "zzz"
		if l2 := dlq(t, q); l2[0].LastError != "orig" || l2[0].Task.ID != "a" {
			t.Fatalf("list after changing a copy: %v", l2)
		}
	})
}

func TestProbeReceiptUniqueAcrossRedrive(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		q := mustQ(t, Options{MaxDeliveries: 1})
		defer q.Close()
		enq(t, q, "a")
		m1 := recv(t, q)
		if err := q.Nack(bg, m1.Receipt, errors.New("x")); err != nil {
			t.Fatal(err)
		}
		if err := q.Redrive(bg, "a"); err != nil {
			t.Fatal(err)
		}
		m2 := recv(t, q)
		if m2.Receipt == m1.Receipt {
			t.Fatalf("receipt %q reused", m1.Receipt)
		}
		if err := q.Ack(bg, m1.Receipt); !errors.Is(err, ErrDeliveryLost) {
			t.Fatalf("ack with the first delivery's receipt: %v", err)
		}
	})
}

func TestProbeCorrectCancelledAndOptions(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		if _, err := New(Options{VisibilityTimeout: MaxDeliveryTimeout + 1}); !errors.Is(err, ErrInvalidOptions) {
			t.Fatal(err)
		}
		q := mustQ(t, Options{})
		defer q.Close()
		ctx, cancel := context.WithCancel(bg)
		cancel()
		if err := q.Enqueue(ctx, Task{ID: "a"}); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if _, err := q.Receive(bg, "c"); !errors.Is(err, ErrNoMessage) {
			t.Fatal(err)
		}
		enq(t, q, "a")
		m := recv(t, q)
		if err := q.Nack(bg, m.Receipt, nil); !errors.Is(err, ErrNoCause) {
			t.Fatal(err)
		}
		if err := q.Ack(ctx, m.Receipt); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if err := q.Ack(bg, m.Receipt); err != nil {
			t.Fatal(err)
		}
		enq(t, q, "a")
	})
}
