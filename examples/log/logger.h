/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * logger.h -- a custom logging function for librpma, used by both sides of
 * the log example
 *
 * rpma_log_set_function() replaces the library's default (syslog plus a
 * copy to stderr) with any function of type rpma_log_function.  The library
 * calls it only for messages at or below the main threshold
 * (RPMA_LOG_THRESHOLD); the second threshold (RPMA_LOG_THRESHOLD_AUX) only
 * matters to the default function.  The function may be called from any
 * thread the library runs, so the counters are atomic.
 */

#ifndef LOG_LOGGER_H
#define LOG_LOGGER_H 1

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"

#define LEVELS (RPMA_LOG_LEVEL_DEBUG + 1)

static unsigned Count[LEVELS]; /* messages received per level */
static unsigned Above;	       /* messages above the threshold in force (must stay 0) */
static int Threshold = RPMA_LOG_LEVEL_DEBUG; /* our copy of the main threshold */

/* level_name -- a short name of a log level */
static inline const char *level_name(enum rpma_log_level level)
{
	static const char *const names[LEVELS] = {"fatal",  "error", "warning",
						  "notice", "info",  "debug"};
	return level >= 0 && level < LEVELS ? names[level] : "?";
}

/* example_log -- the custom function: print one line to stdout and count it */
static void example_log(enum rpma_log_level level, const char *file_name, const int line_no,
			const char *function_name, const char *message_format, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(msg, sizeof(msg), message_format, ap);
	va_end(ap);
	size_t len = strlen(msg);
	if (len && msg[len - 1] == '\n')
		msg[len - 1] = '\0';

	if (level >= 0 && level < LEVELS)
		__atomic_fetch_add(&Count[level], 1, __ATOMIC_RELAXED);
	if ((int)level > __atomic_load_n(&Threshold, __ATOMIC_RELAXED))
		__atomic_fetch_add(&Above, 1, __ATOMIC_RELAXED);

	const char *base = file_name ? strrchr(file_name, '/') : NULL;
	printf("[librpma %s] %s:%d %s(): %s\n", level_name(level),
	       base ? base + 1 : (file_name ? file_name : "?"), line_no,
	       function_name ? function_name : "?", msg);
	fflush(stdout);
}

/* set_threshold -- change the main threshold and read it back */
static inline int set_threshold(enum rpma_log_level level)
{
	enum rpma_log_level got = RPMA_LOG_DISABLED;
	/*
	 * Keep our own copy (what example_log() judges by) never stricter than
	 * the library's: loosen ours first, tighten it last.
	 */
	bool stricter = (int)level < __atomic_load_n(&Threshold, __ATOMIC_RELAXED);
	if (!stricter)
		__atomic_store_n(&Threshold, (int)level, __ATOMIC_RELAXED);
	int ret = rpma_log_set_threshold(RPMA_LOG_THRESHOLD, level);
	if (ret == 0 && stricter)
		__atomic_store_n(&Threshold, (int)level, __ATOMIC_RELAXED);
	if (ret == 0)
		ret = rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &got);
	if (ret) {
		ex_fail("rpma_log_set/get_threshold", ret);
		return ret;
	}
	if (got != level) {
		ex_msg("the threshold reads back as %d, set %d", got, level);
		return EX_E_FAIL;
	}
	return 0;
}

/* logger_install -- route the library's messages to example_log() at the NOTICE level */
static inline int logger_install(void)
{
	/* the default function's stderr copy will not matter any more: switch it off */
	int ret = rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	if (ret) {
		ex_fail("rpma_log_set_threshold(AUX)", ret);
		return ret;
	}
	/* the threshold first, so that the function never sees anything above it */
	ret = set_threshold(RPMA_LOG_LEVEL_NOTICE);
	if (ret)
		return ret;
	ret = rpma_log_set_function(example_log);
	if (ret)
		ex_fail("rpma_log_set_function", ret);
	return ret;
}

/* notices -- how many messages at NOTICE or more important arrived so far */
static inline unsigned notices(void)
{
	unsigned n = 0;
	for (int l = RPMA_LOG_LEVEL_FATAL; l <= RPMA_LOG_LEVEL_NOTICE; l++)
		n += __atomic_load_n(&Count[l], __ATOMIC_RELAXED);
	return n;
}

/*
 * logger_check -- the verdict: messages arrived while the threshold was
 * NOTICE (before), none arrived after it was raised to WARNING except
 * warnings or worse (after), and none ever above the threshold in force
 */
static inline int logger_check(unsigned before, unsigned after)
{
	unsigned above = __atomic_load_n(&Above, __ATOMIC_RELAXED);
	unsigned quiet = __atomic_load_n(&Count[RPMA_LOG_LEVEL_NOTICE], __ATOMIC_RELAXED);
	printf("messages: %u fatal, %u error, %u warning, %u notice, %u info, %u debug\n", Count[0],
	       Count[1], Count[2], Count[3], Count[4], Count[5]);
	if (before == 0) {
		ex_msg("no message reached the custom function at the NOTICE threshold");
		return EX_E_FAIL;
	}
	if (above) {
		ex_msg("%u messages above the threshold reached the custom function", above);
		return EX_E_FAIL;
	}
	if (quiet != after) {
		ex_msg("notices arrived after the threshold was raised to WARNING");
		return EX_E_FAIL;
	}
	return 0;
}

/* logger_restore -- back to the default function and thresholds */
static inline void logger_restore(void)
{
	(void)rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING);
}

#endif /* LOG_LOGGER_H */
