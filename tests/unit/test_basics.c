/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_basics.c -- error and event strings, logging, and the configuration
 * objects (peer, connection and SRQ settings, the peer-config descriptor)
 */

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
/* after criterion.h: redirect.h first would break the assertion macros (Criterion 2.4) */
#include <criterion/redirect.h>

extern char **environ;

/* ================================================================ err_2str */

UNIT_SUITE(err_2str);

Test(err_2str, every_code)
{
	cr_assert_str_eq(rpma_err_2str(0), "Success");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_NOSUPP), "Not supported");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_PROVIDER), "Provider error occurred");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_NOMEM), "Out of memory");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_INVAL), "Invalid argument");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_NO_COMPLETION), "No next completion available");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_NO_EVENT), "No next event available");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_AGAIN), "Temporary error, try again");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_SHARED_CHANNEL), "Completion channel is shared");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_NOT_SHARED_CHNL), "Completion channel is not shared");
	cr_assert_str_eq(rpma_err_2str(RPMA_E_UNKNOWN), "Unknown error");
}

Test(err_2str, unknown_codes)
{
	const int codes[] = {1, -1, -100010, -99999, 100004, -2147483647 - 1, 2147483647};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		cr_assert_str_eq(rpma_err_2str(codes[i]), "Unknown error", "code %d", codes[i]);
}

/* ======================================================= conn_event_2str */

UNIT_SUITE(conn_event_2str);

Test(conn_event_2str, every_event)
{
	cr_assert_str_eq(rpma_utils_conn_event_2str(RPMA_CONN_UNDEFINED),
			 "Undefined connection event");
	cr_assert_str_eq(rpma_utils_conn_event_2str(RPMA_CONN_ESTABLISHED),
			 "Connection established");
	cr_assert_str_eq(rpma_utils_conn_event_2str(RPMA_CONN_CLOSED), "Connection closed");
	cr_assert_str_eq(rpma_utils_conn_event_2str(RPMA_CONN_LOST), "Connection lost");
	cr_assert_str_eq(rpma_utils_conn_event_2str(RPMA_CONN_REJECTED), "Connection rejected");
	cr_assert_str_eq(rpma_utils_conn_event_2str(RPMA_CONN_UNREACHABLE),
			 "Connection unreachable");
}

Test(conn_event_2str, unknown_events)
{
	const int events[] = {5, 6, -2, 100, -100};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		cr_assert_str_eq(rpma_utils_conn_event_2str((enum rpma_conn_event)events[i]),
				 "Unsupported connection event", "event %d", events[i]);
}

/* ========================================================= log_threshold */

UNIT_SUITE(log_threshold);

Test(log_threshold, defaults)
{
	enum rpma_log_level level = (enum rpma_log_level)42;
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level), 0);
	cr_assert_eq(level, RPMA_LOG_LEVEL_WARNING);
	/* deliberate difference 7: stderr gets warnings and worse by default */
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level), 0);
	cr_assert_eq(level, RPMA_LOG_LEVEL_WARNING);
}

Test(log_threshold, get_threshold_out_of_range)
{
	enum rpma_log_level level = (enum rpma_log_level)42;
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_MAX, &level), RPMA_E_INVAL);
	cr_assert_eq(rpma_log_get_threshold((enum rpma_log_threshold) - 1, &level), RPMA_E_INVAL);
	cr_assert_eq(rpma_log_get_threshold((enum rpma_log_threshold)7, &level), RPMA_E_INVAL);
	cr_assert_eq((int)level, 42);
}

Test(log_threshold, get_level_NULL)
{
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, NULL), RPMA_E_INVAL);
}

Test(log_threshold, set_invalid)
{
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_ERROR),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_log_set_threshold((enum rpma_log_threshold) - 1, RPMA_LOG_LEVEL_ERROR),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level) - 2),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
					    (enum rpma_log_level)(RPMA_LOG_LEVEL_DEBUG + 1)),
		     RPMA_E_INVAL);
	/* nothing changed */
	enum rpma_log_level level;
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level), 0);
	cr_assert_eq(level, RPMA_LOG_LEVEL_WARNING);
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level), 0);
	cr_assert_eq(level, RPMA_LOG_LEVEL_WARNING);
}

