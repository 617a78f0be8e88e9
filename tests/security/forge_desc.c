/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * forge_desc.c -- attack: forged descriptors against a victim that hands out none
 *
 * The victim registers a 1 MiB region (WRITE_DST | FLUSH_TYPE_VISIBILITY)
 * filled with a pattern, accepts every connection request and sends no
 * descriptor.  The attacker, with the public API only, connects and forges
 * the 21-byte descriptor {address A, length 1 MiB, key k, usage WRITE_DST |
 * FLUSH_TYPE_VISIBILITY} with rpma_mr_remote_from_descriptor(), writes
 * "ROGUE!!!" at one offset of it and flushes (visibility).  A is 0 when the
 * attacker's own descriptors show offset addressing, else the victim's real
 * virtual address (an attacker who guessed it).  The offset is 0, 512 KiB or
 * 1 MiB - 8 (key % 3).  A refused access may end the connection (tcp: the
 * target closes it), so every key gets a connection of its own: each key is
 * tried exactly once.  SEC_PARALLEL attacker threads (default 4) do this
 * side by side.
 *
 * Keys tried: always 0..1023 (SEC_FIXED=n: 0..n-1) (where any counter-based key allocation lands
 * first), then keys of 1024..65535 in a random order (the seed is printed;
 * SEC_SEED repeats it) until SEC_SECONDS (default 20) have passed; with
 * SEC_FULL=1 every key of 0..65535, whatever the time.  The victim then
 * checks that not one byte of its region changed.
 *
 * Control: at the end the victim hands out its real descriptor to one
 * connection, whose write must land, so a test where no write can ever
 * arrive fails instead of passing.
 */

#include <pthread.h>
#include <stdatomic.h>

#include "sec.h"

#define REGION_SIZE (1u << 20)
#define FILL	    0x5a
#define KEY_SPACE   65536u

/* how many of the lowest keys are always tried (SEC_FIXED, default 1024) */
static unsigned FIXED_KEYS = 1024;
#define MAX_CONNS   64
#define CONTROL_OFF (256u * 1024u)
#define MAX_HITS    16
#define WAIT_MS	    5000

static const size_t offsets[3] = {0, REGION_SIZE / 2, REGION_SIZE - 8};

/* ------------------------------------------------------------- the victim */

struct victim {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr;
	char *mem;
	char port[8];
	char desc[32];
	size_t desc_size;
	_Atomic bool stop;
	_Atomic unsigned accepted;
	pthread_t thread;
};

/* victim_take_request -- accept a request (the control one gets the descriptor) */
static void victim_take_request(struct victim *v, struct rpma_conn **conns, int *nconns)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(v->ep, NULL, &req);
	if (ret) {
		fprintf(stdout, "victim: rpma_ep_next_conn_req: %s\n", rpma_err_2str(ret));
		return;
	}
	struct rpma_conn_private_data in = {0};
	(void)rpma_conn_req_get_private_data(req, &in);
	struct rpma_conn_private_data out = {v->desc, (uint8_t)v->desc_size};
	bool control = in.len == 7 && memcmp(in.ptr, "CONTROL", 7) == 0;
	struct rpma_conn *conn = NULL;
	if (*nconns >= MAX_CONNS) {
		(void)rpma_conn_req_delete(&req);
		return;
	}
	ret = rpma_conn_req_connect(&req, control ? &out : NULL, &conn);
	if (ret) {
		fprintf(stdout, "victim: rpma_conn_req_connect: %s\n", rpma_err_2str(ret));
		return;
	}
	atomic_fetch_add(&v->accepted, 1);
	conns[(*nconns)++] = conn;
}

