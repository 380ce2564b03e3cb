#!/bin/bash
# The integration tests of `moat run` (test_run.sh) with user namespaces
# unavailable, as on distributions that restrict them: for real inside a
# user namespace whose user.max_user_namespaces is 0 (nothing on the host
# changes), or, where that cannot be arranged, faked with
# MOAT_FAKE_NO_USERNS=1 (read only by src/sandbox/probe.c). moat must refuse
# by default and, with --fallback warn, still confine with Landlock and
# seccomp.
exec env MOAT_TEST_NOUSERNS=1 bash "$(dirname "$0")/test_run.sh" "$@"