Test(log_threshold, set_get_round_trip)
{
	for (int t = RPMA_LOG_THRESHOLD; t <= RPMA_LOG_THRESHOLD_AUX; t++) {
		for (int l = RPMA_LOG_DISABLED; l <= RPMA_LOG_LEVEL_DEBUG; l++) {
			enum rpma_log_level level = (enum rpma_log_level)42;
			cr_assert_eq(rpma_log_set_threshold((enum rpma_log_threshold)t,
							    (enum rpma_log_level)l),
				     0);
			cr_assert_eq(rpma_log_get_threshold((enum rpma_log_threshold)t, &level), 0);
			cr_assert_eq((int)level, l, "threshold %d level %d", t, l);
		}
	}
}

Test(log_threshold, main_threshold_filters)
{
	/* an invalid call logs one error at the default threshold */
	cr_assert_eq(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 1);

	/* at FATAL the error is not even handed to the function */
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_FATAL), 0);
	cr_assert_eq(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 1);

	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED), 0);
	cr_assert_eq(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(unit_log_total(), 1);
}

/* ========================================================== log_function */

static int got_level = -5;
static char got_file[256];
static int got_line;
static char got_func[128];
static char got_msg[512];
static int got_calls;

/* record_log -- a custom log function keeping every argument */
static void record_log(enum rpma_log_level level, const char *file_name, const int line_no,
		       const char *function_name, const char *message_format, ...)
{
	got_calls++;
	got_level = level;
	snprintf(got_file, sizeof(got_file), "%s", file_name ? file_name : "(null)");
	got_line = line_no;
	snprintf(got_func, sizeof(got_func), "%s", function_name ? function_name : "(null)");
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(got_msg, sizeof(got_msg), message_format, ap);
	va_end(ap);
}

UNIT_SUITE(log_function);

