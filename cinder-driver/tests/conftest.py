import os

# Cinder's test base monkey-patches the whole process with eventlet unless told not to; the other
# tests in this run (real sockets, threads, subprocesses) must keep plain threads.
os.environ.setdefault("OS_CINDER_DISABLE_EVENTLET_PATCHING", "1")

try:
    from cinder import monkey_patch
except ImportError:  # the driver's tests need Cinder; the client and CLI tests do not
    pass
else:
    # Choose the threading backend before any Cinder module picks eventlet as its default.
    monkey_patch.patch()
