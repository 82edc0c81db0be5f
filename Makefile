# The kit's developer entry points. See README.md.
GO      ?= go
RACE    ?= -race
LAB     ?=
COUNT   ?= 50
VERIFY_FLAGS ?=

# Every package with tests of its own: everything but the starters, which
# fail by design (labctl verify proves they fail for the right reason, and
# applies the catalogued mistakes, which are patches, not packages).
PKGS = $(shell $(GO) list ./... | grep -v -e '/labs/')
SOLUTIONS = $(sort $(wildcard solutions/[0-9]*))

.PHONY: test quick vet unit verify fixtures mutate check stress bench docs e2e class starters rubrics help

help:
	@echo "make test    unit tests of every package, then labctl verify (what CI runs)"
	@echo "make quick   the unit tests with -short and without -race: a kit developer's loop"
	@echo "make class   grade the hostile class of submissions over every lab (minutes; CI runs it)"
	@echo "make check   LAB=1: check your lab, as go run ./cmd/labctl check does"
	@echo "make stress  each solution's suite COUNT=$(COUNT) times with -race"
	@echo "make bench   speed figures (suite time, labctl overhead, Redis throughput, engine vs asynq)"
	@echo "make docs    render docs/ to HTML in .labkit/docs"
	@echo "make e2e     the docs site in headless Chromium (installs Debian's chromium when missing)"
	@echo "make mutate  mutation-test every reference solution (gremlins, pinned in tools/go.mod)"
	@echo "make fixtures  run each suite's independent wrong and correct programs"
	@echo "make starters  copy labs/*'s starters into course/starters (after changing a starter)"
	@echo "make rubrics   write course/rubrics from the suites' rubrics (after changing a case)"

test: vet unit verify

# quick skips the tests that run whole suites (testing.Short) and the race
# detector: minutes, not the quarter hour of make test.
quick:
	$(GO) test -short -count=1 $(PKGS)

vet:
	$(GO) vet ./...
	# ops/ is a module of its own (labctl engine's view and its Prometheus
	# client), outside ./...: vet it there.
	cd ops && $(GO) vet ./...
	# labctl check must build where students work: macOS and Windows too.
	GOOS=darwin $(GO) vet ./cmd/labctl/ ./internal/... ./grader/
	GOOS=windows $(GO) vet ./cmd/labctl/ ./internal/... ./grader/

unit:
	$(GO) test $(RACE) -count=1 -timeout 60m $(PKGS)

# VERIFY_FLAGS adds to make test's verify: CI sets --fixtures, so that one
# pass over the catalogue runs the fixtures too, instead of make fixtures
# running the whole catalogue a second time.
verify:
	$(GO) run ./cmd/labctl verify $(VERIFY_FLAGS)

fixtures:
	$(GO) run ./cmd/labctl verify --fixtures

mutate:
	$(GO) run ./cmd/labctl mutate

check:
	$(GO) run ./cmd/labctl check $(LAB)

stress:
	@set -e; for s in $(SOLUTIONS); do \
		echo "== $$s: $(COUNT) runs with -race"; \
		$(GO) test -race -count=$(COUNT) ./$$s/; \
	done

bench:
	bash .ci/bench.sh

class:
	bash .ci/class.sh

docs:
	$(GO) run ./cmd/labctl docs

e2e:
	bash .ci/e2e.sh

# The kit's own tests grade the pristine starters in course/starters, never
# labs/, where a learner's work replaces them. Run after changing a starter.
starters:
	@set -e; rm -rf course/starters; for f in $$(git ls-files 'labs/*.go' | grep -v '_test\.go$$'); do \
		d=course/starters/$$(basename $$(dirname $$f)); mkdir -p $$d; cp $$f $$d/$$(basename $$f).txt; \
	done

# labctl reads each lab's rubric from course/rubrics, so that it links no
# suite. Run after changing a suite's cases (TestRubricsMatchTheSuites says
# when).
rubrics:
	$(GO) test -count=1 -run TestRubricsMatchTheSuites ./course/ -update-rubrics
