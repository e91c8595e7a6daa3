// SPDX-License-Identifier: GPL-2.0
/*
 * Instantiates the tracepoints declared in pto_trace.h
 */
#define CREATE_TRACE_POINTS
#include "pto_trace.h"