Test(log_function, custom_function_gets_everything)
{
	cr_assert_eq(rpma_log_set_function(record_log), 0);
	cr_assert_eq(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(got_calls, 1);
	cr_assert_eq(got_level, RPMA_LOG_LEVEL_ERROR);
	cr_assert(strstr(got_file, ".c") != NULL, "file name \"%s\"", got_file);
	cr_assert_gt(got_line, 0);
	cr_assert_str_eq(got_func, "rpma_conn_cfg_new");
	cr_assert_gt(strlen(got_msg), 0);
}

Test(log_function, reset_to_default)
{
	cr_assert_eq(rpma_log_set_function(record_log), 0);
	cr_assert_eq(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	cr_assert_eq(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(got_calls, 0);
}

/* read_all -- the whole content of a stream */
static void read_all(FILE *f, char *buf, size_t size)
{
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
}

/* the default function writes to stderr: the fixture installs it and redirects stderr */
static void default_log_init(void)
{
	unit_init();
	rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	cr_redirect_stderr();
}

TestSuite(log_default, .init = default_log_init, .fini = unit_fini);

Test(log_default, error_reaches_stderr)
{
	cr_assert_eq(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
	fflush(stderr);
	char buf[4096];
	read_all(cr_get_redirected_stderr(), buf, sizeof(buf));
	cr_assert(strstr(buf, "rpma_srq_cfg_new") != NULL, "stderr: \"%s\"", buf);
	cr_assert(strchr(buf, '\n') != NULL, "one line per message: \"%s\"", buf);
}

Test(log_default, aux_disabled_keeps_stderr_quiet)
{
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	cr_assert_eq(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
	fflush(stderr);
	char buf[4096];
	read_all(cr_get_redirected_stderr(), buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
}

Test(log_default, aux_below_level_keeps_stderr_quiet)
{
	/* an error passes the main threshold but not an aux threshold of FATAL */
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL), 0);
	cr_assert_eq(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
	fflush(stderr);
	char buf[4096];
	read_all(cr_get_redirected_stderr(), buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
}

/* ============================================================== log_env */

/* run_helper -- run log_env_helper with RPMA_LOG_LEVEL=value (NULL: unset); its stdout/stderr */
static void run_helper(const char *value, const char *arg, char *out, size_t out_size, char *err,
		       size_t err_size)
{
	const char *top = getenv("top_builddir");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/unit/log_env_helper", top ? top : ".");

	char env_var[256];
	char *envp[4];
	int n = 0;
	if (value) {
		snprintf(env_var, sizeof(env_var), "RPMA_LOG_LEVEL=%s", value);
		envp[n++] = env_var;
	}
	envp[n] = NULL;

	char out_path[] = "/tmp/unit-log-env-out-XXXXXX";
	char err_path[] = "/tmp/unit-log-env-err-XXXXXX";
	int out_fd = mkstemp(out_path);
	int err_fd = mkstemp(err_path);
	cr_assert(out_fd >= 0 && err_fd >= 0);

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	char *argv[] = {path, (char *)arg, NULL};
	pid_t pid;
	int ret = posix_spawn(&pid, path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(ret, 0, "cannot run %s: %s", path, strerror(ret));
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "helper failed: %#x", status);

	FILE *f = fdopen(out_fd, "r");
	rewind(f);
	read_all(f, out, out_size);
	fclose(f);
	f = fdopen(err_fd, "r");
	rewind(f);
	read_all(f, err, err_size);
	fclose(f);
	unlink(out_path);
	unlink(err_path);
}

/* expect_levels -- RPMA_LOG_LEVEL=value gives these thresholds */
static void expect_levels(const char *value, int main_level, int aux_level)
{
	char out[256], err[4096], want[64];
	run_helper(value, NULL, out, sizeof(out), err, sizeof(err));
	snprintf(want, sizeof(want), "main=%d aux=%d\n", main_level, aux_level);
	cr_assert_str_eq(out, want, "RPMA_LOG_LEVEL=%s", value ? value : "(unset)");
}

UNIT_SUITE(log_env);

Test(log_env, unset)
{
	expect_levels(NULL, RPMA_LOG_LEVEL_WARNING, RPMA_LOG_LEVEL_WARNING);
	expect_levels("", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_LEVEL_WARNING);
}

Test(log_env, names_raise_main_threshold)
{
	expect_levels("debug", RPMA_LOG_LEVEL_DEBUG, RPMA_LOG_LEVEL_DEBUG);
	expect_levels("info", RPMA_LOG_LEVEL_INFO, RPMA_LOG_LEVEL_INFO);
	expect_levels("notice", RPMA_LOG_LEVEL_NOTICE, RPMA_LOG_LEVEL_NOTICE);
	expect_levels("warning", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_LEVEL_WARNING);
}

Test(log_env, lower_levels_keep_main_threshold)
{
	expect_levels("error", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_LEVEL_ERROR);
	expect_levels("fatal", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_LEVEL_FATAL);
	expect_levels("disabled", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_DISABLED);
}

Test(log_env, numbers)
{
	expect_levels("-1", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_DISABLED);
	expect_levels("0", RPMA_LOG_LEVEL_WARNING, RPMA_LOG_LEVEL_FATAL);
	expect_levels("3", RPMA_LOG_LEVEL_NOTICE, RPMA_LOG_LEVEL_NOTICE);
	expect_levels("5", RPMA_LOG_LEVEL_DEBUG, RPMA_LOG_LEVEL_DEBUG);
}

Test(log_env, invalid_values_ignored_with_warning)
{
	const char *bad[] = {"6", "-2", "verbose", "3x", "99999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char out[256], err[4096];
		run_helper(bad[i], NULL, out, sizeof(out), err, sizeof(err));
		cr_assert_str_eq(out, "main=2 aux=2\n", "RPMA_LOG_LEVEL=%s", bad[i]);
		cr_assert(strstr(err, "RPMA_LOG_LEVEL") != NULL, "no warning for \"%s\": \"%s\"",
			  bad[i], err);
	}
}

Test(log_env, stderr_follows_the_variable)
{
	char out[256], err[4096];
	run_helper(NULL, "error", out, sizeof(out), err, sizeof(err));
	cr_assert(strstr(err, "rpma_peer_cfg_new") != NULL, "default: error on stderr: \"%s\"",
		  err);
	run_helper("disabled", "error", out, sizeof(out), err, sizeof(err));
	cr_assert_str_eq(err, "");
	run_helper("fatal", "error", out, sizeof(out), err, sizeof(err));
	cr_assert_str_eq(err, "");
}

/* ============================================================== peer_cfg */

UNIT_SUITE(peer_cfg);

Test(peer_cfg, new_cfg_ptr_NULL)
{
	cr_assert_eq(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 1);
}

Test(peer_cfg, default_is_false)
{
	struct rpma_peer_cfg *pcfg = NULL;
	bool dw = true;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw), 0);
	cr_assert_eq(dw, false);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	cr_assert_null(pcfg);
}

Test(peer_cfg, set_get)
{
	struct rpma_peer_cfg *pcfg = NULL;
	bool dw = false;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw), 0);
	cr_assert_eq(dw, true);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, false), 0);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw), 0);
	cr_assert_eq(dw, false);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
}

