# The two commands: `make up` brings up a local cluster and serves a demo volume over iSCSI;
# `make test` runs the whole suite. Both install what a fresh Debian 12 machine lacks first.
DATA ?= var
ARGS ?=
MVN ?= mvn -B -ntp
JAR := local-cluster/target/fastblock-local-cluster.jar

.PHONY: up test build deps clean

deps:
	./scripts/install-deps

build: deps
	$(MVN) -q -DskipTests package

up: build
	exec java -jar $(JAR) --data-dir=$(DATA) $(ARGS)

test: deps
	$(MVN) verify
	.venv/bin/python -m pytest -ra --durations=12 cinder-driver/tests

clean:
	$(MVN) -q clean
	rm -rf .venv .venv-glance
