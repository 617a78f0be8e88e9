/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c -- the log function, the thresholds and RPMA_LOG_LEVEL */

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "log_default.h"

/* the longest message handed to the log function (longer ones are truncated) */
#define RPMA_LOG_MSG_MAX 1024

/* the installed log function (never NULL while the library is loaded) */
static _Atomic(rpma_log_function *) rpma_log_fn = rpma_log_default_function;

/* the thresholds: RPMA_LOG_THRESHOLD and RPMA_LOG_THRESHOLD_AUX */
static _Atomic int rpma_log_thresholds[RPMA_LOG_THRESHOLD_MAX] = {
	RPMA_LOG_LEVEL_WARNING, /* main: like upstream's release builds */
	RPMA_LOG_LEVEL_WARNING, /* aux: warnings and worse reach stderr */
};

/* names accepted in RPMA_LOG_LEVEL, indexed by level + 1 */
static const char *const rpma_log_level_names[] = {
	"disabled", "fatal", "error", "warning", "notice", "info", "debug",
};

/* rpma_log_level_valid -- is level a value of enum rpma_log_level? */
static int rpma_log_level_valid(int level)
{
	return level >= RPMA_LOG_DISABLED && level <= RPMA_LOG_LEVEL_DEBUG;
}

/* rpma_log_threshold_get -- the current value of a threshold */
enum rpma_log_level rpma_log_threshold_get(enum rpma_log_threshold threshold)
{
	return (enum rpma_log_level)atomic_load(&rpma_log_thresholds[threshold]);
}

/* rpma_log_enabled -- would a message of this level reach the log function? */
int rpma_log_enabled(enum rpma_log_level level)
{
	return level != RPMA_LOG_DISABLED &&
	       (int)level <= atomic_load(&rpma_log_thresholds[RPMA_LOG_THRESHOLD]) &&
	       atomic_load(&rpma_log_fn) != NULL;
}

/* rpma_log_emitv -- format one message (arguments in ap) and hand it to the log function */
void rpma_log_emitv(enum rpma_log_level level, const char *file, int line, const char *func,
		    const char *fmt, va_list ap)
{
	if (!rpma_log_enabled(level))
		return;

	rpma_log_function *fn = atomic_load(&rpma_log_fn);
	if (fn == NULL)
		return;

	int saved_errno = errno;
	char msg[RPMA_LOG_MSG_MAX];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		msg[0] = '\0';

	fn(level, file, line, func, "%s", msg);
	errno = saved_errno;
}

/* rpma_log_emit -- format one message and hand it to the log function */
void rpma_log_emit(enum rpma_log_level level, const char *file, int line, const char *func,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rpma_log_emitv(level, file, line, func, fmt, ap);
	va_end(ap);
}

/* rpma_log_set_threshold -- change the main or the auxiliary threshold */
int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
{
	if (threshold != RPMA_LOG_THRESHOLD && threshold != RPMA_LOG_THRESHOLD_AUX) {
		RPMA_LOG_ERROR("invalid threshold: %d", (int)threshold);
		return RPMA_E_INVAL;
	}
	if (!rpma_log_level_valid(level)) {
		RPMA_LOG_ERROR("invalid level: %d", (int)level);
		return RPMA_E_INVAL;
	}

	atomic_store(&rpma_log_thresholds[threshold], (int)level);
	return 0;
}

/* rpma_log_get_threshold -- read the main or the auxiliary threshold */
int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level)
{
	if (threshold != RPMA_LOG_THRESHOLD && threshold != RPMA_LOG_THRESHOLD_AUX) {
		RPMA_LOG_ERROR("invalid threshold: %d", (int)threshold);
		return RPMA_E_INVAL;
	}
	if (level == NULL) {
		RPMA_LOG_ERROR("level == NULL");
		return RPMA_E_INVAL;
	}

	*level = rpma_log_threshold_get(threshold);
	return 0;
}

/* rpma_log_set_function -- install a log function; NULL restores the default one */
int rpma_log_set_function(rpma_log_function *log_function)
{
	if (log_function == RPMA_LOG_USE_DEFAULT_FUNCTION)
		log_function = rpma_log_default_function;

	atomic_store(&rpma_log_fn, log_function);
	return 0;
}

/* rpma_log_parse_level -- a level from a name or a number; -2 when not recognised */
static int rpma_log_parse_level(const char *value)
{
	for (size_t i = 0; i < sizeof(rpma_log_level_names) / sizeof(rpma_log_level_names[0]);
	     i++) {
		if (strcasecmp(value, rpma_log_level_names[i]) == 0)
			return (int)i - 1;
	}

	char *end = NULL;
	errno = 0;
	long num = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || !rpma_log_level_valid((int)num) ||
	    num != (int)num)
		return -2;

	return (int)num;
}

/* rpma_log_apply_env -- RPMA_LOG_LEVEL: the stderr threshold, raising the main one if needed */
static void rpma_log_apply_env(void)
{
	const char *value = getenv("RPMA_LOG_LEVEL");
	if (value == NULL || *value == '\0')
		return;

	int level = rpma_log_parse_level(value);
	if (level == -2) {
		RPMA_LOG_WARNING("RPMA_LOG_LEVEL=\"%s\" ignored: use disabled, fatal, error, "
				 "warning, notice, info, debug or -1..5",
				 value);
		return;
	}

	atomic_store(&rpma_log_thresholds[RPMA_LOG_THRESHOLD_AUX], level);
	if (level > atomic_load(&rpma_log_thresholds[RPMA_LOG_THRESHOLD]))
		atomic_store(&rpma_log_thresholds[RPMA_LOG_THRESHOLD], level);
}

/* rpma_log_init -- library constructor: open syslog and read RPMA_LOG_LEVEL */
__attribute__((constructor)) static void rpma_log_init(void)
{
	rpma_log_default_open();
	rpma_log_apply_env();
}

/* rpma_log_fini -- library destructor: close syslog */
__attribute__((destructor)) static void rpma_log_fini(void)
{
	rpma_log_default_close();
}