Test(peer_cfg, NULL_arguments)
{
	struct rpma_peer_cfg *pcfg = NULL;
	bool dw = true;
	size_t size = 77;
	uint8_t desc = 0x5a;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(NULL, true), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(NULL, &dw), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(NULL, &desc), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(NULL, &size), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(pcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(dw, true);
	cr_assert_eq(size, 77);
	cr_assert_eq(desc, 0x5a);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
}

Test(peer_cfg, delete_NULL)
{
	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	cr_assert_null(pcfg);
}

Test(peer_cfg, descriptor_bytes)
{
	struct rpma_peer_cfg *pcfg = NULL;
	size_t size = 0;
	uint8_t desc[2] = {0x77, 0x77};
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	cr_assert_eq(size, 1);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	cr_assert_eq(desc[0], 0x00);
	cr_assert_eq(desc[1], 0x77, "wrote beyond the descriptor");
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	/* bit 7: our region descriptors announce native flush (only beside bit 0) */
	cr_assert_eq(desc[0], 0x81);
	cr_assert_eq(desc[1], 0x77);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
}

Test(peer_cfg, from_descriptor_round_trip)
{
	const uint8_t bytes[] = {0x00, 0x01, 0x02, 0x80, 0xff};
	for (size_t i = 0; i < sizeof(bytes); i++) {
		struct rpma_peer_cfg *pcfg = NULL;
		bool dw = !bytes[i];
		cr_assert_eq(rpma_peer_cfg_from_descriptor(&bytes[i], 1, &pcfg), 0);
		cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw), 0);
		cr_assert_eq(dw, bytes[i] != 0, "byte %#x", bytes[i]);
		cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	}
}

Test(peer_cfg, from_descriptor_longer_is_accepted)
{
	const uint8_t desc[4] = {1, 0, 0, 0};
	struct rpma_peer_cfg *pcfg = NULL;
	bool dw = false;
	cr_assert_eq(rpma_peer_cfg_from_descriptor(desc, sizeof(desc), &pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw), 0);
	cr_assert(dw);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
}

Test(peer_cfg, from_descriptor_invalid)
{
	const uint8_t desc = 1;
	struct rpma_peer_cfg *pcfg = UNIT_POISON_PTR;
	cr_assert_eq(rpma_peer_cfg_from_descriptor(NULL, 1, &pcfg), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_from_descriptor(&desc, 0, &pcfg), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_from_descriptor(&desc, 1, NULL), RPMA_E_INVAL);
	cr_assert_eq(pcfg, UNIT_POISON_PTR);
}

/* ============================================================== conn_cfg */

UNIT_SUITE(conn_cfg);

Test(conn_cfg, new_cfg_ptr_NULL)
{
	cr_assert_eq(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
}

Test(conn_cfg, defaults)
{
	struct rpma_conn_cfg *cfg = NULL;
	int timeout = 0;
	uint32_t cq = 0, rcq = 7, sq = 0, rq = 0;
	bool shared = true;
	struct rpma_srq *srq = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, &timeout), 0);
	cr_assert_eq(timeout, RPMA_DEFAULT_TIMEOUT_MS);
	cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, &cq), 0);
	cr_assert_eq(cq, 10);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(cfg, &rcq), 0);
	cr_assert_eq(rcq, 0);
	cr_assert_eq(rpma_conn_cfg_get_sq_size(cfg, &sq), 0);
	cr_assert_eq(sq, 10);
	cr_assert_eq(rpma_conn_cfg_get_rq_size(cfg, &rq), 0);
	cr_assert_eq(rq, 10);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	cr_assert_eq(shared, false);
	cr_assert_eq(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	cr_assert_null(srq);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_null(cfg);
}