/* victim_thread -- accept everything, take every connection's events, delete the ended ones */
static void *victim_thread(void *arg)
{
	struct victim *v = arg;
	struct rpma_conn *conns[MAX_CONNS];
	int nconns = 0, epfd = -1;
	SEC_CHECK(rpma_ep_get_fd(v->ep, &epfd) == 0, "rpma_ep_get_fd");
	while (!atomic_load(&v->stop) || nconns > 0) {
		struct pollfd pfd[MAX_CONNS + 1];
		pfd[0] = (struct pollfd){.fd = epfd, .events = POLLIN};
		for (int i = 0; i < nconns; i++) {
			int fd = -1;
			(void)rpma_conn_get_event_fd(conns[i], &fd);
			pfd[i + 1] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
		int n = poll(pfd, (nfds_t)nconns + 1, 50);
		if (n <= 0) {
			if (atomic_load(&v->stop) && n == 0) {
				/* stopping: close what is left */
				for (int i = 0; i < nconns; i++) {
					(void)rpma_conn_disconnect(conns[i]);
					(void)rpma_conn_delete(&conns[i]);
				}
				nconns = 0;
			}
			continue;
		}
		int polled = nconns; /* a connection taken now was not polled */
		for (int i = polled - 1; i >= 0; i--) {
			if (!(pfd[i + 1].revents & POLLIN))
				continue;
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			if (rpma_conn_next_event(conns[i], &ev) != 0 || ev == RPMA_CONN_ESTABLISHED)
				continue;
			(void)rpma_conn_disconnect(conns[i]);
			(void)rpma_conn_delete(&conns[i]);
			conns[i] = conns[--nconns];
		}
		if (pfd[0].revents & POLLIN)
			victim_take_request(v, conns, &nconns);
	}
	return NULL;
}

/* ----------------------------------------------------------- the attacker */

struct attacker {
	struct rpma_peer *peer;
	struct rpma_mr_local *src; /* "ROGUE!!!" and "CONTROL!" */
	char *src_mem;
	const char *port;
	uint64_t addr; /* the address field of the forged descriptors */
	uint32_t *keys;
	size_t nkeys;
	_Atomic size_t next;
	long long deadline_ms; /* 0: none */
	_Atomic size_t tried;
	_Atomic size_t refused;	   /* an error completion or a lost connection */
	_Atomic size_t hits;	   /* the attacker's flush succeeded */
	_Atomic size_t reconnects; /* connection attempts the victim's transport refused */
	uint32_t hit_keys[MAX_HITS];
	pthread_mutex_t lock;
};

/* put_le -- little-endian bytes of v */
static void put_le(char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (char)(v >> (8 * i));
}

/*
 * attacker_connect -- a connection to the victim (private data optional);
 * a refused or failed attempt is tried again (sockets refuses a few under
 * this churn)
 */
static struct rpma_conn *attacker_connect(struct attacker *a, const char *pdata)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	for (int attempt = 0; attempt < 50; attempt++) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		int ret = rpma_conn_req_new(a->peer, sec_ip(), a->port, NULL, &req);
		SEC_CHECK(ret == 0, "attacker: rpma_conn_req_new: %s", rpma_err_2str(ret));
		struct rpma_conn_private_data pd = {(void *)pdata,
						    pdata ? (uint8_t)strlen(pdata) : 0};
		ret = rpma_conn_req_connect(&req, pdata ? &pd : NULL, &conn);
		if (ret) {
			/* sockets' fi_connect() fails now and then under this churn */
			atomic_fetch_add(&a->reconnects, 1);
			usleep(10000);
			continue;
		}
		ev = sec_next_event(conn, WAIT_MS);
		if (ev == RPMA_CONN_ESTABLISHED)
			return conn;
		atomic_fetch_add(&a->reconnects, 1);
		(void)rpma_conn_delete(&conn);
		usleep(10000);
	}
	sec_fail("attacker: the victim did not accept 50 times in a row (%s)",
		 rpma_utils_conn_event_2str(ev));
}

/* attacker_close -- disconnect and delete, whatever state the connection is in */
static void attacker_close(struct rpma_conn **conn)
{
	(void)rpma_conn_disconnect(*conn);
	for (int i = 0; i < 4; i++) {
		enum rpma_conn_event ev = sec_next_event(*conn, 500);
		if (ev == RPMA_CONN_UNDEFINED || ev != RPMA_CONN_ESTABLISHED)
			break;
	}
	int ret = rpma_conn_delete(conn);
	SEC_CHECK(ret == 0 || *conn == NULL, "attacker: rpma_conn_delete: %s", rpma_err_2str(ret));
}

/*
 * attacker_write -- write 8 bytes of src at offset and flush; true when the
 * flush reported success (the attacker believes the write landed)
 */
static bool attacker_write(struct attacker *a, struct rpma_conn *conn, struct rpma_mr_remote *rmr,
			   size_t offset, size_t src_off)
{
	int ret =
		rpma_write(conn, rmr, offset, a->src, src_off, 8, RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret)
		return false;
	ret = rpma_flush(conn, rmr, offset, 8, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			 (void *)a);
	if (ret)
		return false;
	struct rpma_cq *cq = NULL;
	SEC_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "rpma_conn_get_cq");
	bool ok = false;
	long long until = sec_now_ms() + WAIT_MS;
	while (sec_now_ms() < until) {
		struct ibv_wc wc;
		int got = 0;
		ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			usleep(100);
			continue;
		}
		if (ret)
			break;
		if (wc.status != IBV_WC_SUCCESS)
			return false; /* the write or the flush was refused */
		if (wc.wr_id == (uint64_t)(uintptr_t)a) {
			ok = true;
			break;
		}
	}
	return ok;
}

