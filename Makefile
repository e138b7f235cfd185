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

# The Python environments (minutes of pip on a fresh machine) install while Maven builds and tests;
# pytest starts once both are done. Either failing fails the target, with pip's output shown.
# Maven runs two modules at a time (-T 2): namenode, storage server and gateway depend only on the
# protocol module and their tests wait on ZooKeeper, fsync and sockets more than on the CPU; the
# local cluster's integration tests (timed failovers among them) still run alone, after them.
test:
	./scripts/install-deps --system
	@./scripts/install-deps --python > .python-deps.log 2>&1 & pip=$$!; \
	$(MVN) -T 2 verify; mvn=$$?; \
	if ! wait $$pip; then cat .python-deps.log; echo "make test: the Python environments did not install"; exit 1; fi; \
	[ $$mvn -eq 0 ] || exit $$mvn; \
	echo ".venv/bin/python -m pytest -ra --durations=12 cinder-driver/tests"; \
	.venv/bin/python -m pytest -ra --durations=12 cinder-driver/tests

clean:
	$(MVN) -q clean
	rm -rf .venv .venv-glance
