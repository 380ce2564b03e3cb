/* moat: a sandbox between AI agents and the machine. Umbrella header. */
#ifndef MOAT_H
#define MOAT_H

#define MOAT_VERSION "0.1.0"

#include <moat/error.h>
#include <moat/policy.h>
#include <moat/session.h>

#endif