/* attacker_thread -- take keys from the list until it or the time runs out */
static void *attacker_thread(void *arg)
{
	struct attacker *a = arg;
	for (;;) {
		if (a->deadline_ms && sec_now_ms() >= a->deadline_ms &&
		    atomic_load(&a->next) >= FIXED_KEYS)
			break;
		size_t i = atomic_fetch_add(&a->next, 1);
		if (i >= a->nkeys)
			break;
		uint32_t key = a->keys[i];
		char desc[21];
		put_le(desc, a->addr, 8);
		put_le(desc + 8, REGION_SIZE, 8);
		put_le(desc + 16, key, 4);
		desc[20] = (char)(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
		struct rpma_mr_remote *rmr = NULL;
		int ret = rpma_mr_remote_from_descriptor(desc, sizeof(desc), &rmr);
		SEC_CHECK(ret == 0, "rpma_mr_remote_from_descriptor: %s", rpma_err_2str(ret));
		struct rpma_conn *conn = attacker_connect(a, NULL);
		bool hit = attacker_write(a, conn, rmr, offsets[key % 3], 0);
		atomic_fetch_add(&a->tried, 1);
		if (hit) {
			size_t h = atomic_fetch_add(&a->hits, 1);
			if (h < MAX_HITS)
				a->hit_keys[h] = key;
		} else {
			atomic_fetch_add(&a->refused, 1);
		}
		attacker_close(&conn);
		(void)rpma_mr_remote_delete(&rmr);
	}
	return NULL;
}

/* env_num -- a numeric environment variable, or def */
static long env_num(const char *name, long def)
{
	const char *s = getenv(name);
	return (s && *s) ? strtol(s, NULL, 0) : def;
}

/* main -- victim and attacker in one process, each with its own peer */
int main(void)
{
	sec_quiet();
	long seconds = env_num("SEC_SECONDS", 20);
	bool full = env_num("SEC_FULL", 0) != 0;
	int parallel = (int)env_num("SEC_PARALLEL", 4);
	if (parallel < 1 || parallel > 32)
		parallel = 4;
	unsigned seed = (unsigned)env_num("SEC_SEED", (long)(time(NULL) ^ getpid()));
	long fixed = env_num("SEC_FIXED", 1024);
	if (fixed >= 1 && fixed <= (long)KEY_SPACE)
		FIXED_KEYS = (unsigned)fixed;

	/* the victim */
	struct victim v = {0};
	v.peer = sec_peer();
	SEC_CHECK(posix_memalign((void **)&v.mem, 4096, REGION_SIZE) == 0, "posix_memalign");
	memset(v.mem, FILL, REGION_SIZE);
	int ret = rpma_mr_reg(v.peer, v.mem, REGION_SIZE,
			      RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &v.mr);
	SEC_CHECK(ret == 0, "victim: rpma_mr_reg: %s", rpma_err_2str(ret));
	size_t dsize = 0;
	SEC_CHECK(rpma_mr_get_descriptor_size(v.mr, &dsize) == 0 && dsize <= 32, "desc size");
	v.desc_size = dsize;
	SEC_CHECK(rpma_mr_get_descriptor(v.mr, v.desc) == 0, "rpma_mr_get_descriptor");
	v.ep = sec_listen(v.peer, v.port);
	SEC_CHECK(pthread_create(&v.thread, NULL, victim_thread, &v) == 0, "pthread_create");

	/* the attacker: its own region tells how remote memory is addressed */
	struct attacker a = {0};
	a.peer = sec_peer();
	a.port = v.port;
	SEC_CHECK(posix_memalign((void **)&a.src_mem, 4096, 4096) == 0, "posix_memalign");
	memcpy(a.src_mem, "ROGUE!!!CONTROL!", 16);
	ret = rpma_mr_reg(a.peer, a.src_mem, 4096,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_WRITE_DST, &a.src);
	SEC_CHECK(ret == 0, "attacker: rpma_mr_reg: %s", rpma_err_2str(ret));
	char own[32];
	SEC_CHECK(rpma_mr_get_descriptor(a.src, own) == 0, "rpma_mr_get_descriptor");
	uint64_t own_addr = 0;
	for (int i = 7; i >= 0; i--)
		own_addr = (own_addr << 8) | (unsigned char)own[i];
	bool offset_addressing = own_addr == 0;
	a.addr = offset_addressing ? 0 : (uint64_t)(uintptr_t)v.mem;

	/* the keys: 0..1023 in order, then the rest of 0..65535 shuffled */
	a.nkeys = KEY_SPACE;
	a.keys = malloc(KEY_SPACE * sizeof(uint32_t));
	SEC_CHECK(a.keys != NULL, "malloc");
	for (uint32_t k = 0; k < KEY_SPACE; k++)
		a.keys[k] = k;
	srandom(seed);
	for (size_t i = KEY_SPACE - 1; i > FIXED_KEYS; i--) {
		size_t j = FIXED_KEYS + (size_t)random() % (i - FIXED_KEYS + 1);
		uint32_t t = a.keys[i];
		a.keys[i] = a.keys[j];
		a.keys[j] = t;
	}
	pthread_mutex_init(&a.lock, NULL);
	long long start = sec_now_ms();
	a.deadline_ms = full ? 0 : start + seconds * 1000;

	pthread_t th[32];
	for (int i = 0; i < parallel; i++)
		SEC_CHECK(pthread_create(&th[i], NULL, attacker_thread, &a) == 0, "pthread_create");
	for (int i = 0; i < parallel; i++)
		pthread_join(th[i], NULL);
	long long took = sec_now_ms() - start;

	/* the control: the real descriptor, handed out, must work */
	struct rpma_conn *conn = attacker_connect(&a, "CONTROL");
	struct rpma_conn_private_data pd = {0};
	SEC_CHECK(rpma_conn_get_private_data(conn, &pd) == 0 && pd.len >= 21,
		  "control: no descriptor in the victim's private data");
	struct rpma_mr_remote *rmr = NULL;
	ret = rpma_mr_remote_from_descriptor(pd.ptr, pd.len, &rmr);
	SEC_CHECK(ret == 0, "control: rpma_mr_remote_from_descriptor: %s", rpma_err_2str(ret));
	bool control_ok = attacker_write(&a, conn, rmr, CONTROL_OFF, 8);
	attacker_close(&conn);
	(void)rpma_mr_remote_delete(&rmr);

	atomic_store(&v.stop, true);
	pthread_join(v.thread, NULL);

	/* the victim looks at its memory */
	size_t changed = 0, first_changed = 0;
	int rogue = 0;
	for (size_t i = 0; i < REGION_SIZE; i++) {
		if (i >= CONTROL_OFF && i < CONTROL_OFF + 8)
			continue;
		if ((unsigned char)v.mem[i] != FILL) {
			if (changed++ == 0)
				first_changed = i;
		}
	}
	for (int o = 0; o < 3; o++)
		rogue += memcmp(v.mem + offsets[o], "ROGUE!!!", 8) == 0;
	bool control_landed = memcmp(v.mem + CONTROL_OFF, "CONTROL!", 8) == 0;

	size_t tried = atomic_load(&a.tried);
	size_t random_tried = tried > FIXED_KEYS ? tried - FIXED_KEYS : 0;
	printf("forge_desc: %s addressing, forged address 0x%llx, %d attacker threads\n",
	       offset_addressing ? "offset" : "virtual", (unsigned long long)a.addr, parallel);
	printf("forge_desc: keys tried: %zu in %lld ms (%.0f/s): 0..%u all, plus %zu of "
	       "%u..%u in random order (seed %u)%s\n",
	       tried, took, took ? tried * 1000.0 / (double)took : 0.0,
	       (unsigned)(tried < FIXED_KEYS ? tried : FIXED_KEYS) - 1, random_tried, FIXED_KEYS,
	       KEY_SPACE - 1, seed, full ? " (SEC_FULL)" : "");
	printf("forge_desc: victim accepted %u connections (%zu more attempts refused and "
	       "repeated); attacker's flush refused or connection lost: %zu, succeeded: %zu\n",
	       atomic_load(&v.accepted), atomic_load(&a.reconnects), atomic_load(&a.refused),
	       atomic_load(&a.hits));
	for (size_t h = 0; h < atomic_load(&a.hits) && h < MAX_HITS; h++)
		printf("forge_desc: ATTACKER: the flush after the write with key %u (0x%x) at "
		       "offset %zu succeeded\n",
		       a.hit_keys[h], a.hit_keys[h], offsets[a.hit_keys[h] % 3]);
	if (changed)
		printf("forge_desc: VICTIM: %zu bytes of the region changed, the first at offset "
		       "%zu; \"ROGUE!!!\" found at %d of the 3 target offsets\n",
		       changed, first_changed, rogue);
	printf("forge_desc: control write with the real descriptor: flush %s, bytes %s\n",
	       control_ok ? "succeeded" : "FAILED", control_landed ? "landed" : "MISSING");

	(void)rpma_mr_dereg(&a.src);
	(void)rpma_mr_dereg(&v.mr);
	(void)rpma_ep_shutdown(&v.ep);
	(void)rpma_peer_delete(&a.peer);
	(void)rpma_peer_delete(&v.peer);
	free(a.keys);
	free(a.src_mem);

	SEC_CHECK(tried >= FIXED_KEYS, "only %zu keys tried (the first %u must be)", tried,
		  FIXED_KEYS);
	SEC_CHECK(control_ok && control_landed, "the control write did not land: the test "
						"cannot tell a refused write from a lost one");
	SEC_CHECK(changed == 0 && atomic_load(&a.hits) == 0,
		  "forged descriptors reached the victim's memory");
	free(v.mem);
	printf("PASS: forge_desc\n");
	return 0;
}
