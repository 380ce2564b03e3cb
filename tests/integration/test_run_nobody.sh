#!/bin/bash
# The integration tests of `moat run` (test_run.sh), run as the unprivileged
# user nobody: everything must work without root (the user namespace gives
# the mount, PID and network namespaces). Needs root to switch users; skips
# otherwise (fails under MOAT_MUST_WORK=1).
exec env MOAT_TEST_AS=nobody bash "$(dirname "$0")/test_run.sh" "$@"
