/* Fuzz the redactor: no crash, no out-of-bounds read, and redaction is
 * idempotent (redacting the output again changes nothing). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_buf once = MOAT_BUF_INIT, twice = MOAT_BUF_INIT;

	if (moat_redact((const char *)data, size, &once) < 0)
		abort();
	if (moat_redact(once.data, once.len, &twice) < 0)
		abort();
	if (once.len != twice.len || memcmp(once.data, twice.data, once.len) != 0) {
		fprintf(stderr, "not idempotent:\n once: %s\ntwice: %s\n", once.data, twice.data);
		abort();
	}
	moat_buf_release(&once);
	moat_buf_release(&twice);
	return 0;
}
