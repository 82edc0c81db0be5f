// Package atomic is a drop-in replacement for package sync/atomic whose
// operations let a suite choose how goroutines interleave.
//
// The grader grades a lab that asks for it (course: schedulesAtomic) with a
// copy of the student's files in which only the `"sync/atomic"` import line
// is changed to this package, named atomic, so the code and its line
// numbers stay the student's. Outside a syncpoint.Race every function and
// method here is the standard one. Inside a Race, each is a scheduling point
// (syncpoint.Point) before the operation is made: another participant may
// run between a Load and the Add that acts on what it read, as between two
// lock sections, and the schedule, drawn from the race's seed, replays.
//
// The types hold the standard ones, so their zero values are ready to use,
// their alignment is the standard types', and go vet reports copying them
// as it does for sync/atomic's.
package atomic

import (
	"sync/atomic"
	"unsafe"

	"github.com/fourth-outcome/labkit/suites/syncpoint"
)

// Bool is sync/atomic.Bool with scheduling points.
type Bool struct {
	v atomic.Bool
}

// Load atomically loads and returns the value stored in x.
func (x *Bool) Load() bool { syncpoint.Point("Bool.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Bool) Store(val bool) { syncpoint.Point("Bool.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Bool) Swap(new bool) (old bool) { syncpoint.Point("Bool.Swap"); return x.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for the boolean value x.
func (x *Bool) CompareAndSwap(old, new bool) (swapped bool) {
	syncpoint.Point("Bool.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Pointer is sync/atomic.Pointer with scheduling points.
type Pointer[T any] struct {
	v atomic.Pointer[T]
}

// Load atomically loads and returns the value stored in x.
func (x *Pointer[T]) Load() *T { syncpoint.Point("Pointer.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Pointer[T]) Store(val *T) { syncpoint.Point("Pointer.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Pointer[T]) Swap(new *T) (old *T) { syncpoint.Point("Pointer.Swap"); return x.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for x.
func (x *Pointer[T]) CompareAndSwap(old, new *T) (swapped bool) {
	syncpoint.Point("Pointer.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Value is sync/atomic.Value with scheduling points.
type Value struct {
	v atomic.Value
}

// Load returns the value set by the most recent Store, nil if there has
// been no call to Store for this Value.
func (v *Value) Load() (val any) { syncpoint.Point("Value.Load"); return v.v.Load() }

// Store sets the value of the Value v to val (see sync/atomic.Value.Store).
func (v *Value) Store(val any) { syncpoint.Point("Value.Store"); v.v.Store(val) }

// Swap stores new into Value and returns the previous value (see
// sync/atomic.Value.Swap).
func (v *Value) Swap(new any) (old any) { syncpoint.Point("Value.Swap"); return v.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for the Value
// (see sync/atomic.Value.CompareAndSwap).
func (v *Value) CompareAndSwap(old, new any) (swapped bool) {
	syncpoint.Point("Value.CompareAndSwap")
	return v.v.CompareAndSwap(old, new)
}

// Int32 is sync/atomic.Int32 with scheduling points.
type Int32 struct {
	v atomic.Int32
}

// Load atomically loads and returns the value stored in x.
func (x *Int32) Load() int32 { syncpoint.Point("Int32.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Int32) Store(val int32) { syncpoint.Point("Int32.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Int32) Swap(new int32) (old int32) { syncpoint.Point("Int32.Swap"); return x.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for x.
func (x *Int32) CompareAndSwap(old, new int32) (swapped bool) {
	syncpoint.Point("Int32.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Add atomically adds delta to x and returns the new value.
func (x *Int32) Add(delta int32) (new int32) { syncpoint.Point("Int32.Add"); return x.v.Add(delta) }

// And atomically performs a bitwise AND operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Int32) And(mask int32) (old int32) { syncpoint.Point("Int32.And"); return x.v.And(mask) }

// Or atomically performs a bitwise OR operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Int32) Or(mask int32) (old int32) { syncpoint.Point("Int32.Or"); return x.v.Or(mask) }

// Int64 is sync/atomic.Int64 with scheduling points.
type Int64 struct {
	v atomic.Int64
}

// Load atomically loads and returns the value stored in x.
func (x *Int64) Load() int64 { syncpoint.Point("Int64.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Int64) Store(val int64) { syncpoint.Point("Int64.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Int64) Swap(new int64) (old int64) { syncpoint.Point("Int64.Swap"); return x.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for x.
func (x *Int64) CompareAndSwap(old, new int64) (swapped bool) {
	syncpoint.Point("Int64.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Add atomically adds delta to x and returns the new value.
func (x *Int64) Add(delta int64) (new int64) { syncpoint.Point("Int64.Add"); return x.v.Add(delta) }

// And atomically performs a bitwise AND operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Int64) And(mask int64) (old int64) { syncpoint.Point("Int64.And"); return x.v.And(mask) }

// Or atomically performs a bitwise OR operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Int64) Or(mask int64) (old int64) { syncpoint.Point("Int64.Or"); return x.v.Or(mask) }

// Uint32 is sync/atomic.Uint32 with scheduling points.
type Uint32 struct {
	v atomic.Uint32
}

// Load atomically loads and returns the value stored in x.
func (x *Uint32) Load() uint32 { syncpoint.Point("Uint32.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Uint32) Store(val uint32) { syncpoint.Point("Uint32.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Uint32) Swap(new uint32) (old uint32) { syncpoint.Point("Uint32.Swap"); return x.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for x.
func (x *Uint32) CompareAndSwap(old, new uint32) (swapped bool) {
	syncpoint.Point("Uint32.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Add atomically adds delta to x and returns the new value.
func (x *Uint32) Add(delta uint32) (new uint32) { syncpoint.Point("Uint32.Add"); return x.v.Add(delta) }

// And atomically performs a bitwise AND operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Uint32) And(mask uint32) (old uint32) { syncpoint.Point("Uint32.And"); return x.v.And(mask) }

// Or atomically performs a bitwise OR operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Uint32) Or(mask uint32) (old uint32) { syncpoint.Point("Uint32.Or"); return x.v.Or(mask) }

// Uint64 is sync/atomic.Uint64 with scheduling points.
type Uint64 struct {
	v atomic.Uint64
}

// Load atomically loads and returns the value stored in x.
func (x *Uint64) Load() uint64 { syncpoint.Point("Uint64.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Uint64) Store(val uint64) { syncpoint.Point("Uint64.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Uint64) Swap(new uint64) (old uint64) { syncpoint.Point("Uint64.Swap"); return x.v.Swap(new) }

// CompareAndSwap executes the compare-and-swap operation for x.
func (x *Uint64) CompareAndSwap(old, new uint64) (swapped bool) {
	syncpoint.Point("Uint64.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Add atomically adds delta to x and returns the new value.
func (x *Uint64) Add(delta uint64) (new uint64) { syncpoint.Point("Uint64.Add"); return x.v.Add(delta) }

// And atomically performs a bitwise AND operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Uint64) And(mask uint64) (old uint64) { syncpoint.Point("Uint64.And"); return x.v.And(mask) }

// Or atomically performs a bitwise OR operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Uint64) Or(mask uint64) (old uint64) { syncpoint.Point("Uint64.Or"); return x.v.Or(mask) }

// Uintptr is sync/atomic.Uintptr with scheduling points.
type Uintptr struct {
	v atomic.Uintptr
}

// Load atomically loads and returns the value stored in x.
func (x *Uintptr) Load() uintptr { syncpoint.Point("Uintptr.Load"); return x.v.Load() }

// Store atomically stores val into x.
func (x *Uintptr) Store(val uintptr) { syncpoint.Point("Uintptr.Store"); x.v.Store(val) }

// Swap atomically stores new into x and returns the previous value.
func (x *Uintptr) Swap(new uintptr) (old uintptr) {
	syncpoint.Point("Uintptr.Swap")
	return x.v.Swap(new)
}

// CompareAndSwap executes the compare-and-swap operation for x.
func (x *Uintptr) CompareAndSwap(old, new uintptr) (swapped bool) {
	syncpoint.Point("Uintptr.CompareAndSwap")
	return x.v.CompareAndSwap(old, new)
}

// Add atomically adds delta to x and returns the new value.
func (x *Uintptr) Add(delta uintptr) (new uintptr) {
	syncpoint.Point("Uintptr.Add")
	return x.v.Add(delta)
}

// And atomically performs a bitwise AND operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Uintptr) And(mask uintptr) (old uintptr) {
	syncpoint.Point("Uintptr.And")
	return x.v.And(mask)
}

// Or atomically performs a bitwise OR operation on x using the bitmask
// provided as mask and returns the old value.
func (x *Uintptr) Or(mask uintptr) (old uintptr) { syncpoint.Point("Uintptr.Or"); return x.v.Or(mask) }

// The functions of sync/atomic, each a scheduling point before the operation.

// AddInt32 is sync/atomic.AddInt32.
func AddInt32(addr *int32, delta int32) (new int32) {
	syncpoint.Point("AddInt32")
	return atomic.AddInt32(addr, delta)
}

// AndInt32 is sync/atomic.AndInt32.
func AndInt32(addr *int32, mask int32) (old int32) {
	syncpoint.Point("AndInt32")
	return atomic.AndInt32(addr, mask)
}

// OrInt32 is sync/atomic.OrInt32.
func OrInt32(addr *int32, mask int32) (old int32) {
	syncpoint.Point("OrInt32")
	return atomic.OrInt32(addr, mask)
}

// AddInt64 is sync/atomic.AddInt64.
func AddInt64(addr *int64, delta int64) (new int64) {
	syncpoint.Point("AddInt64")
	return atomic.AddInt64(addr, delta)
}

// AndInt64 is sync/atomic.AndInt64.
func AndInt64(addr *int64, mask int64) (old int64) {
	syncpoint.Point("AndInt64")
	return atomic.AndInt64(addr, mask)
}

// OrInt64 is sync/atomic.OrInt64.
func OrInt64(addr *int64, mask int64) (old int64) {
	syncpoint.Point("OrInt64")
	return atomic.OrInt64(addr, mask)
}

// AddUint32 is sync/atomic.AddUint32.
func AddUint32(addr *uint32, delta uint32) (new uint32) {
	syncpoint.Point("AddUint32")
	return atomic.AddUint32(addr, delta)
}

// AndUint32 is sync/atomic.AndUint32.
func AndUint32(addr *uint32, mask uint32) (old uint32) {
	syncpoint.Point("AndUint32")
	return atomic.AndUint32(addr, mask)
}

// OrUint32 is sync/atomic.OrUint32.
func OrUint32(addr *uint32, mask uint32) (old uint32) {
	syncpoint.Point("OrUint32")
	return atomic.OrUint32(addr, mask)
}

// AddUint64 is sync/atomic.AddUint64.
func AddUint64(addr *uint64, delta uint64) (new uint64) {
	syncpoint.Point("AddUint64")
	return atomic.AddUint64(addr, delta)
}

// AndUint64 is sync/atomic.AndUint64.
func AndUint64(addr *uint64, mask uint64) (old uint64) {
	syncpoint.Point("AndUint64")
	return atomic.AndUint64(addr, mask)
}

// OrUint64 is sync/atomic.OrUint64.
func OrUint64(addr *uint64, mask uint64) (old uint64) {
	syncpoint.Point("OrUint64")
	return atomic.OrUint64(addr, mask)
}

// AddUintptr is sync/atomic.AddUintptr.
func AddUintptr(addr *uintptr, delta uintptr) (new uintptr) {
	syncpoint.Point("AddUintptr")
	return atomic.AddUintptr(addr, delta)
}

// AndUintptr is sync/atomic.AndUintptr.
func AndUintptr(addr *uintptr, mask uintptr) (old uintptr) {
	syncpoint.Point("AndUintptr")
	return atomic.AndUintptr(addr, mask)
}

// OrUintptr is sync/atomic.OrUintptr.
func OrUintptr(addr *uintptr, mask uintptr) (old uintptr) {
	syncpoint.Point("OrUintptr")
	return atomic.OrUintptr(addr, mask)
}

// CompareAndSwapInt32 is sync/atomic.CompareAndSwapInt32.
func CompareAndSwapInt32(addr *int32, old, new int32) (swapped bool) {
	syncpoint.Point("CompareAndSwapInt32")
	return atomic.CompareAndSwapInt32(addr, old, new)
}

// LoadInt32 is sync/atomic.LoadInt32.
func LoadInt32(addr *int32) (val int32) {
	syncpoint.Point("LoadInt32")
	return atomic.LoadInt32(addr)
}

// StoreInt32 is sync/atomic.StoreInt32.
func StoreInt32(addr *int32, val int32) {
	syncpoint.Point("StoreInt32")
	atomic.StoreInt32(addr, val)
}

// SwapInt32 is sync/atomic.SwapInt32.
func SwapInt32(addr *int32, new int32) (old int32) {
	syncpoint.Point("SwapInt32")
	return atomic.SwapInt32(addr, new)
}

// CompareAndSwapInt64 is sync/atomic.CompareAndSwapInt64.
func CompareAndSwapInt64(addr *int64, old, new int64) (swapped bool) {
	syncpoint.Point("CompareAndSwapInt64")
	return atomic.CompareAndSwapInt64(addr, old, new)
}

// LoadInt64 is sync/atomic.LoadInt64.
func LoadInt64(addr *int64) (val int64) {
	syncpoint.Point("LoadInt64")
	return atomic.LoadInt64(addr)
}

// StoreInt64 is sync/atomic.StoreInt64.
func StoreInt64(addr *int64, val int64) {
	syncpoint.Point("StoreInt64")
	atomic.StoreInt64(addr, val)
}

// SwapInt64 is sync/atomic.SwapInt64.
func SwapInt64(addr *int64, new int64) (old int64) {
	syncpoint.Point("SwapInt64")
	return atomic.SwapInt64(addr, new)
}

// CompareAndSwapUint32 is sync/atomic.CompareAndSwapUint32.
func CompareAndSwapUint32(addr *uint32, old, new uint32) (swapped bool) {
	syncpoint.Point("CompareAndSwapUint32")
	return atomic.CompareAndSwapUint32(addr, old, new)
}

// LoadUint32 is sync/atomic.LoadUint32.
func LoadUint32(addr *uint32) (val uint32) {
	syncpoint.Point("LoadUint32")
	return atomic.LoadUint32(addr)
}

// StoreUint32 is sync/atomic.StoreUint32.
func StoreUint32(addr *uint32, val uint32) {
	syncpoint.Point("StoreUint32")
	atomic.StoreUint32(addr, val)
}

// SwapUint32 is sync/atomic.SwapUint32.
func SwapUint32(addr *uint32, new uint32) (old uint32) {
	syncpoint.Point("SwapUint32")
	return atomic.SwapUint32(addr, new)
}

// CompareAndSwapUint64 is sync/atomic.CompareAndSwapUint64.
func CompareAndSwapUint64(addr *uint64, old, new uint64) (swapped bool) {
	syncpoint.Point("CompareAndSwapUint64")
	return atomic.CompareAndSwapUint64(addr, old, new)
}

// LoadUint64 is sync/atomic.LoadUint64.
func LoadUint64(addr *uint64) (val uint64) {
	syncpoint.Point("LoadUint64")
	return atomic.LoadUint64(addr)
}

// StoreUint64 is sync/atomic.StoreUint64.
func StoreUint64(addr *uint64, val uint64) {
	syncpoint.Point("StoreUint64")
	atomic.StoreUint64(addr, val)
}

// SwapUint64 is sync/atomic.SwapUint64.
func SwapUint64(addr *uint64, new uint64) (old uint64) {
	syncpoint.Point("SwapUint64")
	return atomic.SwapUint64(addr, new)
}

// CompareAndSwapUintptr is sync/atomic.CompareAndSwapUintptr.
func CompareAndSwapUintptr(addr *uintptr, old, new uintptr) (swapped bool) {
	syncpoint.Point("CompareAndSwapUintptr")
	return atomic.CompareAndSwapUintptr(addr, old, new)
}

// LoadUintptr is sync/atomic.LoadUintptr.
func LoadUintptr(addr *uintptr) (val uintptr) {
	syncpoint.Point("LoadUintptr")
	return atomic.LoadUintptr(addr)
}

// StoreUintptr is sync/atomic.StoreUintptr.
func StoreUintptr(addr *uintptr, val uintptr) {
	syncpoint.Point("StoreUintptr")
	atomic.StoreUintptr(addr, val)
}

// SwapUintptr is sync/atomic.SwapUintptr.
func SwapUintptr(addr *uintptr, new uintptr) (old uintptr) {
	syncpoint.Point("SwapUintptr")
	return atomic.SwapUintptr(addr, new)
}

// CompareAndSwapPointer is sync/atomic.CompareAndSwapPointer.
func CompareAndSwapPointer(addr *unsafe.Pointer, old, new unsafe.Pointer) (swapped bool) {
	syncpoint.Point("CompareAndSwapPointer")
	return atomic.CompareAndSwapPointer(addr, old, new)
}

// LoadPointer is sync/atomic.LoadPointer.
func LoadPointer(addr *unsafe.Pointer) (val unsafe.Pointer) {
	syncpoint.Point("LoadPointer")
	return atomic.LoadPointer(addr)
}

// StorePointer is sync/atomic.StorePointer.
func StorePointer(addr *unsafe.Pointer, val unsafe.Pointer) {
	syncpoint.Point("StorePointer")
	atomic.StorePointer(addr, val)
}

// SwapPointer is sync/atomic.SwapPointer.
func SwapPointer(addr *unsafe.Pointer, new unsafe.Pointer) (old unsafe.Pointer) {
	syncpoint.Point("SwapPointer")
	return atomic.SwapPointer(addr, new)
}