Test(conn_cfg, set_get_round_trip)
{
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	const uint32_t sizes[] = {0, 1, 12345, UINT32_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t v = 99;
		cr_assert_eq(rpma_conn_cfg_set_cq_size(cfg, sizes[i]), 0);
		cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, &v), 0);
		cr_assert_eq(v, sizes[i]);
		cr_assert_eq(rpma_conn_cfg_set_rcq_size(cfg, sizes[i]), 0);
		cr_assert_eq(rpma_conn_cfg_get_rcq_size(cfg, &v), 0);
		cr_assert_eq(v, sizes[i]);
		cr_assert_eq(rpma_conn_cfg_set_sq_size(cfg, sizes[i]), 0);
		cr_assert_eq(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
		cr_assert_eq(v, sizes[i]);
		cr_assert_eq(rpma_conn_cfg_set_rq_size(cfg, sizes[i]), 0);
		cr_assert_eq(rpma_conn_cfg_get_rq_size(cfg, &v), 0);
		cr_assert_eq(v, sizes[i]);
	}
	const int timeouts[] = {0, 1, 5000, 2147483647};
	for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		int v = -7;
		cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, timeouts[i]), 0);
		cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, &v), 0);
		cr_assert_eq(v, timeouts[i]);
	}
	bool shared = false;
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	cr_assert_eq(shared, true);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(cfg, false), 0);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	cr_assert_eq(shared, false);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(conn_cfg, timeout_negative)
{
	struct rpma_conn_cfg *cfg = NULL;
	int v = 0;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, -1), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, &v), 0);
	cr_assert_eq(v, RPMA_DEFAULT_TIMEOUT_MS);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(conn_cfg, NULL_arguments)
{
	struct rpma_conn_cfg *cfg = NULL;
	int timeout = -7;
	uint32_t v = 99;
	bool shared = true;
	struct rpma_srq *srq = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);

	cr_assert_eq(rpma_conn_cfg_set_timeout(NULL, 5), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_timeout(NULL, &timeout), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(NULL, 5), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_cq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(NULL, 5), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(NULL, 5), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_sq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_sq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_rq_size(NULL, 5), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(NULL, true), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(NULL, &shared), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_srq(NULL, UNIT_POISON_PTR), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_srq(NULL, &srq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_srq(cfg, NULL), RPMA_E_INVAL);

	cr_assert_eq(timeout, -7);
	cr_assert_eq(v, 99);
	cr_assert_eq(shared, true);
	cr_assert_eq(srq, UNIT_POISON_PTR);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(conn_cfg, delete_NULL)
{
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_null(cfg);
}

/* =============================================================== srq_cfg */

UNIT_SUITE(srq_cfg);

Test(srq_cfg, defaults)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t rq = 0, rcq = 0;
	cr_assert_eq(rpma_srq_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(cfg, &rq), 0);
	cr_assert_eq(rq, 20);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(cfg, &rcq), 0);
	cr_assert_eq(rcq, 20);
	cr_assert_eq(rpma_srq_cfg_delete(&cfg), 0);
	cr_assert_null(cfg);
}

Test(srq_cfg, set_get_round_trip)
{
	struct rpma_srq_cfg *cfg = NULL;
	cr_assert_eq(rpma_srq_cfg_new(&cfg), 0);
	const uint32_t sizes[] = {0, 1, 777, UINT32_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t v = 99;
		cr_assert_eq(rpma_srq_cfg_set_rq_size(cfg, sizes[i]), 0);
		cr_assert_eq(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
		cr_assert_eq(v, sizes[i]);
		cr_assert_eq(rpma_srq_cfg_set_rcq_size(cfg, sizes[i]), 0);
		cr_assert_eq(rpma_srq_cfg_get_rcq_size(cfg, &v), 0);
		cr_assert_eq(v, sizes[i]);
	}
	cr_assert_eq(rpma_srq_cfg_delete(&cfg), 0);
}

Test(srq_cfg, NULL_arguments)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v = 99;
	cr_assert_eq(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_srq_cfg_set_rq_size(NULL, 1), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_set_rcq_size(NULL, 1), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(v, 99);
	cr_assert_eq(rpma_srq_cfg_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_srq_cfg_delete(&cfg), 0);
	cr_assert_null(cfg);
}
