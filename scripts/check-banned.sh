#!/bin/bash
# Refuse functions that are easy to misuse (as curl's checksrc does).
# snprintf/strlcpy-style helpers exist for all of them.
cd "$(dirname "$0")/.." || exit 1
banned='\b(strcpy|strcat|sprintf|vsprintf|gets|system|popen|atoi|atol|atoll|strtok|tmpnam|mktemp|alloca|getwd|asctime|ctime|gmtime|localtime|strncpy|setjmp|longjmp)\s*\('
hits=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 2>/dev/null | xargs -r grep -nE "$banned" | grep -v 'banned-ok')
if [ -n "$hits" ]; then
	echo "banned functions used (see scripts/check-banned.sh):"
	echo "$hits"
	exit 1
fi
# getenv only at the edges; the core takes an injected lookup
hits=$(git ls-files 'src/core/*.c' 'src/base/*.c' | xargs -r grep -nE '\bgetenv\s*\(' | grep -v 'banned-ok')
if [ -n "$hits" ]; then
	echo "getenv in the pure core (inject a lookup instead):"
	echo "$hits"
	exit 1
fi
exit 0
