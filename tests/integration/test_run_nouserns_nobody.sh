#!/bin/bash
# test_run.sh with user namespaces unavailable and moat running as the
# unprivileged user nobody: the mode of a restricted distribution's
# ordinary user, where there is no PID namespace, no mount namespace and no
# cgroup, and RLIMIT_NPROC counts the user's processes (a fork bomb must
# still be gone after --timeout, see test_run.sh).
exec env MOAT_TEST_NOUSERNS=1 MOAT_TEST_AS=nobody bash "$(dirname "$0")/test_run.sh" "$@"
