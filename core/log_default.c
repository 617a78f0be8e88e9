/* SPDX-License-Identifier: BSD-3-Clause */
/* log_default.c -- the default log function: syslog plus a copy on stderr */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log_default.h"

/* rpma_log_level_tag -- the tag printed for a level */
static const char *rpma_log_level_tag(enum rpma_log_level level)
{
	switch (level) {
	case RPMA_LOG_LEVEL_FATAL:
		return "FATAL";
	case RPMA_LOG_LEVEL_ERROR:
		return "ERROR";
	case RPMA_LOG_LEVEL_WARNING:
		return "WARNING";
	case RPMA_LOG_LEVEL_NOTICE:
		return "NOTICE";
	case RPMA_LOG_LEVEL_INFO:
		return "INFO";
	case RPMA_LOG_LEVEL_DEBUG:
		return "DEBUG";
	default:
		return "?";
	}
}

/* rpma_log_level_syslog -- the syslog priority of a level */
static int rpma_log_level_syslog(enum rpma_log_level level)
{
	switch (level) {
	case RPMA_LOG_LEVEL_FATAL:
		return LOG_CRIT;
	case RPMA_LOG_LEVEL_ERROR:
		return LOG_ERR;
	case RPMA_LOG_LEVEL_WARNING:
		return LOG_WARNING;
	case RPMA_LOG_LEVEL_NOTICE:
		return LOG_NOTICE;
	case RPMA_LOG_LEVEL_INFO:
		return LOG_INFO;
	default:
		return LOG_DEBUG;
	}
}

/* rpma_log_basename -- the last component of a source path */
static const char *rpma_log_basename(const char *path)
{
	if (path == NULL)
		return "?";
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* rpma_log_default_open -- open the syslog connection under the ident "rpma" */
void rpma_log_default_open(void)
{
	openlog("rpma", LOG_PID, LOG_LOCAL7);
}

/* rpma_log_default_close -- close the syslog connection */
void rpma_log_default_close(void)
{
	closelog();
}

/* rpma_log_default_function -- log to syslog and, up to the AUX threshold, to stderr */
void rpma_log_default_function(enum rpma_log_level level, const char *file_name, const int line_no,
			       const char *function_name, const char *message_format, ...)
{
	if (level == RPMA_LOG_DISABLED || message_format == NULL)
		return;

	char msg[1024];
	va_list ap;
	va_start(ap, message_format);
	int n = vsnprintf(msg, sizeof(msg), message_format, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = strlen(msg);
	while (len > 0 && msg[len - 1] == '\n')
		msg[--len] = '\0';

	const char *file = rpma_log_basename(file_name);
	const char *func = function_name ? function_name : "?";
	const char *tag = rpma_log_level_tag(level);

	syslog(rpma_log_level_syslog(level), "*%s* %s:%d %s: %s", tag, file, line_no, func, msg);

	if ((int)level > (int)rpma_log_threshold_get(RPMA_LOG_THRESHOLD_AUX))
		return;

	char stamp[64] = "";
	struct timeval tv;
	struct tm tm;
	if (gettimeofday(&tv, NULL) == 0 && localtime_r(&tv.tv_sec, &tm) != NULL) {
		size_t w = strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
		snprintf(stamp + w, sizeof(stamp) - w, ".%06ld", (long)tv.tv_usec);
	}

	fprintf(stderr, "%s [%ld] *%s* %s:%d %s: %s\n", stamp, (long)syscall(SYS_gettid), tag, file,
		line_no, func, msg);
}
