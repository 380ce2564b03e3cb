#!/bin/bash
# The integration tests of `moat run` (test_run.sh) as root where user
# namespaces are disabled (inside a user namespace whose
# user.max_user_namespaces is 0): root makes the mount, PID, IPC and
# network namespaces without a user namespace, and every check of the full
# mode must hold.
exec env MOAT_TEST_ROOTNS=1 bash "$(dirname "$0")/test_run.sh" "$@"
