/* SPDX-License-Identifier: BSD-3-Clause */
/* log_default.h -- the default log function and the thresholds it reads (internal) */

#ifndef RPMA_LOG_DEFAULT_H
#define RPMA_LOG_DEFAULT_H

#include "librpma.h"

/*
 * rpma_log_default_function -- the log function installed unless the
 * application sets its own: every message goes to syslog (ident "rpma"),
 * and messages up to the RPMA_LOG_THRESHOLD_AUX level are copied to stderr
 */
void rpma_log_default_function(enum rpma_log_level level, const char *file_name, const int line_no,
			       const char *function_name, const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));

/* rpma_log_default_open -- open the syslog connection (library constructor) */
void rpma_log_default_open(void);

/* rpma_log_default_close -- close the syslog connection (library destructor) */
void rpma_log_default_close(void);

/* rpma_log_threshold_get -- the current value of a threshold (no argument check) */
enum rpma_log_level rpma_log_threshold_get(enum rpma_log_threshold threshold);

#endif /* RPMA_LOG_DEFAULT_H */
