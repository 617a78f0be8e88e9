/* SPDX-License-Identifier: BSD-3-Clause */
/* tsan_criterion.c -- lets Criterion's shared arena start where ThreadSanitizer allows mappings */

/*
 * Criterion (through BoxFort) maps the arena it shares with its test workers
 * at a random fixed address between 0x2000_0000_0000 and 0x6000_0000_0000,
 * drawn with rand_r().  Under ThreadSanitizer most of that range is shadow
 * memory or forbidden, so the MAP_FIXED mapping fails and the runner aborts
 * ("Could not initialize inheritable arena", Criterion issue #274).  Linked
 * into the test programs of a ThreadSanitizer build only, this rand_r()
 * answers calls made from libcriterion with numbers that put the arena
 * inside the application range ThreadSanitizer keeps for position
 * independent executables (0x5500_0000_0000 - 0x5680_0000_0000); every other
 * caller gets the C library's rand_r().
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* BoxFort: base = 0x200000000000 + r * 16 MiB; r in 0x360000..0x367fff is 0x5600_0000_0000 and up */
#define ARENA_R_BASE 0x360000u
#define ARENA_R_MASK 0x7fffu

int rand_r(unsigned int *seed);

/* the C library's rand_r(), found before any thread starts */
static int (*real_rand_r)(unsigned int *);

/* tsan_criterion_init -- find the C library's rand_r() */
__attribute__((constructor)) static void tsan_criterion_init(void)
{
	real_rand_r = (int (*)(unsigned int *))dlsym(RTLD_NEXT, "rand_r");
}

/* rand_r -- the C library's, except for Criterion (see above) */
int rand_r(unsigned int *seed)
{
	Dl_info info;
	if (dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
	    strstr(info.dli_fname, "libcriterion") != NULL) {
		*seed = *seed * 1103515245u + 12345u;
		return (int)(ARENA_R_BASE + ((*seed >> 8) & ARENA_R_MASK));
	}
	return real_rand_r(seed);
}
