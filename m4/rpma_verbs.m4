# SPDX-License-Identifier: BSD-3-Clause
# rpma_verbs.m4 -- configure the verbs provider (libibverbs + librdmacm)
#
# Sets rpma_have_verbs=yes|no, AM_CONDITIONAL HAVE_VERBS, RPMA_HAVE_VERBS in
# config.h (seen only by the provider registry) and VERBS_FEATURE_CPPFLAGS:
# the results of feature probes, passed only to providers/verbs/ sources.
AC_DEFUN([RPMA_CHECK_VERBS], [
AC_ARG_ENABLE([verbs],
	[AS_HELP_STRING([--enable-verbs@<:@=yes|no|auto@:>@], [build the verbs provider (default: auto)])],
	[], [enable_verbs=auto])
rpma_have_verbs=no
AS_IF([test "x$enable_verbs" != xno], [
	PKG_CHECK_MODULES([VERBS], [libibverbs librdmacm], [rpma_have_verbs=yes], [rpma_have_verbs=no])
	AS_IF([test "x$enable_verbs" = xyes && test "x$rpma_have_verbs" != xyes],
		[AC_MSG_ERROR([--enable-verbs: libibverbs and librdmacm not found by pkg-config (install libibverbs-dev librdmacm-dev)])])
])
VERBS_FEATURE_CPPFLAGS=""
AS_IF([test "x$rpma_have_verbs" = xyes], [
	AC_DEFINE([RPMA_HAVE_VERBS], [1], [the verbs provider is built])
	save_CFLAGS=$CFLAGS
	CFLAGS="$CFLAGS $VERBS_CFLAGS"
	# native atomic write (rdma-core >= 45)
	AC_CHECK_DECLS([IBV_QP_EX_WITH_ATOMIC_WRITE, IB_UVERBS_DEVICE_ATOMIC_WRITE, ibv_wr_atomic_write],
		[], [], [[#include <infiniband/verbs.h>]])
	AS_IF([test "x$ac_cv_have_decl_IBV_QP_EX_WITH_ATOMIC_WRITE" = xyes &&
	       test "x$ac_cv_have_decl_IB_UVERBS_DEVICE_ATOMIC_WRITE" = xyes &&
	       test "x$ac_cv_have_decl_ibv_wr_atomic_write" = xyes],
		[VERBS_FEATURE_CPPFLAGS="$VERBS_FEATURE_CPPFLAGS -DVERBS_NATIVE_ATOMIC_WRITE=1"])
	# native flush (rdma-core >= 45)
	AC_CHECK_DECLS([IBV_QP_EX_WITH_FLUSH, IBV_ACCESS_FLUSH_GLOBAL, IB_UVERBS_DEVICE_FLUSH_PERSISTENT, ibv_wr_flush],
		[], [], [[#include <infiniband/verbs.h>]])
	AS_IF([test "x$ac_cv_have_decl_IBV_QP_EX_WITH_FLUSH" = xyes &&
	       test "x$ac_cv_have_decl_IBV_ACCESS_FLUSH_GLOBAL" = xyes &&
	       test "x$ac_cv_have_decl_IB_UVERBS_DEVICE_FLUSH_PERSISTENT" = xyes &&
	       test "x$ac_cv_have_decl_ibv_wr_flush" = xyes],
		[VERBS_FEATURE_CPPFLAGS="$VERBS_FEATURE_CPPFLAGS -DVERBS_NATIVE_FLUSH=1"])
	# ibv_advise_mr (rdma-core >= 25)
	AC_CHECK_DECLS([ibv_advise_mr, IBV_ACCESS_ON_DEMAND], [], [], [[#include <infiniband/verbs.h>]])
	AS_IF([test "x$ac_cv_have_decl_ibv_advise_mr" = xyes],
		[VERBS_FEATURE_CPPFLAGS="$VERBS_FEATURE_CPPFLAGS -DVERBS_HAVE_ADVISE_MR=1"])
	AS_IF([test "x$ac_cv_have_decl_IBV_ACCESS_ON_DEMAND" = xyes],
		[VERBS_FEATURE_CPPFLAGS="$VERBS_FEATURE_CPPFLAGS -DVERBS_HAVE_ODP=1"])
	CFLAGS=$save_CFLAGS
])
AC_SUBST([VERBS_FEATURE_CPPFLAGS])
AM_CONDITIONAL([HAVE_VERBS], [test "x$rpma_have_verbs" = xyes])
])
