/* SPDX-License-Identifier: BSD-3-Clause */
/* log.h -- internal logging macros of the core and the providers */

#ifndef RPMA_LOG_H
#define RPMA_LOG_H

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "librpma.h"

/*
 * rpma_log_emit -- hand one message to the installed log function if level
 * passes the main threshold.  errno is preserved.  Implemented in log.c.
 */
void rpma_log_emit(enum rpma_log_level level, const char *file, int line, const char *func,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* rpma_log_emitv -- rpma_log_emit() with the arguments in ap (one formatting, ap consumed) */
void rpma_log_emitv(enum rpma_log_level level, const char *file, int line, const char *func,
		    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* rpma_log_enabled -- would a message of this level be emitted? (cheap) */
int rpma_log_enabled(enum rpma_log_level level);

#define RPMA_LOG(level, ...) rpma_log_emit(level, __FILE__, __LINE__, __func__, __VA_ARGS__)

#define RPMA_LOG_FATAL(...)   RPMA_LOG(RPMA_LOG_LEVEL_FATAL, __VA_ARGS__)
#define RPMA_LOG_ERROR(...)   RPMA_LOG(RPMA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define RPMA_LOG_WARNING(...) RPMA_LOG(RPMA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define RPMA_LOG_NOTICE(...)  RPMA_LOG(RPMA_LOG_LEVEL_NOTICE, __VA_ARGS__)
#define RPMA_LOG_INFO(...)    RPMA_LOG(RPMA_LOG_LEVEL_INFO, __VA_ARGS__)
#define RPMA_LOG_DEBUG(...)   RPMA_LOG(RPMA_LOG_LEVEL_DEBUG, __VA_ARGS__)

/* an error with the text of an errno value appended: "<message>: <strerror(e)>" */
#define RPMA_LOG_ERROR_WITH_ERRNO(e, fmt, ...) \
	RPMA_LOG_ERROR(fmt ": %s", ##__VA_ARGS__, strerror(e))

#endif /* RPMA_LOG_H */
