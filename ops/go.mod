// Module ops is the operator's view of the lab-10 engine (labctl engine):
// it reads a namespace of the reference engine's Redis layout and serves
// its numbers to Prometheus. It is a module of its own, as tools/ is, so
// that the Prometheus client never enters the kit's go.mod: a student's
// build and labctl's do not grow.
module github.com/fourth-outcome/labkit/ops

go 1.26.0

replace github.com/fourth-outcome/labkit => ../

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/fourth-outcome/labkit v0.0.0-00010101000000-000000000000
	github.com/google/go-cmp v0.7.0
	github.com/hibiken/asynq v0.26.0
	github.com/prometheus/client_golang v1.25.0
	github.com/redis/go-redis/v9 v9.23.0
	golang.org/x/term v0.48.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
